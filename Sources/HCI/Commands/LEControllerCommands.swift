import BluetoothCore

// LE controller commands used at bring-up (Core Vol 4, Part E, 7.8).

/// HCI_LE_Set_Event_Mask (0x2001): which LE Meta subevents the controller may send.
public struct LESetEventMask: HCICommand {
    /// 0x2001: OGF 0x08 (LE Controller), OCF 0x001.
    public static let opcode = HCIOpcode(rawValue: 0x2001)
    /// LE_Event_Mask: bit N enables LE Meta subevent N + 1.
    public var mask: LEEventMask
    /// Enables the LE subevents in `mask`.
    public init(mask: LEEventMask) { self.mask = mask }
    /// LE_Event_Mask.
    public static let layout = MessageLayout("LE_Set_Event_Mask", Self.init(mask:), Field("LE_Event_Mask", \.mask))
}

/// HCI_LE_Read_Buffer_Size [v1] (0x2002). A length of zero means LE shares the BR/EDR
/// buffers reported by ``ReadBufferSize``.
public struct LEReadBufferSize: HCICommand {
    /// 0x2002: OGF 0x08 (LE Controller), OCF 0x002.
    public static let opcode = HCIOpcode(rawValue: 0x2002)
    /// Creates the command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("LE_Read_Buffer_Size", Self.init)

    /// The controller's LE ACL data buffers; zeros mean LE shares the ``ReadBufferSize`` buffers.
    public struct ReturnParameters: HCIParameters {
        /// LE_ACL_Data_Packet_Length: max data octets per LE ACL packet; 0 means no LE buffers.
        public var leACLDataPacketLength: UInt16
        /// Total_Num_LE_ACL_Data_Packets: the number of LE ACL buffers; 0 means no LE buffers.
        public var totalNumLEACLDataPackets: UInt8
        /// Creates the return parameters from their fields.
        public init(leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt8) {
            (self.leACLDataPacketLength, self.totalNumLEACLDataPackets) =
                (leACLDataPacketLength, totalNumLEACLDataPackets)
        }
        /// LE_ACL_Data_Packet_Length, Total_Num_LE_ACL_Data_Packets.
        public static let layout = MessageLayout(
            "LE_Read_Buffer_Size", Self.init(leACLDataPacketLength:totalNumLEACLDataPackets:),
            Field("LE_ACL_Data_Packet_Length", \.leACLDataPacketLength),
            Field("Total_Num_LE_ACL_Data_Packets", \.totalNumLEACLDataPackets))
    }
}

/// HCI_LE_Read_Buffer_Size [v2] (0x2060): LE ACL and ISO buffers.
public struct LEReadBufferSizeV2: HCICommand {
    /// 0x2060: OGF 0x08 (LE Controller), OCF 0x060.
    public static let opcode = HCIOpcode(rawValue: 0x2060)
    /// Creates the command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("LE_Read_Buffer_Size_v2", Self.init)

    /// The controller's LE ACL and ISO data buffers.
    public struct ReturnParameters: HCIParameters {
        /// LE_ACL_Data_Packet_Length: max data octets per LE ACL packet; 0 means no LE buffers.
        public var leACLDataPacketLength: UInt16
        /// Total_Num_LE_ACL_Data_Packets: the number of LE ACL buffers; 0 means no LE buffers.
        public var totalNumLEACLDataPackets: UInt8
        /// ISO_Data_Packet_Length: the most data octets one HCI ISO Data packet may carry.
        public var isoDataPacketLength: UInt16
        /// Total_Num_ISO_Data_Packets: the number of ISO data buffers.
        public var totalNumISODataPackets: UInt8
        /// Creates the return parameters from their fields.
        public init(
            leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt8, isoDataPacketLength: UInt16,
            totalNumISODataPackets: UInt8
        ) {
            self.leACLDataPacketLength = leACLDataPacketLength
            self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
            self.isoDataPacketLength = isoDataPacketLength
            self.totalNumISODataPackets = totalNumISODataPackets
        }
        /// LE_ACL_Data_Packet_Length, Total_Num_LE_ACL_Data_Packets, ISO_Data_Packet_Length,
        /// Total_Num_ISO_Data_Packets.
        public static let layout = MessageLayout(
            "LE_Read_Buffer_Size_v2",
            Self.init(leACLDataPacketLength:totalNumLEACLDataPackets:isoDataPacketLength:totalNumISODataPackets:),
            Field("LE_ACL_Data_Packet_Length", \.leACLDataPacketLength),
            Field("Total_Num_LE_ACL_Data_Packets", \.totalNumLEACLDataPackets),
            Field("ISO_Data_Packet_Length", \.isoDataPacketLength),
            Field("Total_Num_ISO_Data_Packets", \.totalNumISODataPackets))
    }
}

