import BluetoothCore
import HCI
import L2CAP

/// Signaling commands in words, for the printer (``TraceFormatter``) and the checker
/// (``TraceCheck``), which must agree on what decodes.
///
/// A command is decoded by its code only when the channel it came on defines that code
/// (``SignalingCode/name`` on LE, ``SignalingCode/bredrName`` on BR/EDR); any other is
/// shown by name and bytes.
enum SignalingDescription {
    /// `0x02 Connection_Req id 1: PSM 0x0001 SDP, scid 0x0040`, or the command with its
    /// bytes and why its data does not decode.
    static func text(_ command: SignalingCommand, bredr: Bool) -> String {
        let head = "\(bredr ? command.code.bredrDescription : command.code.description) id \(command.identifier)"
        do {
            var extraOctets = 0
            let detail = try details(command, bredr: bredr, extraOctets: &extraOctets)
            return detail.isEmpty ? head : head + ": " + detail
        } catch {
            return head + " (malformed: \(error))" + bytes(command.data)
        }
    }

    /// Why `command`'s data does not decode as its code's; nil when it does.
    static func problem(_ command: SignalingCommand, bredr: Bool) -> DecodingError? {
        var extraOctets = 0
        do { _ = try details(command, bredr: bredr, extraOctets: &extraOctets) } catch { return error }
        return nil
    }

    /// How many octets `command`'s data carries past its code's format (the tolerance rule
    /// accepts them); 0 when it does not decode.
    static func extraOctets(_ command: SignalingCommand, bredr: Bool) -> Int {
        var extraOctets = 0
        do { _ = try details(command, bredr: bredr, extraOctets: &extraOctets) } catch { return 0 }
        return extraOctets
    }

