import BluetoothCore

// The controller and baseband, informational and status commands used to bring a
// controller up (Core Vol 4, Part E, 7.3 and 7.4).

/// HCI_Reset (0x0C03): the controller returns to its power-on state.
public struct Reset: HCICommand {
    /// 0x0C03: OGF 0x03 (Controller & Baseband), OCF 0x003.
    public static let opcode = HCIOpcode(rawValue: 0x0C03)
    /// Creates the command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("Reset", Self.init)
}

/// HCI_Set_Event_Mask (0x0C01): which events the controller may send.
public struct SetEventMask: HCICommand {
    /// 0x0C01: OGF 0x03 (Controller & Baseband), OCF 0x001.
    public static let opcode = HCIOpcode(rawValue: 0x0C01)
    /// Event_Mask: a set bit enables the event of that bit, a clear bit suppresses it.
    public var mask: EventMask
    /// Enables the events in `mask`.
    public init(mask: EventMask) { self.mask = mask }
    /// Event_Mask.
    public static let layout = MessageLayout("Set_Event_Mask", Self.init(mask:), Field("Event_Mask", \.mask))
}

/// HCI_Read_Local_Version_Information (0x1001).
public struct ReadLocalVersionInformation: HCICommand {
    /// 0x1001: OGF 0x04 (Informational), OCF 0x001.
    public static let opcode = HCIOpcode(rawValue: 0x1001)
    /// Creates the command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("Read_Local_Version_Information", Self.init)

    /// The controller's HCI and link-layer versions and its manufacturer.
    public struct ReturnParameters: HCIParameters {
        /// HCI_Version: the Core version the HCI implements (Assigned Numbers; 13 is 5.4).
        public var hciVersion: UInt8
        /// HCI_Subversion: the manufacturer's revision of its HCI implementation.
        public var hciSubversion: UInt16
        /// LMP_Version: the Core version of the LMP or Link Layer (numbered as HCI_Version).
        public var lmpVersion: UInt8
        /// Company_Identifier: the controller's manufacturer (Bluetooth SIG company identifier).
        public var companyIdentifier: UInt16
        /// LMP_Subversion: the manufacturer's revision of its LMP or Link Layer implementation.
        public var lmpSubversion: UInt16

        /// Creates the return parameters from their fields.
        public init(
            hciVersion: UInt8, hciSubversion: UInt16, lmpVersion: UInt8, companyIdentifier: UInt16,
            lmpSubversion: UInt16
        ) {
            (self.hciVersion, self.hciSubversion, self.lmpVersion, self.companyIdentifier, self.lmpSubversion) =
                (hciVersion, hciSubversion, lmpVersion, companyIdentifier, lmpSubversion)
        }

        /// HCI_Version, HCI_Subversion, LMP_Version, Company_Identifier, LMP_Subversion.
        public static let layout = MessageLayout(
            "Read_Local_Version_Information",
            Self.init(hciVersion:hciSubversion:lmpVersion:companyIdentifier:lmpSubversion:),
            Field("HCI_Version", \.hciVersion), Field("HCI_Subversion", \.hciSubversion),
            Field("LMP_Version", \.lmpVersion), Field("Company_Identifier", \.companyIdentifier),
            Field("LMP_Subversion", \.lmpSubversion))
    }
}

/// HCI_Read_Local_Supported_Commands (0x1002).
public struct ReadLocalSupportedCommands: HCICommand {
    /// 0x1002: OGF 0x04 (Informational), OCF 0x002.
    public static let opcode = HCIOpcode(rawValue: 0x1002)
    /// Creates the command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("Read_Local_Supported_Commands", Self.init)

    /// The 64-octet supported-commands bit mask.
    public struct ReturnParameters: HCIParameters {
        /// Supported_Commands: one bit per command (Core Vol 4, Part E, 6.27).
        public var commands: SupportedCommands
        /// Creates the return parameters from the mask.
        public init(commands: SupportedCommands) { self.commands = commands }
        /// Supported_Commands.
        public static let layout = MessageLayout(
            "Read_Local_Supported_Commands", Self.init(commands:),
            Field("Supported_Commands", \.commands))
    }
}

/// HCI_Read_Local_Supported_Features (0x1003): the LMP feature mask (page 0).
public struct ReadLocalSupportedFeatures: HCICommand {
    /// 0x1003: OGF 0x04 (Informational), OCF 0x003.
    public static let opcode = HCIOpcode(rawValue: 0x1003)
    /// Creates the command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("Read_Local_Supported_Features", Self.init)

