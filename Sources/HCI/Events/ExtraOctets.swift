import BluetoothCore

/// The tolerance rule for what a controller sends, in one place: an event, a Command
/// Complete's return parameters or an LE subevent may carry more octets than its format
/// (a controller of a newer specification appends fields; one real controller sends Command
/// Status with an extra octet). Decoders read the fields they know and ignore the rest
/// (``ByteReader/skipExtraOctets()``); too few octets stay an error. This says how many were
/// ignored, for the controller's debug log and for `bluejay trace --check`'s warnings.
extension HCIEventPacket {
    /// The octets past this event's format, summed over the event, its LE subevent and its
    /// Command Complete return parameters, wherever this stack knows the format (an event or
    /// subevent it does not decode counts 0). `nil` when the event does not decode at all.
    public var extraOctets: Int? {
        guard let (event, extra) = try? HCIEvent.decode(self) else { return nil }
        switch event {
        case .commandComplete(let complete):
            guard let command = KnownCommands.withReturnParameters[complete.opcode] else { return extra }
            return command.extraOctets(complete.returnParameters).map { extra + $0 } ?? extra
        case .leMeta(let meta):
            do {
                if let (_, more) = try LEConnectionEvent.decodeCountingExtraOctets(meta) { return extra + more }
                if let (_, more) = try AdvertisingReport.decodeCountingExtraOctets(meta) { return extra + more }
            } catch {
                return nil
            }
            return extra
        default:
            return extra
        }
    }
}

/// The commands this stack sends whose Command Complete carries return parameters beyond the
/// status, by opcode: what a reader of an event stream (the controller's log, a trace check,
/// a fuzz target) needs to decode an answer by its opcode alone.
public enum KnownCommands {
    /// One command's return-parameter decoder.
    public struct ReturnParameterFormat: Sendable {
        /// The command's opcode.
        public let opcode: HCIOpcode
        /// Decodes return parameters (status first) as the controller does and counts the
        /// octets past the format; nil when the status is not success or they do not decode.
        public let extraOctets: @Sendable (ArraySlice<UInt8>) -> Int?
        /// Decodes return parameters, then re-encodes them (status first): nil when they do
        /// not decode. For round-trip checks.
        public let reencoded: @Sendable (ArraySlice<UInt8>) -> [UInt8]?

        init<C: HCICommand>(_: C.Type) {
            opcode = C.opcode
            extraOctets = { bytes in
                try? HCIController.CommandResult.complete(bytes).returnParametersCountingExtraOctets(of: C.self).extraOctets
            }
            reencoded = { bytes in
                guard let parameters = try? HCIController.CommandResult.complete(bytes).returnParameters(of: C.self) else { return nil }
                return [HCIStatus.success.rawValue] + parameters.encoded()
            }
        }
    }

    /// Every command with return parameters beyond the status, by opcode.
    public static let withReturnParameters: [HCIOpcode: ReturnParameterFormat] = {
        let formats = [
            ReturnParameterFormat(ReadLocalVersionInformation.self), ReturnParameterFormat(ReadLocalSupportedCommands.self),
            ReturnParameterFormat(ReadLocalSupportedFeatures.self), ReturnParameterFormat(ReadBufferSize.self),
            ReturnParameterFormat(ReadBDADDR.self), ReturnParameterFormat(LEReadBufferSize.self),
            ReturnParameterFormat(LEReadBufferSizeV2.self), ReturnParameterFormat(LEReadLocalSupportedFeatures.self),
            ReturnParameterFormat(LEReadMaximumDataLength.self), ReturnParameterFormat(ReadRSSI.self),
            ReturnParameterFormat(LESetDataLength.self), ReturnParameterFormat(LERemoteConnectionParameterRequestReply.self),
            ReturnParameterFormat(LERemoteConnectionParameterRequestNegativeReply.self),
        ]
        return Dictionary(uniqueKeysWithValues: formats.map { ($0.opcode, $0) })
    }()
}
