import ATT
import BluetoothCore
import Foundation
import GATT
import HCI
import L2CAP
import Testing
import VirtualController

/// Builds a datalink-1002 btsnoop file in memory, packet by packet; directions are the host's.
struct Recording {
    private var records: [(received: Bool, packet: [UInt8])] = []

    /// An HCI event from the controller.
    mutating func event(_ event: HCIEventPacket) {
        records.append((true, HCIPacket.event(event).encodeH4()))
    }

    /// A raw event from the controller.
    mutating func event(_ code: UInt8, _ parameters: [UInt8]) {
        event(HCIEventPacket(code: code, parameters: parameters[...]))
    }

    /// A successful LE Connection Complete to `address` (random).
    mutating func connect(_ handle: ConnectionHandle, _ address: String, type: UInt8 = 0x01, enhanced: Bool = false) {
        let peer = BluetoothAddress(address)!
        let parameters = LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)
        if enhanced {
            let zero = BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0])
            event(
                LEEnhancedConnectionComplete(
                    status: .success, handle: handle, role: 0, peerAddressType: type, peerAddress: peer,
                    localResolvablePrivateAddress: zero, peerResolvablePrivateAddress: zero,
                    parameters: parameters, centralClockAccuracy: 0
                ).meta.packet)
        } else {
            event(
                LEConnectionComplete(
                    status: .success, handle: handle, role: 0, peerAddressType: type, peerAddress: peer,
                    parameters: parameters, centralClockAccuracy: 0
                ).meta.packet)
        }
    }

    /// Disconnection Complete.
    mutating func disconnect(_ handle: ConnectionHandle) {
        event(DisconnectionComplete(status: .success, handle: handle, reason: HCIStatus(rawValue: 0x13)).packet)
    }

    /// Encryption Change v1, on.
    mutating func encrypt(_ handle: ConnectionHandle) {
        event(EncryptionChange.codeV1, [0x00, UInt8(handle.rawValue & 0xFF), UInt8(handle.rawValue >> 8), 0x01])
    }

    /// One legacy advertising report.
    mutating func advertise(_ address: String, _ data: [UInt8], scanResponse: Bool = false) {
        let report = AdvertisingReport(
            connectable: !scanResponse, scannable: true, directed: false, isScanResponse: scanResponse,
            legacy: true, addressType: .random, address: BluetoothAddress(address)!, rssi: -50, data: data)
        event(AdvertisingReport.encode([report], extended: false).packet)
    }

    /// Raw ACL data.
    mutating func acl(_ handle: ConnectionHandle, _ data: [UInt8], received: Bool, start: Bool = true) {
        let packet = ACLDataPacket(
            handle: handle, boundary: start ? (received ? .firstFlushable : .firstNonFlushable) : .continuing,
            data: data[...])
        records.append((received, HCIPacket.acl(packet).encodeH4()))
    }

    /// An L2CAP frame on `cid`, in one ACL packet.
    mutating func l2cap(_ handle: ConnectionHandle, cid: UInt16, _ payload: [UInt8], received: Bool) {
        acl(
            handle, BasicFrame(channel: ChannelIdentifier(rawValue: cid), payload: payload[...]).encoded(),
            received: received)
    }

    /// An ATT PDU the host sent.
    mutating func sent(_ pdu: some ATTPDU, on handle: ConnectionHandle = 0x0040) {
        l2cap(handle, cid: 0x0004, pdu.encoded(), received: false)
    }

    /// An ATT PDU the peer sent.
    mutating func received(_ pdu: some ATTPDU, on handle: ConnectionHandle = 0x0040) {
        l2cap(handle, cid: 0x0004, pdu.encoded(), received: true)
    }

    /// The file's bytes.
    var bytes: [UInt8] {
        var writer = ByteWriter(prefix: BTSnoop.magic)
        writer.writeBigEndian(UInt32(1))
        writer.writeBigEndian(UInt32(1002))
        for (index, record) in records.enumerated() {
            writer.writeBigEndian(UInt32(record.packet.count))
            writer.writeBigEndian(UInt32(record.packet.count))
            writer.writeBigEndian(UInt32(record.received ? 1 : 0) | (record.packet.first == 0x04 ? 2 : 0))
            writer.writeBigEndian(UInt32(0))
            writer.writeBigEndian(BTSnoop.epochOffsetMicroseconds + 1_704_067_200_000_000 + Int64(index) * 1000)
            writer.write(bytes: record.packet)
        }
        return writer.bytes
    }

    /// The reconstruction of the file.
    func reconstruction() throws -> TraceReconstruction {
        TraceReconstruction(file: try BTSnoopFile(bytes: bytes))
    }
}

