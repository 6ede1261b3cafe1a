import BluetoothCore

// What a controller says it can do, and the masks that choose which events it sends.

/// The 64-octet bit mask of HCI_Read_Local_Supported_Commands (Core Vol 4, Part E, 6.27).
public struct SupportedCommands: Sendable, Equatable {
    /// The raw octets, octet 0 first.
    public let octets: [UInt8]

    /// Wraps the octets; shorter masks are padded with zeros.
    public init(octets: [UInt8]) {
        self.octets = octets + Array(repeating: 0, count: max(0, 64 - octets.count))
    }

    /// How many commands the controller lists as supported.
    public var count: Int { octets.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// Whether the controller lists `opcode`; `nil` if this table does not know where the
    /// command's bit is.
    public func supports(_ opcode: HCIOpcode) -> Bool? {
        guard let (octet, bit) = Self.positions[opcode.rawValue] else { return nil }
        return octets[octet] & (1 << bit) != 0
    }

    /// Whether the controller lists the command `C`; unknown positions count as supported,
    /// so a gap in this table never disables a feature.
    public func supports<C: HCICommand>(_ command: C.Type) -> Bool { supports(C.opcode) ?? true }

    /// Sets the bit of each command (for emulated controllers in tests).
    package static func with(_ opcodes: [HCIOpcode]) -> SupportedCommands {
        var octets = [UInt8](repeating: 0, count: 64)
        for opcode in opcodes {
            if let (octet, bit) = positions[opcode.rawValue] { octets[octet] |= 1 << bit }
        }
        return SupportedCommands(octets: octets)
    }

    /// Octet and bit of the commands this stack may send (Core Vol 4, Part E, 6.27).
    static let positions: [UInt16: (Int, Int)] = [
        0x0406: (0, 5),  // Disconnect
        0x0C01: (5, 6),  // Set_Event_Mask
        0x0C03: (5, 7),  // Reset
        0x0C33: (10, 6),  // Host_Buffer_Size
        0x1001: (14, 3),  // Read_Local_Version_Information
        0x1003: (14, 5),  // Read_Local_Supported_Features
        0x1005: (14, 7),  // Read_Buffer_Size
        0x1009: (15, 1),  // Read_BD_ADDR
        0x0C63: (22, 2),  // Set_Event_Mask_Page_2
        0x2001: (25, 0),  // LE_Set_Event_Mask
        0x2002: (25, 1),  // LE_Read_Buffer_Size
        0x2003: (25, 2),  // LE_Read_Local_Supported_Features
        0x2005: (25, 4),  // LE_Set_Random_Address
        0x2006: (25, 5),  // LE_Set_Advertising_Parameters
        0x2007: (25, 6),  // LE_Read_Advertising_Physical_Channel_Tx_Power
        0x2008: (25, 7),  // LE_Set_Advertising_Data
        0x2009: (26, 0),  // LE_Set_Scan_Response_Data
        0x200A: (26, 1),  // LE_Set_Advertising_Enable
        0x200B: (26, 2),  // LE_Set_Scan_Parameters
        0x200C: (26, 3),  // LE_Set_Scan_Enable
        0x200D: (26, 4),  // LE_Create_Connection
        0x200E: (26, 5),  // LE_Create_Connection_Cancel
        0x2013: (27, 2),  // LE_Connection_Update
        0x2016: (27, 5),  // LE_Read_Remote_Features
        0x2019: (28, 0),  // LE_Enable_Encryption
        0x201A: (28, 1),  // LE_Long_Term_Key_Request_Reply
        0x201B: (28, 2),  // LE_Long_Term_Key_Request_Negative_Reply
        0x2022: (33, 6),  // LE_Set_Data_Length
        0x202F: (35, 3),  // LE_Read_Maximum_Data_Length
        0x2030: (35, 4),  // LE_Read_PHY
        0x2031: (35, 5),  // LE_Set_Default_PHY
        0x2032: (35, 6),  // LE_Set_PHY
        0x2035: (36, 1),  // LE_Set_Advertising_Set_Random_Address
        0x2036: (36, 2),  // LE_Set_Extended_Advertising_Parameters
        0x2037: (36, 3),  // LE_Set_Extended_Advertising_Data
        0x2038: (36, 4),  // LE_Set_Extended_Scan_Response_Data
        0x2039: (36, 5),  // LE_Set_Extended_Advertising_Enable
        0x203A: (36, 6),  // LE_Read_Maximum_Advertising_Data_Length
        0x203B: (36, 7),  // LE_Read_Number_of_Supported_Advertising_Sets
        0x203C: (37, 0),  // LE_Remove_Advertising_Set
        0x203D: (37, 1),  // LE_Clear_Advertising_Sets
        0x2041: (37, 5),  // LE_Set_Extended_Scan_Parameters
        0x2042: (37, 6),  // LE_Set_Extended_Scan_Enable
        0x2043: (37, 7),  // LE_Extended_Create_Connection
        0x2060: (41, 5),  // LE_Read_Buffer_Size_v2
    ]
}

/// A bit set whose bits have names, printed by name; eight octets on the wire.
public protocol NamedBitSet: OptionSet, Sendable, CustomStringConvertible, WireRawRepresentable
where RawValue == UInt64 {
    /// Names of the bits this table knows, by bit number.
    static var bitNames: [Int: String] { get }
}

extension NamedBitSet {
    /// The names of the set bits, `bit N` for bits the table does not name.
    public var names: [String] {
        (0..<64).filter { rawValue & (1 << UInt64($0)) != 0 }.map { Self.bitNames[$0] ?? "bit \($0)" }
    }

