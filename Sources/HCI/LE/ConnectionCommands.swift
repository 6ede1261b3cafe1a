import BluetoothCore

// LE connection commands (Core Vol 4, Part E, 7.8.12, 7.8.13, 7.8.18, 7.8.21, 7.8.31,
// 7.8.32, 7.8.33, 7.8.47, 7.8.49, 7.8.66) and HCI_Read_RSSI (7.5.4).

/// Connection parameters requested when initiating or updating a connection.
public struct LEConnectionRequest: Sendable, Equatable {
    /// Minimum connection interval, units of 1.25 ms (0x0006–0x0C80).
    public var intervalMin: UInt16
    /// Maximum connection interval, units of 1.25 ms.
    public var intervalMax: UInt16
    /// Peripheral latency, in connection events it may skip.
    public var latency: UInt16
    /// Supervision timeout, units of 10 ms (0x000A–0x0C80).
    public var supervisionTimeout: UInt16

    /// 30–50 ms interval, no latency, 4 s supervision timeout: a responsive default.
    public init(intervalMin: UInt16 = 24, intervalMax: UInt16 = 40, latency: UInt16 = 0, supervisionTimeout: UInt16 = 400) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    fileprivate func encode(to writer: inout ByteWriter) {
        writer.write(intervalMin)
        writer.write(intervalMax)
        writer.write(latency)
        writer.write(supervisionTimeout)
        writer.write(UInt16(0))  // Min_CE_Length
        writer.write(UInt16(0))  // Max_CE_Length
    }

    fileprivate init(from reader: inout ByteReader) throws(DecodingError) {
        intervalMin = try reader.readUInt16()
        intervalMax = try reader.readUInt16()
        latency = try reader.readUInt16()
        supervisionTimeout = try reader.readUInt16()
        _ = try reader.readUInt16()
        _ = try reader.readUInt16()
    }
}

/// HCI_LE_Create_Connection (0x200D): initiate a connection (legacy).
public struct LECreateConnection: HCICommand {
    /// OGF 0x08, OCF 0x00D.
    public static let opcode = HCIOpcode(rawValue: 0x200D)
    /// Answered by Command Status; LE Connection Complete follows.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// Scan interval while initiating, units of 0.625 ms.
    public var scanInterval: UInt16 = 0x0060
    /// Scan window while initiating, units of 0.625 ms.
    public var scanWindow: UInt16 = 0x0060
    /// 0x00: connect to `peerAddress`; 0x01: to any device on the filter accept list.
    public var initiatorFilterPolicy: UInt8 = 0
    /// The peer's address type (0x00 public, 0x01 random, 0x02/0x03 identity).
    public var peerAddressType: UInt8
    /// The peer's address.
    public var peerAddress: BluetoothAddress
    /// 0x00 public, 0x01 random.
    public var ownAddressType: UInt8 = 0
    /// The connection parameters asked for.
    public var parameters: LEConnectionRequest

    /// Connect to `peerAddress`.
    public init(peerAddressType: UInt8, peerAddress: BluetoothAddress, parameters: LEConnectionRequest = .init()) {
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.parameters = parameters
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        scanInterval = try reader.readUInt16()
        scanWindow = try reader.readUInt16()
        initiatorFilterPolicy = try reader.readUInt8()
        peerAddressType = try reader.readUInt8()
        peerAddress = try BluetoothAddress(from: &reader)
        ownAddressType = try reader.readUInt8()
        parameters = try LEConnectionRequest(from: &reader)
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(scanInterval)
        writer.write(scanWindow)
        writer.write(initiatorFilterPolicy)
        writer.write(peerAddressType)
        peerAddress.encode(to: &writer)
        writer.write(ownAddressType)
        parameters.encode(to: &writer)
    }
}