let sensor = "C1:22:33:44:55:66"

/// A 16-bit UUID.
func uuid16(_ value: UInt16) -> BluetoothUUID { BluetoothUUID(value) }

/// A heart-rate sensor session: advertising, discovery, long and refused reads, writes,
/// notifications before and after writes, a prepared write, and the host's own server asked.
func heartRateSession() -> Recording {
    var recording = Recording()
    recording.advertise(sensor, [0x02, 0x01, 0x06, 0x04, 0x09] + Array("HRM".utf8))
    recording.advertise(sensor, [0x03, 0x03, 0x0D, 0x18], scanResponse: true)
    recording.advertise("D0:00:00:00:00:01", [0x02, 0x01, 0x06])
    recording.connect(0x0040, sensor)
    recording.sent(ExchangeMTURequest(clientRxMTU: 247))
    recording.received(ExchangeMTUResponse(serverRxMTU: 185))
    // Services.
    recording.sent(ReadByGroupTypeRequest(startingHandle: 0x0001, endingHandle: 0xFFFF, groupType: uuid16(0x2800)))
    recording.received(
        ReadByGroupTypeResponse(entries: [
            .init(handle: 0x0001, endGroupHandle: 0x0005, value: [0x00, 0x18]),
            .init(handle: 0x0010, endGroupHandle: 0x0016, value: [0x0D, 0x18]),
        ]))
    recording.sent(ReadByGroupTypeRequest(startingHandle: 0x0017, endingHandle: 0xFFFF, groupType: uuid16(0x2800)))
    recording.received(ErrorResponse(requestOpcode: .readByGroupTypeRequest, handle: 0x0017, error: .attributeNotFound))
    // Characteristics.
    recording.sent(ReadByTypeRequest(startingHandle: 0x0001, endingHandle: 0x0005, attributeType: uuid16(0x2803)))
    recording.received(ReadByTypeResponse(entries: [.init(handle: 0x0002, value: [0x02, 0x03, 0x00, 0x00, 0x2A])]))
    recording.sent(ReadByTypeRequest(startingHandle: 0x0010, endingHandle: 0x0016, attributeType: uuid16(0x2803)))
    recording.received(
        ReadByTypeResponse(entries: [
            .init(handle: 0x0011, value: [0x10, 0x12, 0x00, 0x37, 0x2A]),
            .init(handle: 0x0014, value: [0x0A, 0x15, 0x00, 0x39, 0x2A]),
        ]))
    recording.sent(FindInformationRequest(startingHandle: 0x0013, endingHandle: 0x0013))
    recording.received(FindInformationResponse(entries: [.init(handle: 0x0013, type: uuid16(0x2902))]))
    // A long read: Read, then Read Blob from where it stopped.
    recording.sent(ReadRequest(handle: 0x0003))
    recording.received(ReadResponse(value: Array("Heart".utf8)[...]))
    recording.sent(ReadBlobRequest(handle: 0x0003, offset: 5))
    recording.received(ReadBlobResponse(value: Array(" Rate Sensor".utf8)[...]))
    // A refused read, answered once the link is encrypted.
    recording.sent(ReadRequest(handle: 0x0015))
    recording.received(ErrorResponse(requestOpcode: .readRequest, handle: 0x0015, error: .insufficientEncryption))
    recording.encrypt(0x0040)
    recording.sent(ReadRequest(handle: 0x0015))
    recording.received(ReadResponse(value: [0x01]))
    // A notification before any write: the capture missed the subscription.
    recording.received(HandleValueNotification(handle: 0x0012, value: [0x00, 60]))
    // The peer asks the host's own server: none of the peer's business here.
    recording.received(ReadByGroupTypeRequest(startingHandle: 0x0001, endingHandle: 0xFFFF, groupType: uuid16(0x2800)))
    recording.sent(
        ReadByGroupTypeResponse(entries: [.init(handle: 0x0001, endGroupHandle: 0x0009, value: [0x01, 0x18])]))
    // Subscribe, then notifications.
    recording.sent(WriteRequest(handle: 0x0013, value: [0x01, 0x00]))
    recording.received(WriteResponse())
    recording.received(HandleValueNotification(handle: 0x0012, value: [0x00, 61]))
    recording.received(HandleValueNotification(handle: 0x0012, value: [0x00, 62]))
    recording.sent(WriteCommand(handle: 0x0015, value: [0x02]))
    recording.received(HandleValueIndication(handle: 0x0012, value: [0x00, 63]))
    recording.sent(HandleValueConfirmation())
    // A prepared write executed, then one cancelled.
    recording.sent(PrepareWriteRequest(handle: 0x0015, offset: 0, value: [0x01, 0x02]))
    recording.received(PrepareWriteResponse(handle: 0x0015, offset: 0, value: [0x01, 0x02]))
    recording.sent(PrepareWriteRequest(handle: 0x0015, offset: 2, value: [0x03]))
    recording.received(PrepareWriteResponse(handle: 0x0015, offset: 2, value: [0x03]))
    recording.sent(ExecuteWriteRequest(flags: .write))
    recording.received(ExecuteWriteResponse())
    recording.sent(PrepareWriteRequest(handle: 0x0015, offset: 0, value: [0x09]))
    recording.received(PrepareWriteResponse(handle: 0x0015, offset: 0, value: [0x09]))
    recording.sent(ExecuteWriteRequest(flags: .cancel))
    recording.received(ExecuteWriteResponse())
    // Broken things: a response nobody asked for, a truncated PDU, an unknown opcode.
    recording.received(ReadResponse(value: [0xEE]))
    recording.sent(ReadRequest(handle: 0x0003))
    recording.l2cap(0x0040, cid: 0x0004, [0x0B], received: true)  // a Read Response may be empty: that one is fine
    recording.sent(ReadByTypeRequest(startingHandle: 0x0001, endingHandle: 0xFFFF, attributeType: uuid16(0x2A00)))
    recording.l2cap(0x0040, cid: 0x0004, [0x09, 0x07, 0x03], received: true)
    recording.l2cap(0x0040, cid: 0x0004, [0x7F, 0x01], received: true)
    recording.disconnect(0x0040)
    // A second connection to the same sensor: a blob read at offset 0 starts the value over.
    recording.connect(0x0041, sensor, enhanced: true)
    recording.sent(ReadBlobRequest(handle: 0x0003, offset: 0), on: 0x0041)
    recording.received(ReadBlobResponse(value: Array("Hi".utf8)[...]), on: 0x0041)
    recording.received(HandleValueNotification(handle: 0x0012, value: [0x00, 70]), on: 0x0041)
    return recording
}

