import BluetoothCore

/// An HCI status or error code (Core Vol 1, Part F), as carried by Command Complete,
/// Command Status, connection events and disconnection reasons.
///
/// A struct rather than an enum so that codes newer than this table still round-trip; each
/// known code has a readable ``name``.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as sent on the wire.
    public let rawValue: UInt8

    /// Wraps a code from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Whether the code is 0x00 Success.
    public var isSuccess: Bool { rawValue == 0 }

    /// The specification's name in lower camel case, or `nil` for a code the table lacks.
    public var name: String? { Self.names[rawValue] }

    /// `0x3e connectionFailedToBeEstablished`.
    public var description: String { "\(hex(rawValue, digits: 2)) \(name ?? "unknown")" }

    /// 0x00 Success.
    public static let success = HCIStatus(rawValue: 0x00)
    /// 0x01 Unknown HCI Command.
    public static let unknownHCICommand = HCIStatus(rawValue: 0x01)
    /// 0x02 Unknown Connection Identifier.
    public static let unknownConnectionIdentifier = HCIStatus(rawValue: 0x02)
    /// 0x03 Hardware Failure.
    public static let hardwareFailure = HCIStatus(rawValue: 0x03)
    /// 0x05 Authentication Failure.
    public static let authenticationFailure = HCIStatus(rawValue: 0x05)
    /// 0x06 PIN or Key Missing.
    public static let pinOrKeyMissing = HCIStatus(rawValue: 0x06)
    /// 0x07 Memory Capacity Exceeded.
    public static let memoryCapacityExceeded = HCIStatus(rawValue: 0x07)
    /// 0x08 Connection Timeout (supervision timeout).
    public static let connectionTimeout = HCIStatus(rawValue: 0x08)
    /// 0x09 Connection Limit Exceeded.
    public static let connectionLimitExceeded = HCIStatus(rawValue: 0x09)
    /// 0x0B Connection Already Exists.
    public static let connectionAlreadyExists = HCIStatus(rawValue: 0x0B)
    /// 0x0C Command Disallowed.
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    /// 0x11 Unsupported Feature or Parameter Value.
    public static let unsupportedFeatureOrParameterValue = HCIStatus(rawValue: 0x11)
    /// 0x12 Invalid HCI Command Parameters.
    public static let invalidHCICommandParameters = HCIStatus(rawValue: 0x12)
    /// 0x13 Remote User Terminated Connection.
    public static let remoteUserTerminatedConnection = HCIStatus(rawValue: 0x13)
    /// 0x14 Remote Device Terminated Connection due to Low Resources.
    public static let remoteDeviceTerminatedLowResources = HCIStatus(rawValue: 0x14)
    /// 0x15 Remote Device Terminated Connection due to Power Off.
    public static let remoteDeviceTerminatedPowerOff = HCIStatus(rawValue: 0x15)
    /// 0x16 Connection Terminated By Local Host.
    public static let connectionTerminatedByLocalHost = HCIStatus(rawValue: 0x16)
    /// 0x1A Unsupported Remote Feature.
    public static let unsupportedRemoteFeature = HCIStatus(rawValue: 0x1A)
    /// 0x1F Unspecified Error.
    public static let unspecifiedError = HCIStatus(rawValue: 0x1F)
    /// 0x22 LMP Response Timeout / LL Response Timeout.
    public static let lmpLLResponseTimeout = HCIStatus(rawValue: 0x22)
    /// 0x2F Insufficient Security.
    public static let insufficientSecurity = HCIStatus(rawValue: 0x2F)
    /// 0x3A Controller Busy.
    public static let controllerBusy = HCIStatus(rawValue: 0x3A)
    /// 0x3B Unacceptable Connection Parameters.
    public static let unacceptableConnectionParameters = HCIStatus(rawValue: 0x3B)
    /// 0x3C Advertising Timeout.
    public static let advertisingTimeout = HCIStatus(rawValue: 0x3C)
    /// 0x3D Connection Terminated due to MIC Failure.
    public static let connectionTerminatedMICFailure = HCIStatus(rawValue: 0x3D)
    /// 0x3E Connection Failed to be Established / Synchronization Timeout.
    public static let connectionFailedToBeEstablished = HCIStatus(rawValue: 0x3E)
    /// 0x44 Operation Cancelled by Host.
    public static let operationCancelledByHost = HCIStatus(rawValue: 0x44)

    private static let names: [UInt8: String] = [
        0x00: "success", 0x01: "unknownHCICommand", 0x02: "unknownConnectionIdentifier",
        0x03: "hardwareFailure", 0x04: "pageTimeout", 0x05: "authenticationFailure",
        0x06: "pinOrKeyMissing", 0x07: "memoryCapacityExceeded", 0x08: "connectionTimeout",
        0x09: "connectionLimitExceeded", 0x0A: "synchronousConnectionLimitExceeded",
        0x0B: "connectionAlreadyExists", 0x0C: "commandDisallowed",
        0x0D: "connectionRejectedLimitedResources", 0x0E: "connectionRejectedSecurityReasons",
        0x0F: "connectionRejectedUnacceptableBDADDR", 0x10: "connectionAcceptTimeoutExceeded",
        0x11: "unsupportedFeatureOrParameterValue", 0x12: "invalidHCICommandParameters",
        0x13: "remoteUserTerminatedConnection", 0x14: "remoteDeviceTerminatedLowResources",
        0x15: "remoteDeviceTerminatedPowerOff", 0x16: "connectionTerminatedByLocalHost",
        0x17: "repeatedAttempts", 0x18: "pairingNotAllowed", 0x19: "unknownLMPPDU",
        0x1A: "unsupportedRemoteFeature", 0x1B: "scoOffsetRejected", 0x1C: "scoIntervalRejected",
        0x1D: "scoAirModeRejected", 0x1E: "invalidLMPLLParameters", 0x1F: "unspecifiedError",
        0x20: "unsupportedLMPLLParameterValue", 0x21: "roleChangeNotAllowed",
        0x22: "lmpLLResponseTimeout", 0x23: "lmpLLErrorTransactionCollision",
        0x24: "lmpPDUNotAllowed", 0x25: "encryptionModeNotAcceptable",
        0x26: "linkKeyCannotBeChanged", 0x27: "requestedQoSNotSupported", 0x28: "instantPassed",
        0x29: "pairingWithUnitKeyNotSupported", 0x2A: "differentTransactionCollision",
        0x2C: "qosUnacceptableParameter", 0x2D: "qosRejected",
        0x2E: "channelClassificationNotSupported", 0x2F: "insufficientSecurity",
        0x30: "parameterOutOfMandatoryRange", 0x32: "roleSwitchPending",
        0x34: "reservedSlotViolation", 0x35: "roleSwitchFailed",
        0x36: "extendedInquiryResponseTooLarge", 0x37: "secureSimplePairingNotSupportedByHost",
        0x38: "hostBusyPairing", 0x39: "connectionRejectedNoSuitableChannelFound",
        0x3A: "controllerBusy", 0x3B: "unacceptableConnectionParameters",
        0x3C: "advertisingTimeout", 0x3D: "connectionTerminatedMICFailure",
        0x3E: "connectionFailedToBeEstablished", 0x3F: "macConnectionFailed",
        0x40: "coarseClockAdjustmentRejected", 0x41: "type0SubmapNotDefined",
        0x42: "unknownAdvertisingIdentifier", 0x43: "limitReached",
        0x44: "operationCancelledByHost", 0x45: "packetTooLong", 0x46: "tooLate",
        0x47: "tooEarly", 0x48: "insufficientChannels",
    ]
}
