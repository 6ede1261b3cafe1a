import ATT
import BluetoothCore
import HCI
import L2CAP

/// One virtual peripheral: a recorded peer brought back as the far end of LE links. It
/// speaks L2CAP on the fixed channels — ATT through its ``RecordedServer``, with its own
/// bearer rules (it answers Exchange MTU with the recorded MTU and sends one indication at
/// a time, each after the client confirmed the last); LE signaling and SMP only to say no:
/// a Command Reject, credit based connections refused (SPSM not supported), pairing
/// refused (Pairing Not Supported). Encryption needs no pairing: the virtual controller
/// turns it on with any key.
///
/// Not `Sendable`: it lives inside its ``VirtualController``'s lock.
final class VirtualPeripheral {
    /// What the recording shows of the peer.
    let record: RecordedPeripheral
    private let server: RecordedServer
    /// The ATT_MTU the peer offers: the recorded one, else the default 23 it surely had.
    private let receiveMTU: Int
    private var links: [ConnectionHandle: Link] = [:]

    private struct Link {
        var reassembler = Reassembler()
        var mtu = 23
        var att = RecordedServer.Link()
        /// Notifications and indications waiting behind an unconfirmed indication.
        var outbound: [RecordedNotification] = []
        var awaitingConfirmation = false
    }

    /// The defaults ATT gives a bearer (Core Vol 3, Part F, 3.2.8): 23, at most 517.
    static let defaultMTU = 23

    init(_ record: RecordedPeripheral) {
        self.record = record
        server = RecordedServer(record)
        receiveMTU = min(max(record.mtu ?? Self.defaultMTU, Self.defaultMTU), 517)
    }

    /// Whether a link to the peer is up.
    var isConnected: Bool { !links.isEmpty }

    /// A link came up on `handle`.
    func connected(_ handle: ConnectionHandle) { links[handle] = Link() }

    /// The link on `handle` ended.
    func disconnected(_ handle: ConnectionHandle) { links[handle] = nil }

    /// The link on `handle` is encrypted now.
    func encrypted(_ handle: ConnectionHandle) { links[handle]?.att.encrypted = true }

    /// Takes one ACL packet from the host; returns the L2CAP frames the peer sends back.
    func receive(_ packet: ACLDataPacket) -> [BasicFrame] {
        guard var link = links[packet.handle] else { return [] }
        defer { links[packet.handle] = link }
        guard let frame = link.reassembler.append(packet).frame else { return [] }
        switch frame.channel {
        case .att: return att(frame.payload, link: &link)
        case .leSignaling: return signaling(frame.payload)
        case .smp: return smp(frame.payload)
        default: return []
        }
    }

    // MARK: - ATT

    private func att(_ pdu: ArraySlice<UInt8>, link: inout Link) -> [BasicFrame] {
        guard let first = pdu.first else { return [] }
        switch ATTOpcode(rawValue: first) {
        case .exchangeMTURequest:
            guard let request = try? ExchangeMTURequest(decoding: pdu) else {
                return [attFrame(ErrorResponse(requestOpcode: .exchangeMTURequest, handle: 0, error: .invalidPDU).encoded())]
            }
            link.mtu = max(Self.defaultMTU, min(Int(request.clientRxMTU), receiveMTU))
            return [attFrame(ExchangeMTUResponse(serverRxMTU: UInt16(receiveMTU)).encoded())]
        case .handleValueConfirmation:
            link.awaitingConfirmation = false
            return flush(&link)
        default:
            let (response, pushes) = server.respond(to: pdu, link: &link.att, mtu: link.mtu)
            link.outbound += pushes
            return (response.map { [attFrame($0)] } ?? []) + flush(&link)
        }
    }

    /// Sends what waits, up to and including the next indication.
    private func flush(_ link: inout Link) -> [BasicFrame] {
        var frames: [BasicFrame] = []
        while !link.awaitingConfirmation, !link.outbound.isEmpty {
            let push = link.outbound.removeFirst()
            let value = push.value.prefix(link.mtu - 3)
            if push.isIndication {
                link.awaitingConfirmation = true
                frames.append(attFrame(HandleValueIndication(handle: push.handle, value: value).encoded()))
            } else {
                frames.append(attFrame(HandleValueNotification(handle: push.handle, value: value).encoded()))
            }
        }
        return frames
    }

    private func attFrame(_ pdu: [UInt8]) -> BasicFrame { BasicFrame(channel: .att, payload: pdu[...]) }

    // MARK: - Signaling and SMP: refusals

    /// LE signaling (Core Vol 3, Part A, 4): credit based connections are refused with
    /// "SPSM not supported" (0x0002), other requests rejected as not understood; responses
    /// and rejects get nothing.
    private func signaling(_ payload: ArraySlice<UInt8>) -> [BasicFrame] {
        var reader = ByteReader(payload)
        guard let code = try? reader.readUInt8(), let identifier = try? reader.readUInt8(), let length = try? reader.readUInt16() else {
            return []
        }
        func command(_ code: UInt8, _ data: [UInt8]) -> [BasicFrame] {
            var writer = ByteWriter()
            writer.write(code)
            writer.write(identifier)
            writer.write(UInt16(data.count))
            writer.write(bytes: data)
            return [BasicFrame(channel: .leSignaling, payload: writer.bytes[...])]
        }
        switch code {
        case 0x14:
            // LE Credit Based Connection Response: DCID, MTU, MPS, Initial Credits 0, Result.
            return command(0x15, [0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x00])
        case 0x17:
            // Credit Based Connection Response: MTU, MPS, Initial Credits, Result, and a
            // zero Destination CID for each Source CID asked for.
            let asked = max(0, (Int(length) - 8) / 2)
            return command(0x18, [0, 0, 0, 0, 0, 0, 0x02, 0x00] + [UInt8](repeating: 0, count: 2 * asked))
        case 0x01, 0x07, 0x13, 0x15, 0x18, 0x1A:
            return []
        default:
            // Command Reject, reason 0x0000 Command not understood.
            return command(0x01, [0x00, 0x00])
        }
    }

    /// SMP (Core Vol 3, Part H, 3.5.5): a Pairing Request gets Pairing Failed, reason 0x05
    /// Pairing Not Supported. Encryption is reached without pairing.
    private func smp(_ payload: ArraySlice<UInt8>) -> [BasicFrame] {
        guard payload.first == 0x01 else { return [] }
        return [BasicFrame(channel: .smp, payload: [0x05, 0x05][...])]
    }
}
