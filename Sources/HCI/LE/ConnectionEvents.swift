import BluetoothCore

/// The link parameters a connection runs with.
public struct LEConnectionParameters: Sendable, Equatable {
    /// Connection interval, units of 1.25 ms.
    public var interval: UInt16
    /// Peripheral latency, in connection events.
    public var latency: UInt16
    /// Supervision timeout, units of 10 ms.
    public var supervisionTimeout: UInt16

    /// Parameters as reported by the controller.
    public init(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    /// `interval 30.00 ms, latency 0, supervision timeout 4000 ms`.
    public var description: String {
        let milliseconds = Double(interval) * 1.25
        return "interval \(milliseconds) ms, latency \(latency), supervision timeout \(Int(supervisionTimeout) * 10) ms"
    }
}

/// The LE Meta subevents about connections, decoded.
public enum LEConnectionEvent: Sendable, Equatable {
    /// LE Connection Complete (0x01) or LE Enhanced Connection Complete v1/v2 (0x0A/0x29).
    case connectionComplete(status: HCIStatus, handle: ConnectionHandle, role: UInt8, peerAddressType: UInt8,
                            peerAddress: BluetoothAddress, parameters: LEConnectionParameters)
    /// LE Connection Update Complete (0x03).
    case connectionUpdateComplete(status: HCIStatus, handle: ConnectionHandle, parameters: LEConnectionParameters)
    /// LE Read Remote Features Complete (0x04).
    case remoteFeaturesComplete(status: HCIStatus, handle: ConnectionHandle, features: LEFeatures)
    /// LE Remote Connection Parameter Request (0x06): the peer asks for new parameters; the
    /// host must answer with the Reply or the Negative Reply command.
    case remoteConnectionParameterRequest(handle: ConnectionHandle, parameters: LEConnectionRequest)
    /// LE Data Length Change (0x07): the maximum payload octets and times now in use.
    case dataLengthChange(handle: ConnectionHandle, maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16)
    /// LE PHY Update Complete (0x0C): 1 = 1M, 2 = 2M, 3 = Coded.
    case phyUpdateComplete(status: HCIStatus, handle: ConnectionHandle, txPHY: UInt8, rxPHY: UInt8)

    /// Decodes a connection subevent; `nil` for other subevents. Octets past the
    /// subevent's format are ignored (the tolerance rule).
    public static func decode(_ event: LEMetaEvent) throws(DecodingError) -> LEConnectionEvent? {
        try decodeCountingExtraOctets(event)?.event
    }

    /// Decodes a connection subevent and counts the octets past its format, which are
    /// ignored; `nil` for other subevents.
    public static func decodeCountingExtraOctets(_ event: LEMetaEvent) throws(DecodingError) -> (event: LEConnectionEvent, extraOctets: Int)? {
        var reader = ByteReader(event.parameters)
        let result: LEConnectionEvent
        switch event.subeventCode {
        case 0x01, 0x0A, 0x29:
            let status = HCIStatus(rawValue: try reader.readUInt8())
            let handle = try ConnectionHandle(from: &reader)
            let role = try reader.readUInt8()
            let addressType = try reader.readUInt8()
            let address = try BluetoothAddress(from: &reader)
            if event.subeventCode != 0x01 { _ = try reader.readBytes(12) }  // local and peer resolvable private addresses
            let parameters = LEConnectionParameters(interval: try reader.readUInt16(), latency: try reader.readUInt16(),
                                                    supervisionTimeout: try reader.readUInt16())
            _ = try reader.readUInt8()  // central clock accuracy
            if event.subeventCode == 0x29 { _ = try reader.readBytes(3) }  // advertising handle, sync handle
            result = .connectionComplete(status: status, handle: handle, role: role, peerAddressType: addressType,
                                         peerAddress: address, parameters: parameters)
        case 0x03:
            result = .connectionUpdateComplete(status: HCIStatus(rawValue: try reader.readUInt8()), handle: try ConnectionHandle(from: &reader),
                                               parameters: LEConnectionParameters(interval: try reader.readUInt16(), latency: try reader.readUInt16(),
                                                                                  supervisionTimeout: try reader.readUInt16()))
        case 0x04:
            result = .remoteFeaturesComplete(status: HCIStatus(rawValue: try reader.readUInt8()), handle: try ConnectionHandle(from: &reader),
                                             features: LEFeatures(rawValue: try reader.readUInt64()))
        case 0x06:
            result = .remoteConnectionParameterRequest(
                handle: try ConnectionHandle(from: &reader),
                parameters: LEConnectionRequest(intervalMin: try reader.readUInt16(), intervalMax: try reader.readUInt16(),
                                                latency: try reader.readUInt16(), supervisionTimeout: try reader.readUInt16()))
        case 0x07:
            result = .dataLengthChange(handle: try ConnectionHandle(from: &reader), maxTxOctets: try reader.readUInt16(),
                                       maxTxTime: try reader.readUInt16(), maxRxOctets: try reader.readUInt16(), maxRxTime: try reader.readUInt16())
        case 0x0C:
            result = .phyUpdateComplete(status: HCIStatus(rawValue: try reader.readUInt8()), handle: try ConnectionHandle(from: &reader),
                                        txPHY: try reader.readUInt8(), rxPHY: try reader.readUInt8())
        default:
            return nil
        }
        return (result, reader.skipExtraOctets())
    }