/// HCI_LE_Extended_Create_Connection [v1] (0x2043), initiating on the LE 1M PHY.
public struct LEExtendedCreateConnection: HCICommand {
    /// OGF 0x08, OCF 0x043.
    public static let opcode = HCIOpcode(rawValue: 0x2043)
    /// Answered by Command Status; LE (Enhanced) Connection Complete follows.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// 0x00: connect to `peerAddress`.
    public var initiatorFilterPolicy: UInt8 = 0
    /// 0x00 public, 0x01 random.
    public var ownAddressType: UInt8 = 0
    /// The peer's address type.
    public var peerAddressType: UInt8
    /// The peer's address.
    public var peerAddress: BluetoothAddress
    /// Scan interval on the 1M PHY, units of 0.625 ms.
    public var scanInterval: UInt16 = 0x0060
    /// Scan window on the 1M PHY, units of 0.625 ms.
    public var scanWindow: UInt16 = 0x0060
    /// The connection parameters asked for.
    public var parameters: LEConnectionRequest

    /// Connect to `peerAddress` on the 1M PHY.
    public init(peerAddressType: UInt8, peerAddress: BluetoothAddress, parameters: LEConnectionRequest = .init()) {
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.parameters = parameters
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        initiatorFilterPolicy = try reader.readUInt8()
        ownAddressType = try reader.readUInt8()
        peerAddressType = try reader.readUInt8()
        peerAddress = try BluetoothAddress(from: &reader)
        let phys = try reader.readUInt8()
        guard phys == 0x01 else { throw .invalidValue(field: "Initiating_PHYs (only LE 1M is modelled)", value: UInt64(phys)) }
        scanInterval = try reader.readUInt16()
        scanWindow = try reader.readUInt16()
        parameters = try LEConnectionRequest(from: &reader)
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(initiatorFilterPolicy)
        writer.write(ownAddressType)
        writer.write(peerAddressType)
        peerAddress.encode(to: &writer)
        writer.write(UInt8(0x01))
        writer.write(scanInterval)
        writer.write(scanWindow)
        parameters.encode(to: &writer)
    }
}

/// HCI_LE_Create_Connection_Cancel (0x200E): stop initiating; LE Connection Complete
/// with status 0x02 follows.
public struct LECreateConnectionCancel: HCICommand {
    /// OGF 0x08, OCF 0x00E.
    public static let opcode = HCIOpcode(rawValue: 0x200E)
    /// No parameters.
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}
}

/// A command whose only parameter is a connection handle.
public protocol HandleCommand: HCICommand {
    /// The connection.
    var handle: ConnectionHandle { get }
    /// The command for `handle`.
    init(handle: ConnectionHandle)
}

extension HandleCommand {
    public init(from reader: inout ByteReader) throws(DecodingError) { self.init(handle: try ConnectionHandle(from: &reader)) }
    public func encode(to writer: inout ByteWriter) { writer.write(handle) }
}

/// A command whose parameters are a connection handle and a reason (Disconnect, LE Remote
/// Connection Parameter Request Negative Reply).
public protocol HandleReasonCommand: HCICommand {
    /// The connection.
    var handle: ConnectionHandle { get }
    /// The reason, an HCI error code.
    var reason: HCIStatus { get }
    /// The command for `handle` with `reason`.
    init(handle: ConnectionHandle, reason: HCIStatus)
}

extension HandleReasonCommand {
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let handle = try ConnectionHandle(from: &reader)
        self.init(handle: handle, reason: HCIStatus(rawValue: try reader.readUInt8()))
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(reason.rawValue)
    }
}

/// Return parameters that are just the connection handle the command acted on.
public struct ConnectionHandleReturn: HCIParameters {
    /// The connection.
    public var handle: ConnectionHandle
    /// Return parameters for `handle`.
    public init(handle: ConnectionHandle) { self.handle = handle }
    public init(from reader: inout ByteReader) throws(DecodingError) { handle = try ConnectionHandle(from: &reader) }
    public func encode(to writer: inout ByteWriter) { writer.write(handle) }
}

