import BluetoothCore
import HCI

// Opening and closing a BR/EDR connection-oriented channel (Core Vol 3, Part A, 4.2, 4.3,
// 4.6, 4.7, 4.14, 4.15). Each side names the channel by the CID it allocated itself and
// receives on: a request carries the requester's (Source CID), the response adds the
// responder's (Destination CID).
//
// Decoders accept octets past the defined fields (a later version may append some) and
// refuse only data too short to hold them; encoders write exactly the defined fields.

/// L2CAP_CONNECTION_REQ (0x02), or L2CAP_CREATE_CHANNEL_REQ (0x0C), which adds a
/// Controller ID: open a channel to `psm`.
public struct ConnectionRequest: Sendable, Equatable {
    /// The protocol or service asked for.
    public var psm: PSM
    /// The CID the requester allocated: frames to the requester carry it.
    public var sourceCID: UInt16
    /// Create Channel's Controller ID (0x00 for BR/EDR); nil for a Connection Request.
    public var controllerID: UInt8?

    /// A request from its fields.
    public init(psm: PSM, sourceCID: UInt16, controllerID: UInt8? = nil) {
        self.psm = psm
        self.sourceCID = sourceCID
        self.controllerID = controllerID
    }

    /// Decodes a Connection Request's data, or a Create Channel Request's when
    /// `createChannel` is set.
    public init(data: [UInt8], createChannel: Bool = false) throws(DecodingError) {
        var reader = ByteReader(data)
        psm = PSM(rawValue: try reader.readUInt16())
        sourceCID = try reader.readUInt16()
        controllerID = createChannel ? try reader.readUInt8() : nil
    }

    /// The command's data.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 5)
        writer.write(psm.rawValue)
        writer.write(sourceCID)
        if let controllerID { writer.write(controllerID) }
        return writer.bytes
    }
}

/// L2CAP_CONNECTION_RSP (0x03) or L2CAP_CREATE_CHANNEL_RSP (0x0D): the answer to a
/// request. Only ``ConnectionResult/success`` opens the channel; ``ConnectionResult/pending``
/// promises another response with the same identifier.
public struct ConnectionResponse: Sendable, Equatable {
    /// The CID the responder allocated (frames to the responder carry it); 0x0000 when refused.
    public var destinationCID: UInt16
    /// The requester's CID, echoed.
    public var sourceCID: UInt16
    /// The outcome.
    public var result: ConnectionResult
    /// Why a response is pending (meaningful only with ``ConnectionResult/pending``).
    public var status: ConnectionStatus

    /// A response from its fields.
    public init(destinationCID: UInt16, sourceCID: UInt16, result: ConnectionResult, status: ConnectionStatus = .noFurtherInformation) {
        self.destinationCID = destinationCID
        self.sourceCID = sourceCID
        self.result = result
        self.status = status
    }

    /// Decodes the command's eight data octets.
    public init(data: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(data)
        destinationCID = try reader.readUInt16()
        sourceCID = try reader.readUInt16()
        result = ConnectionResult(rawValue: try reader.readUInt16())
        status = ConnectionStatus(rawValue: try reader.readUInt16())
    }

    /// The command's data.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 8)
        writer.write(destinationCID)
        writer.write(sourceCID)
        writer.write(result.rawValue)
        writer.write(status.rawValue)
        return writer.bytes
    }
}

/// The Result of a Connection (or Create Channel) Response (Core Vol 3, Part A, 4.3).
public struct ConnectionResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The result as on the wire.
    public let rawValue: UInt16
    /// Wraps a result from the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0000 Connection successful.
    public static let success = ConnectionResult(rawValue: 0x0000)
    /// 0x0001 Connection pending: another response follows.
    public static let pending = ConnectionResult(rawValue: 0x0001)
    /// 0x0002 Connection refused – PSM not supported.
    public static let psmNotSupported = ConnectionResult(rawValue: 0x0002)

    /// The specification's wording in lower case, or nil for a value it does not define.
    public var name: String? {
        switch rawValue {
        case 0x0000: "success"
        case 0x0001: "pending"
        case 0x0002: "refused, PSM not supported"
        case 0x0003: "refused, security block"
        case 0x0004: "refused, no resources available"
        case 0x0006: "refused, invalid Source CID"
        case 0x0007: "refused, Source CID already allocated"
        default: nil
        }
    }

    /// `0x0002 refused, PSM not supported`.
    public var description: String { hex(rawValue, digits: 4) + (name.map { " \($0)" } ?? "") }
}

/// The Status of a pending Connection Response (Core Vol 3, Part A, 4.3).
public struct ConnectionStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The status as on the wire.
    public let rawValue: UInt16
    /// Wraps a status from the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0000 No further information available.
    public static let noFurtherInformation = ConnectionStatus(rawValue: 0x0000)

    /// The specification's wording in lower case, or nil for a value it does not define.
    public var name: String? {
        switch rawValue {
        case 0x0000: "no further information"
        case 0x0001: "authentication pending"
        case 0x0002: "authorization pending"
        default: nil
        }
    }

    /// `0x0001 authentication pending`.
    public var description: String { hex(rawValue, digits: 4) + (name.map { " \($0)" } ?? "") }
}

/// L2CAP_DISCONNECTION_REQ (0x06) and L2CAP_DISCONNECTION_RSP (0x07), on either signaling
/// channel: both carry the channel as the requester sees it, the response echoing the
/// request.
public struct ChannelDisconnection: Sendable, Equatable {
    /// The CID of the device receiving the request (the one the requester sends to).
    public var destinationCID: UInt16
    /// The CID of the device sending the request (the one it receives on).
    public var sourceCID: UInt16

    /// A request or response from its fields.
    public init(destinationCID: UInt16, sourceCID: UInt16) {
        self.destinationCID = destinationCID
        self.sourceCID = sourceCID
    }

    /// Decodes the command's four data octets.
    public init(data: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(data)
        destinationCID = try reader.readUInt16()
        sourceCID = try reader.readUInt16()
    }

    /// The command's data.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 4)
        writer.write(destinationCID)
        writer.write(sourceCID)
        return writer.bytes
    }
}
