import ATT
import BluetoothCore
import GATT
import HCI
import TraceDecoding
import L2CAP

/// The peers a btsnoop recording shows, rebuilt from what went over the air: each LE peer
/// the recording host connected to (``RecordedPeripheral``), with its GATT database, values,
/// errors and notifications, as far as the recording shows them.
///
/// The rules (Core 6.0, Vol 3, Part F for ATT and Part G for GATT), the same for any recording:
///
/// - Records are walked in order. A successful LE Connection Complete or LE Enhanced
///   Connection Complete (v1 or v2) starts a connection on its handle with the peer address
///   and type it gives (identity types 0x02/0x03 kept as given); Disconnection Complete ends
///   it. Peers are keyed by address: several connections to one address make one peer, later
///   values winning. Handles of BR/EDR links (Connection Complete, 0x03) are ignored.
/// - ACL data carrying ATT on a handle no connection event announced (the capture began
///   mid-connection) makes a peer with a made-up static random address, derived from an
///   FNV-1a hash of the recording's packets and the handle (the same every time the file is
///   read). A handle carrying no ATT PDU at all (a vendor debug channel) makes no peer.
/// - Advertising reports (legacy and extended) give each address its last advertising data
///   and last scan response data; peers with that address get them.
/// - ATT on CID 0x0004 is read per connection as a client's view (Part F, 3.3.2: one
///   outstanding request at a time): each request the host sent is paired with the next
///   response the peer sent, and only answered requests say anything. Requests the peer sent
///   to the host's own server, and the host's answers, are ignored, except the peer's Client
///   Rx MTU. Discovery responses give the attribute types and declarations; Read, Read Blob
///   (long values assembled by offset), Read Multiple Variable (and Read Multiple when one
///   handle was asked) give values; acknowledged writes, Write Commands, Signed Write
///   Commands and executed prepared writes give values and write stimuli; notifications and
///   indications give values and go into the reaction of the latest write stimulus on the
///   connection (before any write, into a subscription reaction for their handle); Error
///   Responses are kept with the link's encryption at the time.
/// - Anything that does not decode (a truncated PDU, an unknown opcode, a response with no
///   request) is skipped; a recording cut off inside a record or a PDU is read up to there.
///
/// Not read: ATT over BR/EDR (PSM 0x001F) and Enhanced ATT bearers (PSM 0x0027, credit based
/// channels), and links on which the recording host was the server (the peer's requests).
public struct TraceReconstruction: Sendable {
    /// The peers, in the order the recording first shows them.
    public var peripherals: [RecordedPeripheral]
    /// How many addresses advertised (legacy or extended reports) without ever being a
    /// connected peer of the recording.
    public var advertisersNotConnected: Int

    /// Rebuilds the peers of a parsed recording.
    public init(file: BTSnoopFile) {
        var walk = ReconstructionWalk(file: file)
        for record in file.records { walk.add(record) }
        self = walk.result()
    }

    /// Reads `path` and rebuilds its peers; throws ``TraceReconstructionError`` when the
    /// file cannot be read or is no btsnoop file.
    public init(path: String) throws(TraceReconstructionError) {
        let file: BTSnoopFile
        do { file = try BTSnoopFile(path: path) } catch { throw TraceReconstructionError(path: path, reason: error) }
        self.init(file: file)
    }
}

/// A recording that could not be read.
public struct TraceReconstructionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// Why it could not be read.
    public var reason: BTSnoopError

    /// An error about `path`.
    public init(path: String, reason: BTSnoopError) { (self.path, self.reason) = (path, reason) }

    /// `PATH: not a btsnoop file: bad magic …` (the reason names the path itself when the
    /// file could not be opened).
    public var description: String {
        if case .unreadable = reason { return reason.description }
        return "\(path): \(reason)"
    }
}

// MARK: - The walk

/// The state the walk keeps while reading records in order.
struct ReconstructionWalk {
    /// A request the host sent, waiting for the peer's response.
    struct PendingRequest {
        var opcode: ATTOpcode
        var pdu: ArraySlice<UInt8>
    }

    /// One part of a prepared write.
    struct PreparedPart {
        var handle: AttributeHandle
        var offset: Int
        var value: [UInt8]
    }

    /// One LE connection (or a handle the capture found already carrying ATT).
    struct Link {
        /// The peer's index; nil for a made-up link until it carries a recognised ATT PDU.
        var peer: Int?
        /// Whether the link had no connection event.
        var madeUp: Bool
        var encrypted: Bool
        var pending: PendingRequest?
        var prepared: [PreparedPart] = []
        /// Long values being assembled by Read Blob, by handle.
        var blobs: [AttributeHandle: [UInt8]] = [:]
        /// The reaction (index into the peer's reactions) the latest write stimulus opened.
        var currentReaction: Int?
        /// The subscription reactions of this connection, by handle.
        var subscriptions: [AttributeHandle: Int] = [:]
    }

