import BluetoothCore
import HCI

// Enhanced credit based connections (Core Vol 3, Part A, 4.25–4.28): up to five channels
// per request, on the LE or the BR/EDR signaling channel. The channels carry K-frames
// (3.4.3), as LE credit based ones do.

/// L2CAP_CREDIT_BASED_CONNECTION_REQ (0x17).
public struct CreditBasedConnectionRequest: Sendable, Equatable {
    /// The most channels one request may open.
    public static let maximumChannels = 5

    /// The SPSM asked for.
    public var psm: PSM
    /// The largest SDU the requester accepts.
    public var mtu: UInt16
    /// The largest K-frame payload the requester accepts.
    public var mps: UInt16
    /// K-frames the responder may send on each channel.
    public var initialCredits: UInt16
    /// The CIDs the requester allocated, one per channel asked for.
    public var sourceCIDs: [UInt16]

    /// A request from its fields.
    public init(psm: PSM, mtu: UInt16, mps: UInt16, initialCredits: UInt16, sourceCIDs: [UInt16]) {
        self.psm = psm
        self.mtu = mtu
        self.mps = mps
        self.initialCredits = initialCredits
        self.sourceCIDs = sourceCIDs
    }

    /// Decodes the command's data: eight octets, then the CIDs. More than
    /// ``maximumChannels`` CIDs are read all the same (a trace shows what was sent); an odd
    /// octet at the end is ignored.
    public init(data: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(data)
        psm = PSM(rawValue: try reader.readUInt16())
        mtu = try reader.readUInt16()
        mps = try reader.readUInt16()
        initialCredits = try reader.readUInt16()
        sourceCIDs = []
        while reader.count >= 2 { sourceCIDs.append(try reader.readUInt16()) }
    }

    /// The command's data.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 8 + 2 * sourceCIDs.count)
        for field in [psm.rawValue, mtu, mps, initialCredits] + sourceCIDs { writer.write(field) }
        return writer.bytes
    }
}

/// L2CAP_CREDIT_BASED_CONNECTION_RSP (0x18).
public struct CreditBasedConnectionResponse: Sendable, Equatable {
    /// The largest SDU the responder accepts.
    public var mtu: UInt16
    /// The largest K-frame payload the responder accepts.
    public var mps: UInt16
    /// K-frames the requester may send on each channel.
    public var initialCredits: UInt16
    /// The outcome.
    public var result: CreditBasedConnectionResult
    /// The CIDs the responder allocated, in the order of the request's; 0x0000 for a
    /// channel it refused.
    public var destinationCIDs: [UInt16]

    /// A response from its fields.
    public init(mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: CreditBasedConnectionResult, destinationCIDs: [UInt16]) {
        self.mtu = mtu
        self.mps = mps
        self.initialCredits = initialCredits
        self.result = result
        self.destinationCIDs = destinationCIDs
    }

    /// Decodes the command's data: eight octets, then the CIDs.
    public init(data: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(data)
        mtu = try reader.readUInt16()
        mps = try reader.readUInt16()
        initialCredits = try reader.readUInt16()
        result = CreditBasedConnectionResult(rawValue: try reader.readUInt16(), enhanced: true)
        destinationCIDs = []
        while reader.count >= 2 { destinationCIDs.append(try reader.readUInt16()) }
    }

    /// The command's data.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 8 + 2 * destinationCIDs.count)
        for field in [mtu, mps, initialCredits, result.rawValue] + destinationCIDs { writer.write(field) }
        return writer.bytes
    }
}

/// L2CAP_CREDIT_BASED_RECONFIGURE_REQ (0x19): new MTU and MPS for channels the requester
/// receives on.
public struct CreditBasedReconfigureRequest: Sendable, Equatable {
    /// The new largest SDU.
    public var mtu: UInt16
    /// The new largest K-frame payload.
    public var mps: UInt16
    /// The channels, by the requester's CIDs.
    public var destinationCIDs: [UInt16]

    /// A request from its fields.
    public init(mtu: UInt16, mps: UInt16, destinationCIDs: [UInt16]) {
        self.mtu = mtu
        self.mps = mps
        self.destinationCIDs = destinationCIDs
    }

    /// Decodes the command's data: four octets, then the CIDs.
    public init(data: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(data)
        mtu = try reader.readUInt16()
        mps = try reader.readUInt16()
        destinationCIDs = []
        while reader.count >= 2 { destinationCIDs.append(try reader.readUInt16()) }
    }

    /// The command's data.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + 2 * destinationCIDs.count)
        for field in [mtu, mps] + destinationCIDs { writer.write(field) }
        return writer.bytes
    }
}

/// The Result of L2CAP_CREDIT_BASED_RECONFIGURE_RSP (0x1A), its only field.
public struct CreditBasedReconfigureResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The result as on the wire.
    public let rawValue: UInt16
    /// Wraps a result from the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Decodes the response's data.
    public init(data: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(data)
        rawValue = try reader.readUInt16()
    }

    /// The specification's wording in lower case, or nil for a value it does not define.
    public var name: String? {
        switch rawValue {
        case 0x0000: "success"
        case 0x0001: "failure, reduction in size of MTU not allowed"
        case 0x0002: "failure, reduction in size of MPS not allowed for more than one channel"
        case 0x0003: "failure, one or more Destination CIDs invalid"
        case 0x0004: "failure, unacceptable parameters"
        default: nil
        }
    }

    /// `0x0001 failure, reduction in size of MTU not allowed`.
    public var description: String { hex(rawValue, digits: 4) + (name.map { " \($0)" } ?? "") }
}
