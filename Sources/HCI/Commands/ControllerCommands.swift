// The controller and baseband, informational and status commands used to bring a
// controller up (Core Vol 4, Part E, 7.3 and 7.4).

/// HCI_Reset (0x0C03): the controller returns to its power-on state.
public struct Reset: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x0C03)
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}
}

/// HCI_Set_Event_Mask (0x0C01): which events the controller may send.
public struct SetEventMask: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x0C01)
    public var mask: EventMask
    public init(mask: EventMask) { self.mask = mask }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        mask = EventMask(rawValue: try reader.readUInt64())
    }
    public func encode(to writer: inout ByteWriter) { writer.write(mask.rawValue) }
}

/// HCI_Read_Local_Version_Information (0x1001).
public struct ReadLocalVersionInformation: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x1001)
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}

    /// The controller's HCI and link-layer versions and its manufacturer.
    public struct ReturnParameters: HCIParameters {
        public var hciVersion: UInt8
        public var hciSubversion: UInt16
        public var lmpVersion: UInt8
        public var companyIdentifier: UInt16
        public var lmpSubversion: UInt16

        public init(hciVersion: UInt8, hciSubversion: UInt16, lmpVersion: UInt8, companyIdentifier: UInt16, lmpSubversion: UInt16) {
            self.hciVersion = hciVersion
            self.hciSubversion = hciSubversion
            self.lmpVersion = lmpVersion
            self.companyIdentifier = companyIdentifier
            self.lmpSubversion = lmpSubversion
        }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            hciVersion = try reader.readUInt8()
            hciSubversion = try reader.readUInt16()
            lmpVersion = try reader.readUInt8()
            companyIdentifier = try reader.readUInt16()
            lmpSubversion = try reader.readUInt16()
        }
        public func encode(to writer: inout ByteWriter) {
            writer.write(hciVersion)
            writer.write(hciSubversion)
            writer.write(lmpVersion)
            writer.write(companyIdentifier)
            writer.write(lmpSubversion)
        }
    }
}

/// HCI_Read_Local_Supported_Commands (0x1002).
public struct ReadLocalSupportedCommands: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x1002)
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}

    /// The 64-octet supported-commands bit mask.
    public struct ReturnParameters: HCIParameters {
        public var commands: SupportedCommands
        public init(commands: SupportedCommands) { self.commands = commands }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            commands = SupportedCommands(octets: Array(try reader.readBytes(64)))
        }
        public func encode(to writer: inout ByteWriter) { writer.write(bytes: commands.octets) }
    }
}

/// HCI_Read_Local_Supported_Features (0x1003): the LMP feature mask (page 0).
public struct ReadLocalSupportedFeatures: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x1003)
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}

    /// The eight-octet LMP features.
    public struct ReturnParameters: HCIParameters {
        public var features: LMPFeatures
        public init(features: LMPFeatures) { self.features = features }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            features = LMPFeatures(rawValue: try reader.readUInt64())
        }
        public func encode(to writer: inout ByteWriter) { writer.write(features.rawValue) }
    }
}

/// HCI_Read_Buffer_Size (0x1005): the shared BR/EDR (and, when LE reports none, LE) ACL buffers.
public struct ReadBufferSize: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x1005)
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIParameters {
        public var aclDataPacketLength: UInt16
        public var synchronousDataPacketLength: UInt8
        public var totalNumACLDataPackets: UInt16
        public var totalNumSynchronousDataPackets: UInt16

        public init(aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8, totalNumACLDataPackets: UInt16, totalNumSynchronousDataPackets: UInt16) {
            self.aclDataPacketLength = aclDataPacketLength
            self.synchronousDataPacketLength = synchronousDataPacketLength
            self.totalNumACLDataPackets = totalNumACLDataPackets
            self.totalNumSynchronousDataPackets = totalNumSynchronousDataPackets
        }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            aclDataPacketLength = try reader.readUInt16()
            synchronousDataPacketLength = try reader.readUInt8()
            totalNumACLDataPackets = try reader.readUInt16()
            totalNumSynchronousDataPackets = try reader.readUInt16()
        }
        public func encode(to writer: inout ByteWriter) {
            writer.write(aclDataPacketLength)
            writer.write(synchronousDataPacketLength)
            writer.write(totalNumACLDataPackets)
            writer.write(totalNumSynchronousDataPackets)
        }
    }
}

/// HCI_Read_BD_ADDR (0x1009): the controller's public address.
public struct ReadBDADDR: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x1009)
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIParameters {
        public var address: BluetoothAddress
        public init(address: BluetoothAddress) { self.address = address }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            address = try BluetoothAddress(from: &reader)
        }
        public func encode(to writer: inout ByteWriter) { address.encode(to: &writer) }
    }
}

/// HCI_Disconnect (0x0406): ends a connection; Disconnection Complete follows.
public struct Disconnect: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x0406)
    public static var completion: HCICommandCompletion { .commandStatus }
    public var handle: UInt16
    public var reason: HCIStatus

    public init(handle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) {
        self.handle = handle
        self.reason = reason
    }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readUInt16() & 0x0FFF
        reason = HCIStatus(rawValue: try reader.readUInt8())
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(reason.rawValue)
    }
}