@Suite struct ReconstructionTests {
    @Test func rebuildsTheSessionsPeer() throws {
        let reconstruction = try heartRateSession().reconstruction()
        #expect(reconstruction.peripherals.count == 1)
        #expect(reconstruction.advertisersNotConnected == 1)
        let peer = try #require(reconstruction.peripherals.first)
        #expect(peer.address == BluetoothAddress(sensor)!)
        #expect(peer.addressType == .random)
        #expect(!peer.addressIsMadeUp)
        let handles: [ConnectionHandle] = [0x0040, 0x0041]
        #expect(peer.connectionHandles == handles)
        let advertisingData: [UInt8] = [0x02, 0x01, 0x06, 0x04, 0x09] + Array("HRM".utf8)
        #expect(peer.advertisingData == advertisingData)
        let scanResponse: [UInt8] = [0x03, 0x03, 0x0D, 0x18]
        #expect(peer.scanResponseData == scanResponse)
        #expect(peer.name == "HRM")
        #expect(peer.mtu == 185)
        // The host's own server's answer names a service at 0x0001 ending at 0x0009: ignored.
        let genericAccess = RecordedAttribute(
            handle: 0x0001, type: uuid16(0x2800), value: [0x00, 0x18], groupEndHandle: 0x0005)
        #expect(peer.attribute(at: 0x0001) == genericAccess)
        let declaration: [UInt8] = [0x10, 0x12, 0x00, 0x37, 0x2A]
        #expect(peer.attribute(at: 0x0011)?.value == declaration)
        #expect(peer.attribute(at: 0x0012)?.type == uuid16(0x2A37))
        #expect(peer.attribute(at: 0x0013)?.type == uuid16(0x2902))
        let subscribed: [UInt8] = [0x01, 0x00]
        #expect(peer.attribute(at: 0x0013)?.value == subscribed)
        // Long value, restarted by the blob read at offset 0 of the second connection.
        let longValue: [UInt8] = Array("Hi".utf8)
        #expect(peer.attribute(at: 0x0003)?.value == longValue)
        // The executed prepared write; the cancelled one left no trace.
        let executed: [UInt8] = [0x01, 0x02, 0x03]
        #expect(peer.attribute(at: 0x0015)?.value == executed)
        #expect(peer.attribute(at: 0x0015)?.requiresEncryption == true)
        let lastNotified: [UInt8] = [0x00, 70]
        #expect(peer.attribute(at: 0x0012)?.value == lastNotified)
        let errors: [RecordedError] = [
            RecordedError(request: .readByGroupTypeRequest, handle: 0x0017, code: .attributeNotFound, encrypted: false),
            RecordedError(
                request: .readRequest, handle: 0x0015, code: .insufficientEncryption, encrypted: false, overridden: true
            ),
        ]
        #expect(peer.errors == errors)
        let reactions: [RecordedReaction] = [
            RecordedReaction(
                trigger: .subscription(handle: 0x0012),
                notifications: [RecordedNotification(handle: 0x0012, value: [0x00, 60], isIndication: false)]),
            RecordedReaction(
                trigger: .write(handle: 0x0013, value: [0x01, 0x00]),
                notifications: [
                    RecordedNotification(handle: 0x0012, value: [0x00, 61], isIndication: false),
                    RecordedNotification(handle: 0x0012, value: [0x00, 62], isIndication: false),
                ]),
            RecordedReaction(
                trigger: .write(handle: 0x0015, value: [0x02]),
                notifications: [RecordedNotification(handle: 0x0012, value: [0x00, 63], isIndication: true)]),
            RecordedReaction(trigger: .write(handle: 0x0015, value: [0x01, 0x02, 0x03]), notifications: []),
            // The second connection has had no write yet.
            RecordedReaction(
                trigger: .subscription(handle: 0x0012),
                notifications: [RecordedNotification(handle: 0x0012, value: [0x00, 70], isIndication: false)]),
        ]
        #expect(peer.reactions == reactions)
    }

