import BluetoothCore

/// What bring-up learned about the controller.
public struct ControllerInfo: Sendable, Equatable {
    /// HCI_Read_Local_Version_Information.
    public var version: ReadLocalVersionInformation.ReturnParameters
    /// The public address (HCI_Read_BD_ADDR).
    public var address: BluetoothAddress
    /// The public address, or nil when the controller has none: it reads
    /// 00:00:00:00:00:00 then (Vol 4 Part E 7.4.6).
    public var publicAddress: BluetoothAddress? { address.bytes.allSatisfy { $0 == 0 } ? nil : address }
    /// The supported-commands mask.
    public var supportedCommands: SupportedCommands
    /// LMP features page 0.
    public var lmpFeatures: LMPFeatures
    /// LE features.
    public var leFeatures: LEFeatures
    /// The ACL buffers LE traffic uses.
    public var aclBuffers: BufferSize
    /// ISO buffers, when LE Read Buffer Size v2 reported any.
    public var isoBuffers: BufferSize?
    /// LE Read Maximum Data Length, when supported.
    public var maximumDataLength: LEReadMaximumDataLength.ReturnParameters?
    /// The event masks set at bring-up.
    public var eventMask: EventMask
    /// The LE event mask set at bring-up.
    public var leEventMask: LEEventMask

    /// A pool of controller buffers.
    public struct BufferSize: Sendable, Equatable, CustomStringConvertible {
        /// Bytes of data one buffer holds.
        public var length: Int
        /// How many buffers there are.
        public var count: Int
        /// Which command reported them.
        public var source: HCIOpcode

        /// A pool of `count` buffers of `length` bytes, as `source` reported it.
        public init(length: Int, count: Int, source: HCIOpcode) {
            (self.length, self.count, self.source) = (length, count, source)
        }

        /// `12 × 251 bytes (LE_Read_Buffer_Size_v2)`.
        public var description: String { "\(count) × \(length) bytes (\(source.name))" }
    }

    /// `5.4` for HCI version 13.
    public var coreVersion: String { Self.coreVersionName(version.hciVersion) }

    /// The manufacturer's name from the company identifier, when this table knows it.
    public var manufacturer: String { Self.companyName(version.companyIdentifier) }

    /// The Core specification version an HCI/LMP version number stands for.
    public static func coreVersionName(_ version: UInt8) -> String {
        let names = [
            "1.0b", "1.1", "1.2", "2.0", "2.1", "3.0", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0",
            "6.1",
        ]
        return Int(version) < names.count ? names[Int(version)] : "unknown (\(version))"
    }

    /// A few company identifiers seen on Linux boards (Bluetooth SIG assigned numbers).
    public static func companyName(_ identifier: UInt16) -> String {
        let names: [UInt16: String] = [
            0x0000: "Ericsson", 0x0002: "Intel", 0x0006: "Microsoft",
            0x000A: "Qualcomm Technologies International (CSR)",
            0x000D: "Texas Instruments", 0x000F: "Broadcom", 0x001D: "Qualcomm", 0x0030: "ST Microelectronics",
            0x0046: "MediaTek", 0x0059: "Nordic Semiconductor", 0x005D: "Realtek", 0x0060: "RivieraWaves",
            0x0075: "Samsung", 0x0077: "Laird", 0x0131: "Cypress Semiconductor", 0x02E5: "Espressif",
            0x0499: "Ruuvi Innovations", 0x05F1: "The Linux Foundation",
            0xFFFF: "none (test or unassigned)",
        ]
        return names[identifier] ?? "company \(hex(identifier, digits: 4))"
    }
}