    /// What the walk knows of one peer.
    struct Peer {
        var peripheral: RecordedPeripheral
        var attributes: [AttributeHandle: RecordedAttribute] = [:]
        /// Handles whose first value a client found is settled (RecordedAttribute.initialValue).
        var initialSettled: Set<AttributeHandle> = []
        /// Errors (indices) a later success on an unencrypted link contradicted.
        var contradicted: Set<Int> = []
    }

    /// The last advertising data and scan response of one address.
    struct Advertiser {
        var advertisingData: [UInt8]?
        var scanResponseData: [UInt8]?
        /// Extended report fragments of the advertisement or scan response being assembled.
        var partialAdvertising: [UInt8]?
        var partialScanResponse: [UInt8]?
    }

    let file: BTSnoopFile
    var peers: [Peer] = []
    var peerIndex: [BluetoothAddress: Int] = [:]
    /// The walk every trace tool takes: records to packets, announced links, reassembly.
    var walk: TraceWalk
    /// Each link's state, by the walk's serial number of the link (`self[link:]`).
    var linkStates: [Link?] = []
    /// BR/EDR handles (a BR/EDR Connection Complete announced them): no LE peer on them.
    var bredr: Set<ConnectionHandle> = []
    var advertisers: [BluetoothAddress: Advertiser] = [:]
    var advertiserOrder: [BluetoothAddress] = []
    var recordingHash: UInt64?

    init(file: BTSnoopFile) {
        self.file = file
        walk = TraceWalk(file: file)
    }

    /// The state of the link on `handle`: nil until set. It is kept by the walk's serial
    /// number of the link, so it ends with the link, and a new link on the handle starts
    /// afresh. Modified in place (`_modify`: a copy per change would copy its tables).
    subscript(link handle: ConnectionHandle) -> Link? {
        get { walk.serial(handle).flatMap { $0 < linkStates.count ? linkStates[$0] : nil } }
        _modify {
            let serial = walk.makeSerial(handle)
            if linkStates.count <= serial { linkStates += repeatElement(nil, count: serial + 1 - linkStates.count) }
            yield &linkStates[serial]
        }
    }

    // MARK: Records

    mutating func add(_ record: BTSnoopRecord) {
        guard case let .packet(packet, step) = walk.step(record) else { return }
        switch packet {
        case .event(let event):
            add(event)
        case .acl(let acl):
            if let frame = step?.frame { add(frame, of: acl.handle, received: record.direction == .received) }
        case .command, .sco, .iso:
            break
        }
    }

    mutating func add(_ packet: HCIEventPacket) {
        switch packet.code {
        case 0x03:
            // Connection Complete (BR/EDR), read as the trace tools read it: its handle is no LE link.
            guard let handle = LinkAnnouncement(packet)?.handle else { return }
            bredr.insert(handle)
        case DisconnectionComplete.code:
            guard case let .disconnectionComplete(disconnection)? = try? HCIEvent(packet),
                disconnection.status.isSuccess
            else { return }
            bredr.remove(disconnection.handle)
        case EncryptionChange.codeV1, EncryptionChange.codeV2:
            guard case let .encryptionChange(change)? = try? HCIEvent(packet), change.status.isSuccess else { return }
            setEncrypted(change.encryptionEnabled != 0, on: change.handle)
        case EncryptionKeyRefreshComplete.code:
            guard case let .encryptionKeyRefreshComplete(refresh)? = try? HCIEvent(packet), refresh.status.isSuccess
            else { return }
            setEncrypted(true, on: refresh.handle)
        case LEMetaEvent.code:
            guard case let .leMeta(meta)? = try? HCIEvent(packet) else { return }
            if let reports = try? AdvertisingReport.decode(meta) {
                for report in reports { add(report) }
            } else if case let .connectionComplete(status, handle, _, peerAddressType, peerAddress, _)? =
                try? LEConnectionEvent.decode(meta),
                status.isSuccess
            {
                connect(handle, address: peerAddress, type: AddressType(rawValue: peerAddressType) ?? .random)
            }
        default:
            break
        }
    }

    /// A link the capture found already open (no connection event announced it) is made up
    /// here, so it keeps its encryption for the ATT traffic that follows.
    mutating func setEncrypted(_ encrypted: Bool, on handle: ConnectionHandle) {
        if self[link: handle] == nil, mayMakeUpLink(handle) {
            self[link: handle] = Link(peer: nil, madeUp: true, encrypted: false)
        }
        self[link: handle]?.encrypted = encrypted
    }