/// HCI_LE_Read_Remote_Features (0x2016): LE Read Remote Features Complete follows.
public struct LEReadRemoteFeatures: HandleCommand {
    /// OGF 0x08, OCF 0x016.
    public static let opcode = HCIOpcode(rawValue: 0x2016)
    /// Answered by Command Status.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// The connection.
    public var handle: ConnectionHandle
    /// Read the features of the peer on `handle`.
    public init(handle: ConnectionHandle) { self.handle = handle }
}

/// HCI_Read_RSSI (0x1405).
public struct ReadRSSI: HandleCommand {
    /// OGF 0x05, OCF 0x005.
    public static let opcode = HCIOpcode(rawValue: 0x1405)
    /// The connection.
    public var handle: ConnectionHandle
    /// Read the RSSI of `handle`.
    public init(handle: ConnectionHandle) { self.handle = handle }

    /// The handle and the RSSI in dBm (127: not available).
    public struct ReturnParameters: HCIParameters {
        /// The connection.
        public var handle: ConnectionHandle
        /// Signal strength in dBm.
        public var rssi: Int8
        /// Return parameters.
        public init(handle: ConnectionHandle, rssi: Int8) {
            self.handle = handle
            self.rssi = rssi
        }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            handle = try ConnectionHandle(from: &reader)
            rssi = Int8(bitPattern: try reader.readUInt8())
        }
        public func encode(to writer: inout ByteWriter) {
            writer.write(handle)
            writer.write(UInt8(bitPattern: rssi))
        }
    }
}

/// HCI_LE_Set_Data_Length (0x2022): ask for longer link-layer packets.
public struct LESetDataLength: HCICommand {
    /// OGF 0x08, OCF 0x022.
    public static let opcode = HCIOpcode(rawValue: 0x2022)
    /// The connection.
    public var handle: ConnectionHandle
    /// Preferred maximum payload octets to send (27–251).
    public var txOctets: UInt16
    /// Preferred maximum transmit time in microseconds (328–17040).
    public var txTime: UInt16

    /// Ask for `txOctets`/`txTime` on `handle`.
    public init(handle: ConnectionHandle, txOctets: UInt16, txTime: UInt16) {
        self.handle = handle
        self.txOctets = txOctets
        self.txTime = txTime
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try ConnectionHandle(from: &reader)
        txOctets = try reader.readUInt16()
        txTime = try reader.readUInt16()
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(txOctets)
        writer.write(txTime)
    }

    /// The connection handle.
    public typealias ReturnParameters = ConnectionHandleReturn
}

/// HCI_LE_Set_PHY (0x2032): LE PHY Update Complete follows.
public struct LESetPHY: HCICommand {
    /// OGF 0x08, OCF 0x032.
    public static let opcode = HCIOpcode(rawValue: 0x2032)
    /// Answered by Command Status.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// The connection.
    public var handle: ConnectionHandle
    /// Bit 0: no TX preference; bit 1: no RX preference.
    public var allPHYs: UInt8
    /// Preferred TX PHYs: bit 0 1M, bit 1 2M, bit 2 Coded.
    public var txPHYs: UInt8
    /// Preferred RX PHYs: bit 0 1M, bit 1 2M, bit 2 Coded.
    public var rxPHYs: UInt8
    /// Coded PHY options (0: no preference).
    public var phyOptions: UInt16

    /// Prefer `tx`/`rx` on `handle`.
    public init(handle: ConnectionHandle, allPHYs: UInt8 = 0, txPHYs: UInt8, rxPHYs: UInt8, phyOptions: UInt16 = 0) {
        self.handle = handle
        self.allPHYs = allPHYs
        self.txPHYs = txPHYs
        self.rxPHYs = rxPHYs
        self.phyOptions = phyOptions
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try ConnectionHandle(from: &reader)
        allPHYs = try reader.readUInt8()
        txPHYs = try reader.readUInt8()
        rxPHYs = try reader.readUInt8()
        phyOptions = try reader.readUInt16()
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(allPHYs)
        writer.write(txPHYs)
        writer.write(rxPHYs)
        writer.write(phyOptions)
    }
}