    /// The names of the set bits, comma-separated.
    public var description: String { names.joined(separator: ", ") }

    /// The set with only bit `number`.
    public static func bit(_ number: Int) -> Self { Self(rawValue: 1 << UInt64(number)) }
}

/// LE features of a controller (Core Vol 6, Part B, 4.6), from LE Read Local Supported Features.
public struct LEFeatures: NamedBitSet {
    /// LE feature bits 0–63, bit N of the value being feature bit N.
    public let rawValue: UInt64
    /// Wraps a feature mask as read from the controller.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Bit 0: LE Encryption.
    public static let encryption = bit(0)
    /// Bit 1: Connection Parameters Request procedure.
    public static let connectionParametersRequest = bit(1)
    /// Bit 2: Extended Reject Indication.
    public static let extendedRejectIndication = bit(2)
    /// Bit 3: Peripheral-initiated Features Exchange.
    public static let peripheralInitiatedFeaturesExchange = bit(3)
    /// Bit 4: LE Ping.
    public static let ping = bit(4)
    /// Bit 5: LE Data Packet Length Extension (LL Data PDU payloads above 27 octets).
    public static let dataPacketLengthExtension = bit(5)
    /// Bit 6: LL Privacy (address resolution in the controller).
    public static let llPrivacy = bit(6)
    /// Bit 7: Extended Scanning Filter Policies.
    public static let extendedScanningFilterPolicies = bit(7)
    /// Bit 8: LE 2M PHY.
    public static let twoMegabitPHY = bit(8)
    /// Bit 11: LE Coded PHY.
    public static let codedPHY = bit(11)
    /// Bit 12: LE Extended Advertising.
    public static let extendedAdvertising = bit(12)
    /// Bit 13: LE Periodic Advertising.
    public static let periodicAdvertising = bit(13)
    /// Bit 14: Channel Selection Algorithm #2.
    public static let channelSelectionAlgorithm2 = bit(14)

    /// Specification names of the feature bits this table knows.
    public static let bitNames: [Int: String] = [
        0: "LE Encryption", 1: "Connection Parameters Request", 2: "Extended Reject Indication",
        3: "Peripheral-initiated Features Exchange", 4: "LE Ping", 5: "LE Data Packet Length Extension",
        6: "LL Privacy", 7: "Extended Scanning Filter Policies", 8: "LE 2M PHY",
        9: "Stable Modulation Index - Transmitter", 10: "Stable Modulation Index - Receiver",
        11: "LE Coded PHY", 12: "LE Extended Advertising", 13: "LE Periodic Advertising",
        14: "Channel Selection Algorithm #2", 15: "LE Power Class 1", 16: "Minimum Number of Used Channels",
        17: "Connection CTE Request", 18: "Connection CTE Response", 19: "Connectionless CTE Transmitter",
        20: "Connectionless CTE Receiver", 21: "Antenna Switching During CTE Transmission (AoD)",
        22: "Antenna Switching During CTE Reception (AoA)", 23: "Receiving Constant Tone Extensions",
        24: "Periodic Advertising Sync Transfer - Sender", 25: "Periodic Advertising Sync Transfer - Recipient",
        26: "Sleep Clock Accuracy Updates", 27: "Remote Public Key Validation",
        28: "Connected Isochronous Stream - Central", 29: "Connected Isochronous Stream - Peripheral",
        30: "Isochronous Broadcaster", 31: "Synchronized Receiver",
        32: "Connected Isochronous Stream (Host Support)", 33: "LE Power Control Request",
        34: "LE Power Control Request", 35: "LE Path Loss Monitoring", 36: "Periodic Advertising ADI support",
        37: "Connection Subrating", 38: "Connection Subrating (Host Support)", 39: "Channel Classification",
        40: "Advertising Coding Selection", 41: "Advertising Coding Selection (Host Support)",
        43: "Periodic Advertising with Responses - Advertiser", 44: "Periodic Advertising with Responses - Scanner",
        46: "Channel Sounding",
    ]
}

/// LMP features, page 0 (Core Vol 2, Part C, 3.3); the stack reads only the LE bits.
public struct LMPFeatures: NamedBitSet {
    /// LMP feature page 0 as a little-endian integer: octet N bit M is bit 8N + M.
    public let rawValue: UInt64
    /// Wraps a feature mask as read from the controller.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Bit 37 (octet 4 bit 5): BR/EDR Not Supported.
    public static let brEdrNotSupported = bit(37)
    /// Bit 38 (octet 4 bit 6): LE Supported (Controller).
    public static let leSupportedController = bit(38)
    /// Bit 49 (octet 6 bit 1): Simultaneous LE and BR/EDR to Same Device Capable (Controller).
    public static let simultaneousLEAndBREDR = bit(49)

