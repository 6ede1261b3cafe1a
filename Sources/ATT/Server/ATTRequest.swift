import BluetoothCore

/// A request or command a client sends to a server (Core Vol 3, Part F, 3.4), decoded once.
///
/// The bearer decodes each PDU it receives from the client and hands the server this value
/// (``ATTServer/respond(to:on:)``): a server dispatches on the case and never decodes the
/// bytes again. Exchange MTU is not among the cases: the bearer answers it itself.
public enum ATTRequest: Sendable, Equatable {
    /// ATT_FIND_INFORMATION_REQ (3.4.3.1).
    case findInformation(FindInformationRequest)
    /// ATT_FIND_BY_TYPE_VALUE_REQ (3.4.3.3).
    case findByTypeValue(FindByTypeValueRequest)
    /// ATT_READ_BY_TYPE_REQ (3.4.4.1).
    case readByType(ReadByTypeRequest)
    /// ATT_READ_REQ (3.4.4.3).
    case read(ReadRequest)
    /// ATT_READ_BLOB_REQ (3.4.4.5).
    case readBlob(ReadBlobRequest)
    /// ATT_READ_MULTIPLE_REQ (3.4.4.7).
    case readMultiple(ReadMultipleRequest)
    /// ATT_READ_BY_GROUP_TYPE_REQ (3.4.4.9).
    case readByGroupType(ReadByGroupTypeRequest)
    /// ATT_READ_MULTIPLE_VARIABLE_REQ (3.4.4.11).
    case readMultipleVariable(ReadMultipleVariableRequest)
    /// ATT_WRITE_REQ (3.4.5.1).
    case write(WriteRequest)
    /// ATT_WRITE_CMD (3.4.5.3).
    case writeCommand(WriteCommand)
    /// ATT_SIGNED_WRITE_CMD (3.4.5.4).
    case signedWriteCommand(SignedWriteCommand)
    /// ATT_PREPARE_WRITE_REQ (3.4.6.1).
    case prepareWrite(PrepareWriteRequest)
    /// ATT_EXECUTE_WRITE_REQ (3.4.6.3).
    case executeWrite(ExecuteWriteRequest)

    /// The PDU's opcode.
    public var opcode: ATTOpcode {
        switch self {
        case .findInformation: .findInformationRequest
        case .findByTypeValue: .findByTypeValueRequest
        case .readByType: .readByTypeRequest
        case .read: .readRequest
        case .readBlob: .readBlobRequest
        case .readMultiple: .readMultipleRequest
        case .readByGroupType: .readByGroupTypeRequest
        case .readMultipleVariable: .readMultipleVariableRequest
        case .write: .writeRequest
        case .writeCommand: .writeCommand
        case .signedWriteCommand: .signedWriteCommand
        case .prepareWrite: .prepareWriteRequest
        case .executeWrite: .executeWriteRequest
        }
    }

    /// Whether it is a command: the client waits for no response, and none is sent, not even
    /// an Error Response (3.3).
    public var isCommand: Bool { opcode.isCommand }

    /// Decodes a PDU (opcode first) a client sent to a server. A PDU that is not a request
    /// or command a server answers, or that is malformed, is an ``ATTRequestRefusal``
    /// saying what to answer, if anything.
    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTRequestRefusal) {
        guard let first = pdu.first else { throw ATTRequestRefusal(opcode: nil, reason: "an empty PDU") }
        let opcode = ATTOpcode(rawValue: first)
        func decoded<P: ATTPDU>(_: P.Type) throws(ATTRequestRefusal) -> P {
            do {
                return try P(decoding: pdu)
            } catch {
                throw ATTRequestRefusal(opcode: opcode, code: .invalidPDU, reason: "a malformed \(P.name): \(error)")
            }
        }
        switch opcode {
        case .findInformationRequest: self = .findInformation(try decoded(FindInformationRequest.self))
        case .findByTypeValueRequest: self = .findByTypeValue(try decoded(FindByTypeValueRequest.self))
        case .readByTypeRequest: self = .readByType(try decoded(ReadByTypeRequest.self))
        case .readRequest: self = .read(try decoded(ReadRequest.self))
        case .readBlobRequest: self = .readBlob(try decoded(ReadBlobRequest.self))
        case .readMultipleRequest: self = .readMultiple(try decoded(ReadMultipleRequest.self))
        case .readByGroupTypeRequest: self = .readByGroupType(try decoded(ReadByGroupTypeRequest.self))
        case .readMultipleVariableRequest: self = .readMultipleVariable(try decoded(ReadMultipleVariableRequest.self))
        case .writeRequest: self = .write(try decoded(WriteRequest.self))
        case .writeCommand: self = .writeCommand(try decoded(WriteCommand.self))
        case .signedWriteCommand: self = .signedWriteCommand(try decoded(SignedWriteCommand.self))
        case .prepareWriteRequest: self = .prepareWrite(try decoded(PrepareWriteRequest.self))
        case .executeWriteRequest: self = .executeWrite(try decoded(ExecuteWriteRequest.self))
        default:
            guard !Self.notRequests.contains(opcode), !opcode.isResponse else {
                throw ATTRequestRefusal(opcode: nil, reason: "\(opcode), not a request")
            }
            throw ATTRequestRefusal(opcode: opcode, code: .requestNotSupported, reason: "\(opcode), not supported")
        }
    }

    /// The opcodes a client sends that are not requests (responses are known by name).
    private static let notRequests: Set<ATTOpcode> = [
        .handleValueNotification, .handleValueIndication, .handleValueConfirmation, .multipleHandleValueNotification,
    ]
}

/// Why a PDU a client sent is not handed to a server, and what the client is answered.
public struct ATTRequestRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request's opcode, when the PDU asks for an answer; nil for an empty PDU or one
    /// that is no request (a response, a notification), which gets none.
    public var opcode: ATTOpcode?
    /// Invalid PDU (malformed) or Request Not Supported (an opcode no server here answers).
    public var code: ATTErrorCode
    /// What was wrong, for the log.
    public var reason: String

    /// A refusal of `opcode`'s PDU with `code`.
    public init(opcode: ATTOpcode?, code: ATTErrorCode = .requestNotSupported, reason: String) {
        (self.opcode, self.code, self.reason) = (opcode, code, reason)
    }

    /// The Error Response the client is sent: none for a command (3.3) or a PDU that is no
    /// request.
    public var response: ErrorResponse? {
        guard let opcode, !opcode.isCommand else { return nil }
        return ErrorResponse(requestOpcode: opcode, handle: 0x0000, error: code)
    }

    /// The reason.
    public var description: String { reason }
}
