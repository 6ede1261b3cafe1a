import BluetoothCore

// The tolerance rule for what a controller sends, in one place: an event, a Command
// Complete's return parameters or an LE subevent may carry more octets than its format (a
// controller of a newer specification appends fields; one real controller sends Command
// Status with an extra octet). Decoders read the fields they know and ignore the rest
// (``ByteReader/skipExtraOctets()``); too few octets stay an error. What is ignored is
// counted, for the controller's debug log and for `bluejay trace --check`'s warnings.

extension MessageLayoutProtocol {
    /// Decodes a message a controller sent under the tolerance rule: every field of the
    /// layout must be there (else ``DecodingError/truncated(needed:available:)``), octets
    /// past the last one are ignored and counted. Every HCI decoder that accepts extra
    /// octets comes here (``HCIParameters/decodeCountingExtraOctets(_:)``, the events, the
    /// LE subevents).
    func decodeCountingExtraOctets(_ bytes: ArraySlice<UInt8>) throws(DecodingError) -> (
        message: Message, extraOctets: Int
    ) {
        var reader = ByteReader(bytes)
        let message = try decode(from: &reader)
        return (message, reader.skipExtraOctets())
    }
}

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

/// The commands this stack declares, and those of them whose Command Complete carries
/// return parameters beyond the status, by opcode: what a reader of an event stream (the
/// controller's log, a trace check, a fuzz target) needs to decode an answer by its opcode
/// alone.
public enum KnownCommands {
    /// Every command type this stack declares (Core Vol 4, Part E, 7): a command added to the
    /// stack is added here, and the tables below follow.
    public static let all: [any HCICommand.Type] = [
        // Controller and baseband, informational, link control, status (7.1, 7.3–7.5).
        Reset.self, SetEventMask.self, ReadLocalVersionInformation.self, ReadLocalSupportedCommands.self,
        ReadLocalSupportedFeatures.self, ReadBufferSize.self, ReadBDADDR.self, Disconnect.self, ReadRSSI.self,
        // LE controller (7.8).
        LESetEventMask.self, LEReadBufferSize.self, LEReadBufferSizeV2.self, LEReadLocalSupportedFeatures.self,
        LEReadMaximumDataLength.self, LESetScanParameters.self, LESetScanEnable.self, LESetExtendedScanParameters.self,
        LESetExtendedScanEnable.self, LECreateConnection.self, LEExtendedCreateConnection.self,
        LECreateConnectionCancel.self,
        LEReadRemoteFeatures.self, LESetDataLength.self, LESetPHY.self, LEConnectionUpdate.self,
        LERemoteConnectionParameterRequestReply.self, LERemoteConnectionParameterRequestNegativeReply.self,
        LEEnableEncryption.self, LELongTermKeyRequestReply.self, LELongTermKeyRequestNegativeReply.self,
        // LE advertising, legacy and extended (7.8.4–7.8.9, 7.8.52–7.8.60).
        LESetRandomAddress.self, LESetAdvertisingParameters.self, LEReadAdvertisingPhysicalChannelTxPower.self,
        LESetAdvertisingData.self, LESetScanResponseData.self, LESetAdvertisingEnable.self,
        LESetAdvertisingSetRandomAddress.self, LESetExtendedAdvertisingParameters.self,
        LESetExtendedAdvertisingData.self,
        LESetExtendedScanResponseData.self, LESetExtendedAdvertisingEnable.self,
        LEReadMaximumAdvertisingDataLength.self,
        LEReadNumberOfSupportedAdvertisingSets.self, LERemoveAdvertisingSet.self, LEClearAdvertisingSets.self,
    ]

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

        /// The format of `C`'s return parameters; nil when it returns the status alone.
        init?<C: HCICommand>(_: C.Type) {
            guard C.ReturnParameters.self != NoParameters.self else { return nil }
            opcode = C.opcode
            extraOctets = { bytes in
                try? HCIController.CommandResult.complete(bytes).returnParametersCountingExtraOctets(of: C.self)
                    .extraOctets
            }
            reencoded = { bytes in
                guard let parameters = try? HCIController.CommandResult.complete(bytes).returnParameters(of: C.self)
                else { return nil }
                return [HCIStatus.success.rawValue] + parameters.encoded()
            }
        }
    }

    /// Every command with return parameters beyond the status, by opcode.
    public static let withReturnParameters: [HCIOpcode: ReturnParameterFormat] =
        Dictionary(uniqueKeysWithValues: all.compactMap { ReturnParameterFormat($0) }.map { ($0.opcode, $0) })
}