/// HCI_LE_Read_Local_Supported_Features (0x2003).
public struct LEReadLocalSupportedFeatures: HCICommand {
    /// 0x2003: OGF 0x08 (LE Controller), OCF 0x003.
    public static let opcode = HCIOpcode(rawValue: 0x2003)
    /// Creates the command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("LE_Read_Local_Supported_Features", Self.init)

    /// The controller's LE features.
    public struct ReturnParameters: HCIParameters {
        /// LE_Features: the first eight octets of the LE feature mask (Core Vol 6, Part B, 4.6).
        public var features: LEFeatures
        /// Creates the return parameters from the mask.
        public init(features: LEFeatures) { self.features = features }
        /// LE_Features.
        public static let layout = MessageLayout(
            "LE_Read_Local_Supported_Features", Self.init(features:), Field("LE_Features", \.features))
    }
}

/// HCI_LE_Read_Maximum_Data_Length (0x202F): the largest LL payloads the controller supports.
public struct LEReadMaximumDataLength: HCICommand {
    /// 0x202F: OGF 0x08 (LE Controller), OCF 0x02F.
    public static let opcode = HCIOpcode(rawValue: 0x202F)
    /// Creates the command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("LE_Read_Maximum_Data_Length", Self.init)

    /// The largest LL Data PDU payload and airtime the controller supports, each direction.
    public struct ReturnParameters: HCIParameters {
        /// Supported_Max_TX_Octets: max LL Data PDU payload it can send, in octets (27–251).
        public var supportedMaxTxOctets: UInt16
        /// Supported_Max_TX_Time: max time to send one LL Data PDU, in microseconds (328–17040).
        public var supportedMaxTxTime: UInt16
        /// Supported_Max_RX_Octets: max LL Data PDU payload it can receive, in octets (27–251).
        public var supportedMaxRxOctets: UInt16
        /// Supported_Max_RX_Time: max time to receive one LL Data PDU, in microseconds (328–17040).
        public var supportedMaxRxTime: UInt16
        /// Creates the return parameters from their fields.
        public init(
            supportedMaxTxOctets: UInt16, supportedMaxTxTime: UInt16, supportedMaxRxOctets: UInt16,
            supportedMaxRxTime: UInt16
        ) {
            (self.supportedMaxTxOctets, self.supportedMaxTxTime, self.supportedMaxRxOctets, self.supportedMaxRxTime) =
                (supportedMaxTxOctets, supportedMaxTxTime, supportedMaxRxOctets, supportedMaxRxTime)
        }
        /// Supported_Max_TX_Octets, Supported_Max_TX_Time, Supported_Max_RX_Octets,
        /// Supported_Max_RX_Time.
        public static let layout = MessageLayout(
            "LE_Read_Maximum_Data_Length",
            Self.init(supportedMaxTxOctets:supportedMaxTxTime:supportedMaxRxOctets:supportedMaxRxTime:),
            Field("Supported_Max_TX_Octets", \.supportedMaxTxOctets),
            Field("Supported_Max_TX_Time", \.supportedMaxTxTime),
            Field("Supported_Max_RX_Octets", \.supportedMaxRxOctets),
            Field("Supported_Max_RX_Time", \.supportedMaxRxTime))
    }
}
