import BluetoothCore
import HCI

/// The LE signaling channel's requests for credit-based channels, as they come from the peer:
/// connection requests (LE and enhanced), reconfiguration, credits and disconnection.
extension CreditBasedChannels {
    /// Whether commands with `code` are this object's to answer: credit-based connection,
    /// credits, reconfiguration and disconnection.
    public static func handles(_ code: SignalingCode) -> Bool {
        (0x14...0x1A).contains(code.rawValue) || code == .disconnectionRequest || code == .disconnectionResponse
    }

    /// Handles one command of the LE signaling channel of link `handle`; returns false for
    /// one it has nothing to do with (a Command Reject that answers none of its requests,
    /// a code ``handles(_:)`` does not name), which the caller then handles.
    @discardableResult
    public func signaling(_ command: SignalingCommand, handle: ConnectionHandle) -> Bool {
        switch command.code {
        case .commandReject:
            return complete(command, handle: handle)
        case .leCreditBasedConnectionResponse, .creditBasedConnectionResponse, .disconnectionResponse,
            .creditBasedReconfigureResponse,
            .connectionParameterUpdateResponse:
            if !complete(command, handle: handle) {
                log(
                    .info,
                    "handle \(hex(handle, digits: 4)): \(command.code) answers no request of ours (identifier \(command.identifier)); ignored"
                )
            }
        case .leCreditBasedConnectionRequest:
            acceptLE(command, handle: handle)
        case .creditBasedConnectionRequest:
            acceptEnhanced(command, handle: handle)
        case .flowControlCreditIndication:
            guard let indication: FlowControlCreditIndication = decodeOrReject(command, handle: handle) else { break }
            guard let channel = links.existing(handle)?.channel(remoteCID: indication.cid) else {
                log(
                    .info,
                    "handle \(hex(handle, digits: 4)): credits for CID \(hex(indication.cid, digits: 4)), which no channel has; ignored"
                )
                break
            }
            channel.addCredits(indication.credits)
        case .disconnectionRequest:
            guard let request: DisconnectionRequest = decodeOrReject(command, handle: handle) else { break }
            guard let channel = links.existing(handle)?.channels[request.destinationCID],
                channel.remoteCID == request.sourceCID
            else {
                let data = CommandReject.InvalidCID(localCID: request.destinationCID, remoteCID: request.sourceCID)
                    .wireBytes()
                reply(CommandReject(reason: .invalidCID, data: data[...]), identifier: command.identifier, on: handle)
                break
            }
            reply(
                DisconnectionResponse(destinationCID: request.destinationCID, sourceCID: request.sourceCID),
                identifier: command.identifier, on: handle)
            channel.end(.closedByPeer)
        case .creditBasedReconfigureRequest:
            guard let request: CreditBasedReconfigureRequest = decodeOrReject(command, handle: handle) else { break }
            reply(
                CreditBasedReconfigureResponse(result: reconfigure(request, handle: handle)),
                identifier: command.identifier, on: handle)
        default:
            return false
        }
        return true
    }

    private func decodeOrReject<Command: SignalingPDU>(_ command: SignalingCommand, handle: ConnectionHandle)
        -> Command?
    {
        do { return try Command.decodeCountingExtraOctets(command).pdu } catch {
            log(.warning, "handle \(hex(handle, digits: 4)): malformed \(Command.name): \(error)")
            reply(CommandReject(reason: .commandNotUnderstood), identifier: command.identifier, on: handle)
            return nil
        }
    }

    /// 4.27: the peer's new MTU and MPS for channels it receives on (our remote CIDs).
    private func reconfigure(_ request: CreditBasedReconfigureRequest, handle: ConnectionHandle)
        -> CreditBasedReconfigureResult
    {
        let link = links.existing(handle)
        let targets = request.destinationCIDs.map { link?.channel(remoteCID: $0) }
        guard !targets.isEmpty, targets.allSatisfy({ $0 != nil }) else {
            return CreditBasedReconfigureResult(rawValue: 0x0003)
        }
        let found = targets.compactMap { $0 }
        if CreditBasedChannelParameters(mtu: request.mtu, mps: request.mps).problem(enhanced: true) != nil {
            return CreditBasedReconfigureResult(rawValue: 0x0004)
        }
        if found.contains(where: { request.mtu < $0.remoteMTU }) {
            return CreditBasedReconfigureResult(rawValue: 0x0001)
        }
        if found.count > 1, found.contains(where: { request.mps < $0.remoteMPS }) {
            return CreditBasedReconfigureResult(rawValue: 0x0002)
        }
        for channel in found { channel.reconfigure(mtu: request.mtu, mps: request.mps) }
        return CreditBasedReconfigureResult(rawValue: 0x0000)
    }