/// HCI_LE_Connection_Update (0x2013): new parameters for a connection; LE Connection
/// Update Complete follows.
public struct LEConnectionUpdate: HCICommand {
    /// OGF 0x08, OCF 0x013.
    public static let opcode = HCIOpcode(rawValue: 0x2013)
    /// Answered by Command Status.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// The connection.
    public var handle: ConnectionHandle
    /// The parameters asked for.
    public var parameters: LEConnectionRequest

    /// Ask for `parameters` on `handle`.
    public init(handle: ConnectionHandle, parameters: LEConnectionRequest) {
        self.handle = handle
        self.parameters = parameters
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try ConnectionHandle(from: &reader)
        parameters = try LEConnectionRequest(from: &reader)
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        parameters.encode(to: &writer)
    }
}

/// HCI_LE_Remote_Connection_Parameter_Request_Reply (0x2020): accept the parameters the
/// peer asked for in an LE Remote Connection Parameter Request.
public struct LERemoteConnectionParameterRequestReply: HCICommand {
    /// OGF 0x08, OCF 0x020.
    public static let opcode = HCIOpcode(rawValue: 0x2020)
    /// The connection.
    public var handle: ConnectionHandle
    /// The interval range, latency and supervision timeout to run with.
    public var parameters: LEConnectionRequest
    /// Minimum length of a connection event, units of 0.625 ms (a hint).
    public var minCELength: UInt16
    /// Maximum length of a connection event, units of 0.625 ms (a hint).
    public var maxCELength: UInt16

    /// Accept `parameters` on `handle`.
    public init(handle: ConnectionHandle, parameters: LEConnectionRequest, minCELength: UInt16 = 0, maxCELength: UInt16 = 0) {
        self.handle = handle
        self.parameters = parameters
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try ConnectionHandle(from: &reader)
        parameters = LEConnectionRequest(intervalMin: try reader.readUInt16(), intervalMax: try reader.readUInt16(),
                                         latency: try reader.readUInt16(), supervisionTimeout: try reader.readUInt16())
        minCELength = try reader.readUInt16()
        maxCELength = try reader.readUInt16()
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(parameters.intervalMin)
        writer.write(parameters.intervalMax)
        writer.write(parameters.latency)
        writer.write(parameters.supervisionTimeout)
        writer.write(minCELength)
        writer.write(maxCELength)
    }

    /// The connection handle.
    public typealias ReturnParameters = ConnectionHandleReturn
}

/// HCI_LE_Remote_Connection_Parameter_Request_Negative_Reply (0x2021): refuse the
/// parameters the peer asked for, with a reason.
public struct LERemoteConnectionParameterRequestNegativeReply: HandleReasonCommand {
    /// OGF 0x08, OCF 0x021.
    public static let opcode = HCIOpcode(rawValue: 0x2021)
    /// The connection handle, as for the positive reply.
    public typealias ReturnParameters = ConnectionHandleReturn
    /// The connection.
    public var handle: ConnectionHandle
    /// Why: usually 0x3B Unacceptable Connection Parameters.
    public var reason: HCIStatus

    /// Refuse the request on `handle`.
    public init(handle: ConnectionHandle, reason: HCIStatus = .unacceptableConnectionParameters) {
        self.handle = handle
        self.reason = reason
    }
}

extension LEConnectionRequest {
    /// Whether the parameters are inside the ranges the Core specification allows
    /// (Vol 4, Part E, 7.8.12): interval 7.5 ms–4 s, latency ≤ 499, timeout 100 ms–32 s
    /// and longer than (1 + latency) × interval × 2.
    public var isValid: Bool {
        guard (6...3200).contains(intervalMin), (6...3200).contains(intervalMax), intervalMin <= intervalMax,
              latency <= 499, (10...3200).contains(supervisionTimeout) else { return false }
        // Timeout (10 ms units) > (1 + latency) × max interval (1.25 ms units) × 2.
        return Int(supervisionTimeout) * 10 * 100 > (1 + Int(latency)) * Int(intervalMax) * 125 * 2
    }
}
