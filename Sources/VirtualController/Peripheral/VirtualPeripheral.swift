import ATT
import BluetoothCore
import HCI
import L2CAP
import SMP

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

    /// What the peer keeps for one link: kept on the controller's record of the link
    /// (``VirtualController``), which hands it to ``receive(_:on:)``.
    struct Link {
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

    /// Takes one ACL packet from the host on `link`; returns the L2CAP frames the peer
    /// sends back.
    func receive(_ packet: ACLDataPacket, on link: inout Link) -> [BasicFrame] {
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
                return [
                    attFrame(ErrorResponse(requestOpcode: .exchangeMTURequest, handle: 0, error: .invalidPDU).encoded())
                ]
            }
            link.mtu = max(Self.defaultMTU, min(Int(request.clientRxMTU), receiveMTU))
            return [attFrame(ExchangeMTUResponse(serverRxMTU: UInt16(receiveMTU)).encoded())]
        case .handleValueConfirmation:
            link.awaitingConfirmation = false
            return flush(&link)
        default:
            let request: ATTRequest
            do throws(ATTRequestRefusal) {
                request = try ATTRequest(decoding: pdu)
            } catch {
                return error.response.map { [attFrame($0.encoded())] } ?? []
            }
            let (response, pushes) = server.respond(to: request, link: &link.att, mtu: link.mtu)
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
        func reply(_ code: SignalingCode, _ identifier: UInt8, _ data: [UInt8]) -> [BasicFrame] {
            [
                BasicFrame(
                    channel: .leSignaling,
                    payload: SignalingCommand(code: code, identifier: identifier, data: data).encoded()[...])
            ]
        }
        guard let command = try? SignalingCommand(decoding: payload) else {
            return reply(.commandReject, payload.dropFirst().first ?? 0, CommandRejectReason.commandNotUnderstood.data)
        }
        let refused = CreditBasedConnectionResult(rawValue: 0x0002, enhanced: false)
        switch command.code {
        case .leCreditBasedConnectionRequest:
            return reply(
                .leCreditBasedConnectionResponse, command.identifier,
                LECreditBasedConnectionResponse(destinationCID: 0, mtu: 0, mps: 0, initialCredits: 0, result: refused)
                    .encoded())
        case .creditBasedConnectionRequest:
            // A zero Destination CID for each Source CID asked for (Part A, 4.26).
            let asked = (try? CreditBasedConnectionRequest(command: command))?.sourceCIDs.count ?? 0
            let result = CreditBasedConnectionResult(rawValue: 0x0002, enhanced: true)
            return reply(
                .creditBasedConnectionResponse, command.identifier,
                CreditBasedConnectionResponse(
                    mtu: 0, mps: 0, initialCredits: 0, result: result,
                    destinationCIDs: Array(repeating: 0, count: asked)
                ).encoded())
        case .commandReject, .disconnectionResponse, .connectionParameterUpdateResponse,
            .leCreditBasedConnectionResponse,
            .creditBasedConnectionResponse, .creditBasedReconfigureResponse:
            return []
        default:
            return reply(.commandReject, command.identifier, CommandRejectReason.commandNotUnderstood.data)
        }
    }

    /// SMP (Core Vol 3, Part H, 3.5.5): a Pairing Request gets Pairing Failed, Pairing Not
    /// Supported. Encryption is reached without pairing.
    private func smp(_ payload: ArraySlice<UInt8>) -> [BasicFrame] {
        guard payload.first == SMPCode.pairingRequest.rawValue else { return [] }
        return [BasicFrame(channel: .smp, payload: PairingFailed(reason: .pairingNotSupported).encoded()[...])]
    }
}