    @Test func groupsServicesCharacteristicsAndDescriptors() throws {
        let peer = try #require(try heartRateSession().reconstruction().peripherals.first)
        let services = peer.services
        let serviceUUIDs: [BluetoothUUID] = [uuid16(0x1800), uuid16(0x180D)]
        #expect(services.map(\.uuid) == serviceUUIDs)
        let endHandles: [AttributeHandle] = [0x0005, 0x0016]
        #expect(services.map(\.endHandle) == endHandles)
        #expect(services.map(\.isPrimary) == [true, true])
        let heartRate = services[1].characteristics
        let characteristicUUIDs: [BluetoothUUID] = [uuid16(0x2A37), uuid16(0x2A39)]
        #expect(heartRate.map(\.uuid) == characteristicUUIDs)
        let valueHandles: [AttributeHandle] = [0x0012, 0x0015]
        #expect(heartRate.map(\.valueHandle) == valueHandles)
        #expect(heartRate[0].properties == .notify)
        let descriptorHandles: [AttributeHandle] = [0x0013]
        #expect(heartRate[0].descriptors.map(\.handle) == descriptorHandles)
        #expect(heartRate[1].descriptors.isEmpty)
        let deviceName: [UInt8] = Array("Hi".utf8)
        #expect(services[0].characteristics.first?.value == deviceName)
        #expect(peer.undiscoveredAttributes.isEmpty)
        #expect(peer.missing == [])
    }