    /// The eight-octet LMP features.
    public struct ReturnParameters: HCIParameters {
        /// LMP_Features: page 0 of the LMP feature mask (Core Vol 2, Part C, 3.3).
        public var features: LMPFeatures
        /// Creates the return parameters from the mask.
        public init(features: LMPFeatures) { self.features = features }
        /// LMP_Features.
        public static let layout = MessageLayout(
            "Read_Local_Supported_Features", Self.init(features:), Field("LMP_Features", \.features))
    }
}

/// HCI_Read_Buffer_Size (0x1005): the shared BR/EDR (and, when LE reports none, LE) ACL buffers.
public struct ReadBufferSize: HCICommand {
    /// 0x1005: OGF 0x04 (Informational), OCF 0x005.
    public static let opcode = HCIOpcode(rawValue: 0x1005)
    /// Creates the command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("Read_Buffer_Size", Self.init)

    /// The controller's ACL and synchronous data buffers (also LE's when LE has none of its own).
    public struct ReturnParameters: HCIParameters {
        /// ACL_Data_Packet_Length: the most data octets one HCI ACL Data packet may carry.
        public var aclDataPacketLength: UInt16
        /// Synchronous_Data_Packet_Length: the most data octets per HCI Synchronous Data packet.
        public var synchronousDataPacketLength: UInt8
        /// Total_Num_ACL_Data_Packets: the number of ACL data buffers in the controller.
        public var totalNumACLDataPackets: UInt16
        /// Total_Num_Synchronous_Data_Packets: the number of synchronous data buffers.
        public var totalNumSynchronousDataPackets: UInt16

        /// Creates the return parameters from their fields.
        public init(
            aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8, totalNumACLDataPackets: UInt16,
            totalNumSynchronousDataPackets: UInt16
        ) {
            self.aclDataPacketLength = aclDataPacketLength
            self.synchronousDataPacketLength = synchronousDataPacketLength
            self.totalNumACLDataPackets = totalNumACLDataPackets
            self.totalNumSynchronousDataPackets = totalNumSynchronousDataPackets
        }

        /// ACL_Data_Packet_Length, Synchronous_Data_Packet_Length, Total_Num_ACL_Data_Packets,
        /// Total_Num_Synchronous_Data_Packets.
        public static let layout = MessageLayout(
            "Read_Buffer_Size",
            Self.init(
                aclDataPacketLength:synchronousDataPacketLength:totalNumACLDataPackets:totalNumSynchronousDataPackets:),
            Field("ACL_Data_Packet_Length", \.aclDataPacketLength),
            Field("Synchronous_Data_Packet_Length", \.synchronousDataPacketLength),
            Field("Total_Num_ACL_Data_Packets", \.totalNumACLDataPackets),
            Field("Total_Num_Synchronous_Data_Packets", \.totalNumSynchronousDataPackets))
    }
}

/// HCI_Read_BD_ADDR (0x1009): the controller's public address.
public struct ReadBDADDR: HCICommand {
    /// 0x1009: OGF 0x04 (Informational), OCF 0x009.
    public static let opcode = HCIOpcode(rawValue: 0x1009)
    /// Creates the command; it has no parameters.
    public init() {}
    /// No parameters.
    public static let layout = MessageLayout("Read_BD_ADDR", Self.init)

    /// The controller's public device address.
    public struct ReturnParameters: HCIParameters {
        /// BD_ADDR: the public address; 00:00:00:00:00:00 from an LE controller that has none.
        public var address: BluetoothAddress
        /// Creates the return parameters from the address.
        public init(address: BluetoothAddress) { self.address = address }
        /// BD_ADDR.
        public static let layout = MessageLayout("Read_BD_ADDR", Self.init(address:), Field("BD_ADDR", \.address))
    }
}

/// HCI_Disconnect (0x0406): ends a connection; Disconnection Complete follows.
public struct Disconnect: HCICommand {
    /// 0x0406: OGF 0x01 (Link Control), OCF 0x006.
    public static let opcode = HCIOpcode(rawValue: 0x0406)
    /// Command Status; Disconnection Complete reports the outcome.
    public static var completion: HCICommandCompletion { .commandStatus }
    /// Connection_Handle of the link to end (12 bits).
    public var handle: ConnectionHandle
    /// Reason told to the peer: 0x05, 0x13–0x15, 0x1A, 0x29 or 0x3B.
    public var reason: HCIStatus

    /// Ends the link `handle`, by default with 0x13 Remote User Terminated Connection.
    public init(handle: ConnectionHandle, reason: HCIStatus = .remoteUserTerminatedConnection) {
        (self.handle, self.reason) = (handle, reason)
    }

    /// Connection_Handle, Reason.
    public static let layout = MessageLayout(
        "Disconnect", Self.init(handle:reason:),
        Field("Connection_Handle", \.handle), Field("Reason", \.reason))
}