    /// The command's fields in words, its data decoded under the tolerance rule: octets
    /// past the format are counted in `extraOctets`.
    private static func details(_ command: SignalingCommand, bredr: Bool, extraOctets: inout Int) throws(DecodingError)
        -> String
    {
        let code = command.code
        let data = command.data
        guard (bredr ? code.bredrName : code.name) != "Unknown" else { return bytes(data, separated: false) }
        /// The command's data as a `PDU`.
        func decode<PDU: SignalingPDU>(_: PDU.Type) throws(DecodingError) -> PDU {
            let decoded = try PDU.decodeCountingExtraOctets(command)
            extraOctets = decoded.extraOctets
            return decoded.pdu
        }
        switch code {
        case .commandReject:
            return try commandReject(decode(CommandReject.self))
        case .connectionRequest:
            let request = try decode(ConnectionRequest.self)
            return "\(request.psm), scid \(cid(request.sourceCID))"
        case .createChannelRequest:
            let create = try decode(CreateChannelRequest.self)
            return "\(create.request.psm), scid \(cid(create.request.sourceCID)), controller \(create.controllerID)"
        case .connectionResponse, .createChannelResponse:
            let response =
                try code == .connectionResponse
                ? decode(ConnectionResponse.self) : decode(CreateChannelResponse.self).response
            return "dcid \(cid(response.destinationCID)), scid \(cid(response.sourceCID)), result \(response.result)"
                + (response.result == .pending ? ", status \(response.status)" : "")
        case .configurationRequest:
            let request = try decode(ConfigurationRequest.self)
            return "dcid \(cid(request.destinationCID))" + flags(request.flags) + options(request.options)
        case .configurationResponse:
            let response = try decode(ConfigurationResponse.self)
            return "scid \(cid(response.sourceCID))" + flags(response.flags) + ", result \(response.result)"
                + options(response.options)
        case .disconnectionRequest:
            let request = try decode(DisconnectionRequest.self)
            return "dcid \(cid(request.destinationCID)), scid \(cid(request.sourceCID))"
        case .disconnectionResponse:
            let response = try decode(DisconnectionResponse.self)
            return "dcid \(cid(response.destinationCID)), scid \(cid(response.sourceCID))"
        case .echoRequest, .echoResponse:
            let echoed = try code == .echoRequest ? decode(EchoRequest.self).data : decode(EchoResponse.self).data
            return echoed.isEmpty ? "" : "data [\(echoed.hexDump)]"
        case .informationRequest:
            return "type \(informationType(try decode(InformationRequest.self).infoType))"
        case .informationResponse:
            let response = try decode(InformationResponse.self)
            let resultName = response.result == 0 ? " success" : response.result == 1 ? " not supported" : ""
            return "type \(informationType(response.infoType)), result \(hex(response.result, digits: 4))\(resultName)"
                + bytes(response.data)
        case .connectionParameterUpdateRequest:
            let parameters = try decode(ConnectionParameterUpdateRequest.self).parameters
            return
                "interval \(Double(parameters.intervalMin) * 1.25)–\(Double(parameters.intervalMax) * 1.25) ms, latency \(parameters.latency), "
                + "supervision timeout \(Int(parameters.supervisionTimeout) * 10) ms"
        case .connectionParameterUpdateResponse:
            return try decode(ConnectionParameterUpdateResponse.self).accepted ? "accepted" : "rejected"
        case .leCreditBasedConnectionRequest:
            let request = try decode(LECreditBasedConnectionRequest.self)
            return
                "\(request.psm), scid \(cid(request.sourceCID)), MTU \(request.mtu), MPS \(request.mps), credits \(request.initialCredits)"
        case .leCreditBasedConnectionResponse:
            let response = try decode(LECreditBasedConnectionResponse.self)
            return
                "dcid \(cid(response.destinationCID)), MTU \(response.mtu), MPS \(response.mps), credits \(response.initialCredits), "
                + "result \(response.result)"
        case .flowControlCreditIndication:
            let indication = try decode(FlowControlCreditIndication.self)
            return "cid \(cid(indication.cid)), credits \(indication.credits)"
        case .creditBasedConnectionRequest:
            let request = try decode(CreditBasedConnectionRequest.self)
            return "\(request.psm), MTU \(request.mtu), MPS \(request.mps), credits \(request.initialCredits), "
                + "scids \(request.sourceCIDs.map(cid).joined(separator: " "))"
        case .creditBasedConnectionResponse:
            let response = try decode(CreditBasedConnectionResponse.self)
            return
                "MTU \(response.mtu), MPS \(response.mps), credits \(response.initialCredits), result \(response.result), "
                + "dcids \(response.destinationCIDs.map { $0 == 0 ? "0x0000 (refused)" : cid($0) }.joined(separator: " "))"
        case .creditBasedReconfigureRequest:
            let request = try decode(CreditBasedReconfigureRequest.self)
            return
                "MTU \(request.mtu), MPS \(request.mps), dcids \(request.destinationCIDs.map(cid).joined(separator: " "))"
        case .creditBasedReconfigureResponse:
            return "result \(try decode(CreditBasedReconfigureResponse.self).result)"
        default:
            return bytes(data, separated: false)
        }
    }

    private static func commandReject(_ reject: CommandReject) throws(DecodingError) -> String {
        switch reject.reason {
        case .signalingMTUExceeded:
            return
                "reason \(reject.reason), MTU \(try reject.reasonData(CommandReject.SignalingMTUExceeded.self).actualMTU)"
        case .invalidCID:
            let endpoints = try reject.reasonData(CommandReject.InvalidCID.self)
            return "reason \(reject.reason), local \(cid(endpoints.localCID)), remote \(cid(endpoints.remoteCID))"
        default:
            return "reason \(reject.reason)" + bytes(reject.data)
        }
    }

    private static func informationType(_ type: UInt16) -> String {
        let name =
            switch type {
            case 0x0001: " connectionless MTU"
            case 0x0002: " extended features mask"
            case 0x0003: " fixed channels supported"
            default: ""
            }
        return hex(type, digits: 4) + name
    }

    private static func flags(_ flags: UInt16) -> String {
        flags & 1 == 1 ? ", continued" : ""
    }

    private static func options(_ options: [ConfigurationOption]) -> String {
        options.isEmpty ? "" : ", " + options.map(\.description).joined(separator: ", ")
    }

    /// `0x0040`.
    static func cid(_ value: UInt16) -> String { hex(value, digits: 4) }

    /// ` [01 02]`, or `[01 02]` when not `separated`; empty for no bytes.
    private static func bytes(_ data: some Collection<UInt8>, separated: Bool = true) -> String {
        data.isEmpty ? "" : (separated ? " " : "") + "[\(data.hexDump)]"
    }
}