    /// Whether traffic on `handle` with no link belongs to an LE link the capture found open:
    /// not BR/EDR, and not announced by a connection event (then ended by a disconnection).
    func mayMakeUpLink(_ handle: ConnectionHandle) -> Bool {
        !bredr.contains(handle) && !walk.announcedHandles.contains(handle)
    }

    mutating func connect(_ handle: ConnectionHandle, address: BluetoothAddress, type: AddressType) {
        bredr.remove(handle)
        let index: Int
        if let known = peerIndex[address] {
            index = known
            peers[index].peripheral.addressType = type
        } else {
            index = peers.count
            peers.append(Peer(peripheral: RecordedPeripheral(address: address, addressType: type)))
            peerIndex[address] = index
        }
        peers[index].peripheral.connectionHandles.append(handle)
        self[link: handle] = Link(peer: index, madeUp: false, encrypted: false)
    }

    // MARK: Advertising

    mutating func add(_ report: AdvertisingReport) {
        let address = report.address
        if advertisers[address] == nil {
            advertisers[address] = Advertiser()
            advertiserOrder.append(address)
        }
        var advertiser = advertisers[address]!
        // Extended reports come in fragments: data status 1 says more follow.
        let partial = report.isScanResponse ? advertiser.partialScanResponse : advertiser.partialAdvertising
        let data = (partial ?? []) + report.data
        let whole: [UInt8]? = report.dataStatus == 1 ? nil : data
        if report.isScanResponse {
            advertiser.partialScanResponse = report.dataStatus == 1 ? data : nil
            if let whole { advertiser.scanResponseData = whole }
        } else {
            advertiser.partialAdvertising = report.dataStatus == 1 ? data : nil
            if let whole { advertiser.advertisingData = whole }
        }
        advertisers[address] = advertiser
    }

    // MARK: ACL and ATT

    mutating func add(_ frame: BasicFrame, of handle: ConnectionHandle, received: Bool) {
        guard !bredr.contains(handle) else { return }
        // A handle a connection event announced and a disconnection ended carries nothing now.
        guard self[link: handle] != nil || mayMakeUpLink(handle) else { return }
        guard frame.channel == .att, let opcode = frame.payload.first.map(ATTOpcode.init(rawValue:)) else { return }
        if self[link: handle] == nil { self[link: handle] = Link(peer: nil, madeUp: true, encrypted: false) }
        if received {
            peerSent(frame.payload, opcode: opcode, on: handle)
        } else {
            hostSent(frame.payload, opcode: opcode, on: handle)
        }
    }

    /// The peer of the link on `handle`, made up the first time a made-up link has
    /// something to record.
    mutating func peer(of handle: ConnectionHandle) -> Int {
        if let index = self[link: handle]?.peer { return index }
        let address = madeUpAddress(for: handle)
        let index: Int
        if let known = peerIndex[address] {
            index = known
        } else {
            index = peers.count
            peers.append(
                Peer(peripheral: RecordedPeripheral(address: address, addressType: .random, addressIsMadeUp: true)))
            peerIndex[address] = index
        }
        peers[index].peripheral.connectionHandles.append(handle)
        self[link: handle]?.peer = index
        return index
    }

    /// A static random address (the two most significant bits set) from an FNV-1a hash of
    /// every packet of the recording and the handle.
    mutating func madeUpAddress(for handle: ConnectionHandle) -> BluetoothAddress {
        let recording =
            recordingHash
            ?? {
                var hash = FNV1a()
                for record in file.records {
                    switch record.content {
                    case let .packet(type, body):
                        hash.add(type.rawValue)
                        hash.add(body)
                    case let .unknownType(byte, body):
                        hash.add(byte)
                        hash.add(body)
                    case .monitor:
                        break
                    }
                }
                return hash.value
            }()
        recordingHash = recording
        var hash = FNV1a(value: recording)
        hash.add([UInt8(handle.rawValue & 0xFF), UInt8(handle.rawValue >> 8)])
        var bytes = (0..<6).map { UInt8(truncatingIfNeeded: hash.value >> (8 * $0)) }
        bytes[5] |= 0xC0
        // The 46 random bits may be neither all 0 nor all 1 (Core Vol 6, Part B, 1.3.2.1).
        let random = bytes[0..<5].allSatisfy { $0 == 0 } && bytes[5] == 0xC0
        let ones = bytes.allSatisfy { $0 == 0xFF }
        if random || ones { bytes[0] ^= 0x01 }
        return BluetoothAddress(littleEndianBytes: bytes)
    }