    /// 4.22/4.23: the peer asks for one LE credit based channel.
    private func acceptLE(_ command: SignalingCommand, handle: ConnectionHandle) {
        guard let request: LECreditBasedConnectionRequest = decodeOrReject(command, handle: handle) else { return }
        let server = servers[request.psm]
        let ours = server?.parameters ?? CreditBasedChannelParameters(mtu: 23, mps: 23, initialCredits: 0)
        func refuse(_ result: UInt16) {
            log(
                .info,
                "handle \(hex(handle, digits: 4)): refusing \(request.psm): \(CreditBasedConnectionResult(rawValue: result, enhanced: false))"
            )
            reply(
                LECreditBasedConnectionResponse(
                    destinationCID: 0, mtu: ours.mtu, mps: ours.mps, initialCredits: 0,
                    result: CreditBasedConnectionResult(rawValue: result, enhanced: false)),
                identifier: command.identifier, on: handle)
        }
        guard let server else { return refuse(0x0002) }
        guard let link = try? state(handle) else { return refuse(0x0004) }
        guard Self.dynamicCIDs.contains(request.sourceCID) else { return refuse(0x0009) }
        guard link.channel(remoteCID: request.sourceCID) == nil else { return refuse(0x000A) }
        guard CreditBasedChannelParameters(mtu: request.mtu, mps: request.mps).problem(enhanced: false) == nil else {
            return refuse(0x000B)
        }
        guard let cid = try? allocateCIDs(1, on: link)[0] else { return refuse(0x0004) }
        let channel = makeChannel(
            on: link, psm: request.psm, mode: .leCreditBased, localCID: cid, remoteCID: request.sourceCID,
            local: ours, remoteMTU: request.mtu, remoteMPS: request.mps, remoteCredits: request.initialCredits)
        reply(
            LECreditBasedConnectionResponse(
                destinationCID: cid, mtu: ours.mtu, mps: ours.mps, initialCredits: ours.initialCredits,
                result: CreditBasedConnectionResult(rawValue: 0, enhanced: false)),
            identifier: command.identifier, on: handle)
        server.accept(channel)
    }

    /// 4.25/4.26: the peer asks for up to five enhanced credit based channels.
    private func acceptEnhanced(_ command: SignalingCommand, handle: ConnectionHandle) {
        guard let request: CreditBasedConnectionRequest = decodeOrReject(command, handle: handle) else { return }
        let server = servers[request.psm]
        let ours = server?.parameters ?? CreditBasedChannelParameters(mtu: 64, mps: 64, initialCredits: 0)
        func respond(_ result: UInt16, _ cids: [UInt16]) {
            reply(
                CreditBasedConnectionResponse(
                    mtu: ours.mtu, mps: ours.mps, initialCredits: cids.contains { $0 != 0 } ? ours.initialCredits : 0,
                    result: CreditBasedConnectionResult(rawValue: result, enhanced: true), destinationCIDs: cids),
                identifier: command.identifier, on: handle)
        }
        let none = [UInt16](repeating: 0, count: request.sourceCIDs.count)
        guard let server else { return respond(0x0002, none) }
        guard (1...CreditBasedConnectionRequest.maximumChannels).contains(request.sourceCIDs.count),
            CreditBasedChannelParameters(mtu: request.mtu, mps: request.mps).problem(enhanced: true) == nil,
            server.parameters.problem(enhanced: true) == nil
        else { return respond(0x000C, none) }
        guard let link = try? state(handle) else { return respond(0x0004, none) }
        var result: UInt16 = 0
        var destinations: [UInt16] = []
        var opened: [CreditBasedChannel] = []
        for source in request.sourceCIDs {
            var refusal: UInt16?
            if !Self.dynamicCIDs.contains(source) {
                refusal = 0x0009
            } else if link.channel(remoteCID: source) != nil || opened.contains(where: { $0.remoteCID == source }) {
                refusal = 0x000A
            }
            guard refusal == nil, let cid = try? allocateCIDs(1, on: link)[0] else {
                if result == 0 { result = refusal ?? 0x0004 }
                destinations.append(0)
                continue
            }
            opened.append(
                makeChannel(
                    on: link, psm: request.psm, mode: .enhancedCreditBased, localCID: cid, remoteCID: source,
                    local: ours,
                    remoteMTU: request.mtu, remoteMPS: request.mps, remoteCredits: request.initialCredits))
            destinations.append(cid)
        }
        respond(result, destinations)
        for channel in opened { server.accept(channel) }
    }
}
