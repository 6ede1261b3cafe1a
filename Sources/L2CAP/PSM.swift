import BluetoothCore
import HCI

/// A Protocol/Service Multiplexer: what a connection-oriented channel carries (Core Vol 3,
/// Part A, 4.2; on LE the LE_PSM or SPSM of 4.22 and 4.25).
///
/// The fixed values are the Bluetooth SIG's Assigned Numbers (section "Protocol and
/// Service Multiplexers"); the rest are dynamic (LE 0x0080–0x00FF, BR/EDR 0x1001 and up,
/// chosen by a service and published in SDP or GATT) and have no name.
public struct PSM: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The PSM as on the wire.
    public let rawValue: UInt16
    /// Wraps a PSM from the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0001 Service Discovery Protocol.
    public static let sdp = PSM(rawValue: 0x0001)
    /// 0x0003 RFCOMM.
    public static let rfcomm = PSM(rawValue: 0x0003)
    /// 0x0019 Audio/Video Distribution Transport Protocol.
    public static let avdtp = PSM(rawValue: 0x0019)
    /// 0x001F the Attribute Protocol over a BR/EDR channel in basic mode.
    public static let att = PSM(rawValue: 0x001F)
    /// 0x0023 Internet Protocol Support Profile.
    public static let ipsp = PSM(rawValue: 0x0023)
    /// 0x0027 Enhanced ATT: the Attribute Protocol over enhanced credit-based channels.
    public static let eatt = PSM(rawValue: 0x0027)

    /// The LE PSMs a service may take for itself (4.22): 0x0080–0x00FF.
    public static let dynamicLE: ClosedRange<UInt16> = 0x0080...0x00FF

    /// The Assigned Numbers name (`AVDTP`, `HID_Control`), or nil for a dynamic or
    /// unassigned value.
    public var name: String? {
        switch rawValue {
        case 0x0001: "SDP"
        case 0x0003: "RFCOMM"
        case 0x0005: "TCS-BIN"
        case 0x0007: "TCS-BIN-CORDLESS"
        case 0x000F: "BNEP"
        case 0x0011: "HID_Control"
        case 0x0013: "HID_Interrupt"
        case 0x0015: "UPnP"
        case 0x0017: "AVCTP"
        case 0x0019: "AVDTP"
        case 0x001B: "AVCTP_Browsing"
        case 0x001D: "UDI_C-Plane"
        case 0x001F: "ATT"
        case 0x0021: "3DSP"
        case 0x0023: "LE_PSM_IPSP"
        case 0x0025: "OTS"
        case 0x0027: "EATT"
        default: nil
        }
    }

    /// Whether the channel carries ATT PDUs (ATT over BR/EDR, and EATT), which a trace
    /// decodes and counts exactly like ATT on the fixed channel 0x0004.
    public var carriesATT: Bool { self == .att || self == .eatt }

    /// `PSM 0x0019 AVDTP`, or `PSM 0x1001` for one with no name.
    public var description: String {
        "PSM \(hex(rawValue, digits: 4))" + (name.map { " \($0)" } ?? "")
    }
}
