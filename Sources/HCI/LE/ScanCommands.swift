import BluetoothCore

// LE scanning commands (Core Vol 4, Part E, 7.8.10, 7.8.11, 7.8.64, 7.8.65).

/// Passive or active scanning: an active scanner sends scan requests and receives scan responses.
public enum LEScanType: UInt8, Sendable {
    /// Listen only.
    case passive = 0x00
    /// Send scan requests to scannable advertisers.
    case active = 0x01
}

/// HCI_LE_Set_Scan_Parameters (0x200B): legacy scanning.
public struct LESetScanParameters: HCICommand {
    /// OGF 0x08, OCF 0x00B.
    public static let opcode = HCIOpcode(rawValue: 0x200B)
    /// Passive or active.
    public var scanType: LEScanType
    /// Time between scan starts, in units of 0.625 ms (0x0004–0x4000).
    public var interval: UInt16
    /// Scan duration within each interval, in units of 0.625 ms; at most `interval`.
    public var window: UInt16
    /// 0x00 public, 0x01 random, 0x02/0x03 resolvable private with public/random fallback.
    public var ownAddressType: UInt8
    /// 0x00 accept all advertisements (the filter accept list is not used).
    public var filterPolicy: UInt8

    /// Scanning parameters.
    public init(
        scanType: LEScanType, interval: UInt16, window: UInt16, ownAddressType: UInt8 = 0, filterPolicy: UInt8 = 0
    ) {
        (self.scanType, self.interval, self.window, self.ownAddressType, self.filterPolicy) =
            (scanType, interval, window, ownAddressType, filterPolicy)
    }

    /// LE_Scan_Type, LE_Scan_Interval, LE_Scan_Window, Own_Address_Type, Scanning_Filter_Policy.
    public static let layout = MessageLayout(
        "LE_Set_Scan_Parameters", Self.init(scanType:interval:window:ownAddressType:filterPolicy:),
        .code("LE_Scan_Type", \.scanType), Field("LE_Scan_Interval", \.interval),
        Field("LE_Scan_Window", \.window), Field("Own_Address_Type", \.ownAddressType),
        Field("Scanning_Filter_Policy", \.filterPolicy))
}

/// HCI_LE_Set_Scan_Enable (0x200C).
public struct LESetScanEnable: HCICommand {
    /// OGF 0x08, OCF 0x00C.
    public static let opcode = HCIOpcode(rawValue: 0x200C)
    /// Whether scanning runs.
    public var enable: Bool
    /// Whether the controller drops repeated reports of the same advertiser.
    public var filterDuplicates: Bool

    /// Starts or stops legacy scanning.
    public init(enable: Bool, filterDuplicates: Bool) {
        (self.enable, self.filterDuplicates) = (enable, filterDuplicates)
    }

    /// LE_Scan_Enable, Filter_Duplicates.
    public static let layout = MessageLayout(
        "LE_Set_Scan_Enable", Self.init(enable:filterDuplicates:),
        .flag("LE_Scan_Enable", \.enable), .flag("Filter_Duplicates", \.filterDuplicates))
}

/// HCI_LE_Set_Extended_Scan_Parameters (0x2041): scanning on the LE 1M PHY (and Coded,
/// when asked), receiving extended advertising.
public struct LESetExtendedScanParameters: HCICommand {
    /// OGF 0x08, OCF 0x041.
    public static let opcode = HCIOpcode(rawValue: 0x2041)

    /// Parameters for one scanning PHY.
    public struct PHYParameters: Sendable, Equatable, LaidOut {
        /// Passive or active.
        public var scanType: LEScanType
        /// Time between scan starts, in units of 0.625 ms.
        public var interval: UInt16
        /// Scan duration within each interval, in units of 0.625 ms.
        public var window: UInt16

        /// Parameters for one PHY.
        public init(scanType: LEScanType, interval: UInt16, window: UInt16) {
            (self.scanType, self.interval, self.window) = (scanType, interval, window)
        }

        /// Scan_Type, Scan_Interval, Scan_Window: one entry of each array.
        public static let layout = MessageLayout(
            "Scanning_PHY", Self.init(scanType:interval:window:),
            .code("Scan_Type", \.scanType), Field("Scan_Interval", \.interval),
            Field("Scan_Window", \.window))
    }

    /// 0x00 public, 0x01 random.
    public var ownAddressType: UInt8
    /// 0x00 accept all advertisements.
    public var filterPolicy: UInt8
    /// Bit 0 LE 1M, bit 2 LE Coded: which PHYs to scan; one ``PHYParameters`` per set bit.
    public var scanningPHYs: UInt8
    /// The parameters of each PHY in `scanningPHYs`, lowest bit first.
    public var phys: [PHYParameters]

    /// Extended scanning parameters.
    public init(ownAddressType: UInt8 = 0, filterPolicy: UInt8 = 0, scanningPHYs: UInt8 = 0x01, phys: [PHYParameters]) {
        (self.ownAddressType, self.filterPolicy, self.scanningPHYs, self.phys) =
            (ownAddressType, filterPolicy, scanningPHYs, phys)
    }

    /// Own_Address_Type, Scanning_Filter_Policy, Scanning_PHYs, then a ``PHYParameters`` for
    /// each bit set in Scanning_PHYs: one field, since the bits say how many follow.
    public static let layout = MessageLayout(
        "LE_Set_Extended_Scan_Parameters",
        { Self(ownAddressType: $0, filterPolicy: $1, scanningPHYs: $2.bits, phys: $2.phys) },
        Field("Own_Address_Type", \.ownAddressType), Field("Scanning_Filter_Policy", \.filterPolicy),
        Field<Self, (bits: UInt8, phys: [PHYParameters])>(
            "Scanning_PHYs, Scan_Type[i], Scan_Interval[i], Scan_Window[i]",
            read: { reader throws(DecodingError) in
                let bits = try reader.readUInt8()
                var phys: [PHYParameters] = []
                for _ in 0..<bits.nonzeroBitCount { phys.append(try PHYParameters(from: &reader)) }
                return (bits, phys)
            },
            write: { command, writer in
                writer.write(command.scanningPHYs)
                for phy in command.phys { phy.encode(to: &writer) }
            }))
}

/// HCI_LE_Set_Extended_Scan_Enable (0x2042).
public struct LESetExtendedScanEnable: HCICommand {
    /// OGF 0x08, OCF 0x042.
    public static let opcode = HCIOpcode(rawValue: 0x2042)
    /// Whether scanning runs.
    public var enable: Bool
    /// 0x00 off, 0x01 on, 0x02 on and reset each scan period.
    public var filterDuplicates: UInt8
    /// Scan duration in units of 10 ms; 0 scans until disabled.
    public var duration: UInt16
    /// Time between scan durations in units of 1.28 s; 0 scans once.
    public var period: UInt16

    /// Starts or stops extended scanning.
    public init(enable: Bool, filterDuplicates: UInt8, duration: UInt16 = 0, period: UInt16 = 0) {
        (self.enable, self.filterDuplicates, self.duration, self.period) = (enable, filterDuplicates, duration, period)
    }

    /// Enable, Filter_Duplicates, Duration, Period.
    public static let layout = MessageLayout(
        "LE_Set_Extended_Scan_Enable", Self.init(enable:filterDuplicates:duration:period:),
        .flag("Enable", \.enable), Field("Filter_Duplicates", \.filterDuplicates),
        Field("Duration", \.duration), Field("Period", \.period))
}