    /// Specification names of the bits this stack reads.
    public static let bitNames: [Int: String] = [
        37: "BR/EDR Not Supported", 38: "LE Supported (Controller)",
        49: "Simultaneous LE and BR/EDR to Same Device Capable (Controller)",
    ]
}

/// The mask of HCI_Set_Event_Mask (Core Vol 4, Part E, 7.3.1). Command Complete, Command
/// Status and Number Of Completed Packets are always enabled and have no bit.
public struct EventMask: NamedBitSet {
    /// The 64-bit Event_Mask parameter.
    public let rawValue: UInt64
    /// Wraps an Event_Mask value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Bit 4: Disconnection Complete.
    public static let disconnectionComplete = bit(4)
    /// Bit 7: Encryption Change [v1].
    public static let encryptionChange = bit(7)
    /// Bit 11: Read Remote Version Information Complete.
    public static let readRemoteVersionInformationComplete = bit(11)
    /// Bit 15: Hardware Error.
    public static let hardwareError = bit(15)
    /// Bit 25: Data Buffer Overflow.
    public static let dataBufferOverflow = bit(25)
    /// Bit 47: Encryption Key Refresh Complete.
    public static let encryptionKeyRefreshComplete = bit(47)
    /// Bit 61: LE Meta; ``LEEventMask`` then chooses the subevents.
    public static let leMeta = bit(61)

    /// What an LE central host needs.
    public static let leHost: EventMask = [
        .disconnectionComplete, .encryptionChange, .readRemoteVersionInformationComplete,
        .hardwareError, .dataBufferOverflow, .encryptionKeyRefreshComplete, .leMeta,
    ]

    /// Specification names of the bits this stack sets.
    public static let bitNames: [Int: String] = [
        4: "Disconnection Complete", 7: "Encryption Change", 11: "Read Remote Version Information Complete",
        15: "Hardware Error", 25: "Data Buffer Overflow", 47: "Encryption Key Refresh Complete", 61: "LE Meta",
    ]
}

/// The mask of HCI_LE_Set_Event_Mask: bit N enables LE Meta subevent N + 1.
public struct LEEventMask: NamedBitSet {
    /// The 64-bit LE_Event_Mask parameter.
    public let rawValue: UInt64
    /// Wraps an LE_Event_Mask value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The mask bit of LE Meta subevent `code`.
    public static func subevent(_ code: UInt8) -> LEEventMask { bit(Int(code) - 1) }

    /// The controller's default after reset: subevents 0x01 to 0x05.
    public static let `default` = LEEventMask(rawValue: 0x1F)

    /// The subevents an LE central host wants, limited to what `features` make possible:
    /// asking for events of features the controller lacks is what some controllers reject.
    public static func central(for features: LEFeatures) -> LEEventMask {
        var mask = LEEventMask.default  // connection complete, advertising report, update, remote features, LTK request
        if features.contains(.connectionParametersRequest) { mask.insert(.subevent(0x06)) }
        if features.contains(.dataPacketLengthExtension) { mask.insert(.subevent(0x07)) }
        if features.contains(.llPrivacy) || features.contains(.extendedAdvertising) {
            mask.insert(.subevent(0x0A))  // enhanced connection complete
        }
        if features.contains(.twoMegabitPHY) || features.contains(.codedPHY) { mask.insert(.subevent(0x0C)) }
        if features.contains(.extendedAdvertising) {
            mask.insert(.subevent(0x0D))  // extended advertising report
            mask.insert(.subevent(0x11))  // scan timeout
        }
        if features.contains(.channelSelectionAlgorithm2) { mask.insert(.subevent(0x14)) }
        return mask
    }

    /// Subevent names by bit (bit N is subevent N + 1), from ``HCINames``.
    public static var bitNames: [Int: String] {
        var names: [Int: String] = [:]
        for bit in 0..<64 { if let name = HCINames.leSubeventNames[UInt8(bit + 1)] { names[bit] = name } }
        return names
    }
}