    /// A PDU the host sent: a request waits for its response; a write command writes.
    mutating func hostSent(_ pdu: ArraySlice<UInt8>, opcode: ATTOpcode, on handle: ConnectionHandle) {
        switch opcode {
        case .exchangeMTURequest, .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest, .readRequest,
            .readBlobRequest, .readMultipleRequest, .readByGroupTypeRequest, .writeRequest, .prepareWriteRequest,
            .executeWriteRequest, .readMultipleVariableRequest:
            self[link: handle]?.pending = PendingRequest(opcode: opcode, pdu: pdu)
        case .writeCommand:
            guard let command = try? WriteCommand.decodeCountingExtraOctets(pdu).pdu else { return }
            let peer = peer(of: handle)
            write(Array(command.value), to: command.handle, peer: peer, link: handle)
        case .signedWriteCommand:
            guard let command = try? SignedWriteCommand.decodeCountingExtraOctets(pdu).pdu else { return }
            let peer = peer(of: handle)
            write(Array(command.value), to: command.handle, peer: peer, link: handle)
        default:
            // Responses of the host's own server, confirmations, its notifications: not the peer.
            break
        }
    }

    /// A PDU the peer sent: a response to the host's pending request, a notification or an
    /// indication, or its Exchange MTU Request.
    mutating func peerSent(_ pdu: ArraySlice<UInt8>, opcode: ATTOpcode, on handle: ConnectionHandle) {
        switch opcode {
        case .handleValueNotification:
            guard let notification = try? HandleValueNotification.decodeCountingExtraOctets(pdu).pdu else { return }
            notified(
                RecordedNotification(
                    handle: notification.handle, value: Array(notification.value), isIndication: false), link: handle)
        case .handleValueIndication:
            guard let indication = try? HandleValueIndication.decodeCountingExtraOctets(pdu).pdu else { return }
            notified(
                RecordedNotification(handle: indication.handle, value: Array(indication.value), isIndication: true),
                link: handle)
        case .multipleHandleValueNotification:
            guard let notification = try? MultipleHandleValueNotification.decodeCountingExtraOctets(pdu).pdu else {
                return
            }
            for entry in notification.entries {
                notified(
                    RecordedNotification(handle: entry.handle, value: Array(entry.value), isIndication: false),
                    link: handle)
            }
        case .exchangeMTURequest:
            guard let request = try? ExchangeMTURequest.decodeCountingExtraOctets(pdu).pdu else { return }
            let peer = peer(of: handle)
            peers[peer].peripheral.mtu = Int(request.clientRxMTU)
        case .errorResponse, .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse,
            .readByTypeResponse,
            .readResponse, .readBlobResponse, .readMultipleResponse, .readByGroupTypeResponse, .writeResponse,
            .prepareWriteResponse, .executeWriteResponse, .readMultipleVariableResponse:
            // One outstanding request: whatever comes back settles it, matched or not.
            guard let request = self[link: handle]?.pending else { return }
            self[link: handle]?.pending = nil
            answered(request, with: pdu, opcode: opcode, on: handle)
        default:
            // Requests to the host's own server and anything unknown.
            break
        }
    }

    // MARK: Result

    func result() -> TraceReconstruction {
        var peripherals: [RecordedPeripheral] = []
        for peer in peers {
            var peripheral = peer.peripheral
            peripheral.attributes = peer.attributes.values.sorted { $0.handle < $1.handle }.map { attribute in
                var attribute = attribute
                if attribute.initialValue == attribute.value { attribute.initialValue = nil }
                return attribute
            }
            if let advertiser = advertisers[peripheral.address] {
                peripheral.advertisingData = advertiser.advertisingData
                peripheral.scanResponseData = advertiser.scanResponseData
            }
            let advertised = AdvertisingData(parsing: peripheral.advertisingData ?? [])
                .merging(AdvertisingData(parsing: peripheral.scanResponseData ?? []))
            let deviceName = peripheral.attributes.last { $0.type == .deviceName && $0.value != nil }?.value
            peripheral.name = advertised.localName ?? deviceName.map { String(decoding: $0, as: UTF8.self) }
            peripherals.append(peripheral)
        }
        let notConnected = advertiserOrder.filter { peerIndex[$0] == nil }.count
        return TraceReconstruction(peripherals: peripherals, advertisersNotConnected: notConnected)
    }
}

extension TraceReconstruction {
    /// The result of a walk.
    init(peripherals: [RecordedPeripheral], advertisersNotConnected: Int) {
        (self.peripherals, self.advertisersNotConnected) = (peripherals, advertisersNotConnected)
    }
}

/// 64-bit FNV-1a: a small, stable hash (the same on every platform and run, unlike Hasher).
struct FNV1a {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    init() {}

    init(value: UInt64) { self.value = value }

    mutating func add(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    mutating func add(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { add(byte) }
    }
}