    @Test func aHandleWithoutConnectionEventGetsAMadeUpStableAddress() throws {
        var recording = Recording()
        recording.received(HandleValueNotification(handle: 0x0020, value: [0x05]), on: 0x0050)
        recording.sent(WriteCommand(handle: 0x0021, value: [0x01]), on: 0x0050)
        recording.received(HandleValueNotification(handle: 0x0020, value: [0x06]), on: 0x0050)
        // A BR/EDR link and a vendor debug handle carry no peer.
        recording.event(0x03, [0x00, 0x60, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x01, 0x00])
        recording.received(HandleValueNotification(handle: 0x0001, value: [0x01]), on: 0x0060)
        recording.l2cap(0x0EDC, cid: 0x1234, [0x1B, 0x01, 0x00, 0x02], received: true)
        recording.acl(0x0EDC, [0xDE, 0xAD], received: true)
        let first = try recording.reconstruction()
        #expect(first.peripherals.count == 1)
        let peer = try #require(first.peripherals.first)
        #expect(peer.addressIsMadeUp)
        #expect(peer.addressType == .random)
        #expect(peer.address.bytes[5] & 0xC0 == 0xC0)
        let handles: [ConnectionHandle] = [0x0050]
        #expect(peer.connectionHandles == handles)
        // Notified 05 first, then 06: a client found 05 first, the last seen is 06.
        let attributes: [RecordedAttribute] = [
            RecordedAttribute(handle: 0x0020, type: nil, value: [0x06], initialValue: [0x05]),
            RecordedAttribute(handle: 0x0021, type: nil, value: [0x01]),
        ]
        #expect(peer.attributes == attributes)
        let triggers: [RecordedReaction.Trigger] = [
            .subscription(handle: 0x0020), .write(handle: 0x0021, value: [0x01]),
        ]
        #expect(peer.reactions.map(\.trigger) == triggers)
        #expect(
            peer.missing.contains("address not in the recording (made up): the connection began before the capture"))
        #expect(peer.missing.contains("handles known only from use, never discovered: 0x0020, 0x0021"))
        #expect(peer.missing.contains("no advertising data recorded"))
        #expect(peer.missing.contains { $0.hasPrefix("ATT_MTU not recorded") })
        // Stable: the same recording gives the same address; another recording another.
        #expect(try recording.reconstruction().peripherals.first?.address == peer.address)
        var other = recording
        other.received(HandleValueNotification(handle: 0x0020, value: [0x07]), on: 0x0050)
        #expect(try other.reconstruction().peripherals.first?.address != peer.address)
    }

    @Test func errorsNeedingEncryptionMarkTheAttributeUnlessAnsweredUnencrypted() throws {
        var recording = Recording()
        recording.connect(0x0040, sensor)
        recording.sent(WriteRequest(handle: 0x0030, value: [0x01]))
        recording.received(
            ErrorResponse(requestOpcode: .writeRequest, handle: 0x0030, error: .insufficientAuthentication))
        recording.sent(ReadRequest(handle: 0x0031))
        recording.received(
            ErrorResponse(requestOpcode: .readRequest, handle: 0x0031, error: .encryptionKeySizeTooShort))
        recording.sent(ReadRequest(handle: 0x0031))
        recording.received(ReadResponse(value: [0x42]))
        recording.sent(ReadRequest(handle: 0x0032))
        recording.received(ErrorResponse(requestOpcode: .readRequest, handle: 0x0032, error: .readNotPermitted))
        let peer = try #require(try recording.reconstruction().peripherals.first)
        #expect(peer.attribute(at: 0x0030) == RecordedAttribute(handle: 0x0030, type: nil, requiresEncryption: true))
        #expect(peer.attribute(at: 0x0031) == RecordedAttribute(handle: 0x0031, type: nil, value: [0x42]))
        #expect(peer.attribute(at: 0x0032) == RecordedAttribute(handle: 0x0032, type: nil))
        #expect(peer.errors.map(\.overridden) == [false, true, false])
        #expect(
            peer.errors.map(\.code) == [.insufficientAuthentication, .encryptionKeySizeTooShort, .readNotPermitted])
    }

    @Test func readsMultipleValuesOnlyWhereTheySplit() throws {
        var recording = Recording()
        recording.connect(0x0040, sensor)
        recording.sent(ReadMultipleVariableRequest(handles: [0x0003, 0x0005]))
        recording.received(ReadMultipleVariableResponse(entries: [.init(value: [0x01, 0x02]), .init(value: [0x03])]))
        recording.sent(ReadMultipleRequest(handles: [0x0007]))
        recording.received(ReadMultipleResponse(values: [0x07, 0x07]))
        recording.sent(ReadMultipleRequest(handles: [0x0008, 0x0009]))
        recording.received(ReadMultipleResponse(values: [0x08, 0x09]))
        let peer = try #require(try recording.reconstruction().peripherals.first)
        #expect(peer.attributes.map(\.handle) == [0x0003, 0x0005, 0x0007])
        #expect(peer.attributes.map(\.value) == [[0x01, 0x02], [0x03], [0x07, 0x07]])
    }

    @Test func aRecordingCutOffMidPDUIsReadUpToThere() throws {
        var recording = heartRateSession()
        recording.connect(0x0042, "C1:00:00:00:00:09")
        // An L2CAP frame announcing 20 octets that never all come, then the file ends inside a record.
        recording.acl(0x0042, [20, 0, 0x04, 0x00, 0x1B, 0x12, 0x00], received: true)
        var bytes = recording.bytes
        bytes += [0x00, 0x00, 0x00, 0x10, 0x00]
        let file = try BTSnoopFile(bytes: bytes)
        #expect(file.truncatedTail != nil)
        let reconstruction = TraceReconstruction(file: file)
        #expect(reconstruction.peripherals.count == 2)
        #expect(reconstruction.peripherals[1].attributes.isEmpty)
        #expect(reconstruction.peripherals[1].missing.contains("no ATT traffic recorded: the GATT database is unknown"))
    }

    @Test func aBadFileIsAReadableError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("recon-\(getpid()).btsnoop").path
        try Data("not a capture at all".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: TraceReconstructionError.self) { try TraceReconstruction(path: path) }
        do {
            _ = try TraceReconstruction(path: path)
        } catch {
            #expect(error.description.hasPrefix("\(path): not a btsnoop file"))
        }
        do {
            _ = try TraceReconstruction(path: path + ".absent")
        } catch {
            #expect(error.description.contains("cannot read \(path).absent"))
        }
    }
}
