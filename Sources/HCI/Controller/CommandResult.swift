import BluetoothCore

extension HCIController {
    /// How a command ended at the HCI level.
    public enum CommandResult: Sendable, Equatable {
        /// Command Complete with these return parameters (status first, for most commands).
        case complete(ArraySlice<UInt8>)
        /// Command Status with this status.
        case status(HCIStatus)

        /// The return parameters of command `C` this answer carries; throws the status when
        /// it is not success, or what is malformed. A newer controller may append fields:
        /// extra octets are not an error (the tolerance rule).
        public func returnParameters<C: HCICommand>(of type: C.Type) throws(HCIError) -> C.ReturnParameters {
            try returnParametersCountingExtraOctets(of: type).parameters
        }

        /// The return parameters of command `C`, as ``returnParameters(of:)`` decodes them,
        /// and how many octets followed their format (ignored).
        public func returnParametersCountingExtraOctets<C: HCICommand>(of _: C.Type) throws(HCIError)
            -> (parameters: C.ReturnParameters, extraOctets: Int)
        {
            var reader: ByteReader
            switch self {
            case .status(let status):
                guard status.isSuccess else { throw .commandFailed(C.opcode, status) }
                guard C.completion == .commandStatus else {
                    throw .malformedResponse(
                        C.opcode, .invalidValue(field: "Command Status for a Command Complete command", value: 0))
                }
                reader = ByteReader([])
            case .complete(let parameters):
                reader = ByteReader(parameters)
                let status: HCIStatus
                do { status = HCIStatus(rawValue: try reader.readUInt8()) } catch {
                    throw .malformedResponse(C.opcode, error)
                }
                guard status.isSuccess else { throw .commandFailed(C.opcode, status) }
            }
            do {
                let parameters = try C.ReturnParameters(from: &reader)
                return (parameters, reader.skipExtraOctets())
            } catch { throw .malformedResponse(C.opcode, error) }
        }
    }
}