    /// The connection the event is about.
    public var handle: ConnectionHandle {
        switch self {
        case let .connectionComplete(_, handle, _, _, _, _), let .connectionUpdateComplete(_, handle, _),
             let .remoteFeaturesComplete(_, handle, _), let .remoteConnectionParameterRequest(handle, _),
             let .dataLengthChange(handle, _, _, _, _),
             let .phyUpdateComplete(_, handle, _, _):
            handle
        }
    }

    /// The subevent as a controller sends it (for scripted controllers and tests); a
    /// connection complete is encoded as the legacy LE Connection Complete (0x01), with
    /// central clock accuracy 0.
    public func encoded() -> LEMetaEvent {
        var writer = ByteWriter()
        func write(_ parameters: LEConnectionParameters) {
            writer.write(parameters.interval)
            writer.write(parameters.latency)
            writer.write(parameters.supervisionTimeout)
        }
        let code: UInt8
        switch self {
        case let .connectionComplete(status, handle, role, peerAddressType, peerAddress, parameters):
            code = 0x01
            writer.write(status.rawValue)
            writer.write(handle)
            writer.write(role)
            writer.write(peerAddressType)
            peerAddress.encode(to: &writer)
            write(parameters)
            writer.write(UInt8(0))
        case let .connectionUpdateComplete(status, handle, parameters):
            code = 0x03
            writer.write(status.rawValue)
            writer.write(handle)
            write(parameters)
        case let .remoteFeaturesComplete(status, handle, features):
            code = 0x04
            writer.write(status.rawValue)
            writer.write(handle)
            writer.write(features.rawValue)
        case let .remoteConnectionParameterRequest(handle, parameters):
            code = 0x06
            writer.write(handle)
            writer.write(parameters.intervalMin)
            writer.write(parameters.intervalMax)
            writer.write(parameters.latency)
            writer.write(parameters.supervisionTimeout)
        case let .dataLengthChange(handle, maxTxOctets, maxTxTime, maxRxOctets, maxRxTime):
            code = 0x07
            writer.write(handle)
            writer.write(maxTxOctets)
            writer.write(maxTxTime)
            writer.write(maxRxOctets)
            writer.write(maxRxTime)
        case let .phyUpdateComplete(status, handle, txPHY, rxPHY):
            code = 0x0C
            writer.write(status.rawValue)
            writer.write(handle)
            writer.write(txPHY)
            writer.write(rxPHY)
        }
        return LEMetaEvent(subeventCode: code, parameters: writer.bytes[...])
    }
}
