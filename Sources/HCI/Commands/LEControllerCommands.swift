// LE controller commands used at bring-up (Core Vol 4, Part E, 7.8).

/// HCI_LE_Set_Event_Mask (0x2001): which LE Meta subevents the controller may send.
public struct LESetEventMask: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x2001)
    public var mask: LEEventMask
    public init(mask: LEEventMask) { self.mask = mask }
    public init(from reader: inout ByteReader) throws(DecodingError) {
        mask = LEEventMask(rawValue: try reader.readUInt64())
    }
    public func encode(to writer: inout ByteWriter) { writer.write(mask.rawValue) }
}

/// HCI_LE_Read_Buffer_Size [v1] (0x2002). A length of zero means LE shares the BR/EDR
/// buffers reported by ``ReadBufferSize``.
public struct LEReadBufferSize: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x2002)
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIParameters {
        public var leACLDataPacketLength: UInt16
        public var totalNumLEACLDataPackets: UInt8
        public init(leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt8) {
            self.leACLDataPacketLength = leACLDataPacketLength
            self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
        }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            leACLDataPacketLength = try reader.readUInt16()
            totalNumLEACLDataPackets = try reader.readUInt8()
        }
        public func encode(to writer: inout ByteWriter) {
            writer.write(leACLDataPacketLength)
            writer.write(totalNumLEACLDataPackets)
        }
    }
}

/// HCI_LE_Read_Buffer_Size [v2] (0x2060): LE ACL and ISO buffers.
public struct LEReadBufferSizeV2: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x2060)
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIParameters {
        public var leACLDataPacketLength: UInt16
        public var totalNumLEACLDataPackets: UInt8
        public var isoDataPacketLength: UInt16
        public var totalNumISODataPackets: UInt8
        public init(leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt8, isoDataPacketLength: UInt16, totalNumISODataPackets: UInt8) {
            self.leACLDataPacketLength = leACLDataPacketLength
            self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
            self.isoDataPacketLength = isoDataPacketLength
            self.totalNumISODataPackets = totalNumISODataPackets
        }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            leACLDataPacketLength = try reader.readUInt16()
            totalNumLEACLDataPackets = try reader.readUInt8()
            isoDataPacketLength = try reader.readUInt16()
            totalNumISODataPackets = try reader.readUInt8()
        }
        public func encode(to writer: inout ByteWriter) {
            writer.write(leACLDataPacketLength)
            writer.write(totalNumLEACLDataPackets)
            writer.write(isoDataPacketLength)
            writer.write(totalNumISODataPackets)
        }
    }
}

/// HCI_LE_Read_Local_Supported_Features (0x2003).
public struct LEReadLocalSupportedFeatures: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x2003)
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIParameters {
        public var features: LEFeatures
        public init(features: LEFeatures) { self.features = features }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            features = LEFeatures(rawValue: try reader.readUInt64())
        }
        public func encode(to writer: inout ByteWriter) { writer.write(features.rawValue) }
    }
}

/// HCI_LE_Read_Maximum_Data_Length (0x202F): the largest LL payloads the controller supports.
public struct LEReadMaximumDataLength: HCICommand {
    public static let opcode = HCIOpcode(rawValue: 0x202F)
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIParameters {
        public var supportedMaxTxOctets: UInt16
        public var supportedMaxTxTime: UInt16
        public var supportedMaxRxOctets: UInt16
        public var supportedMaxRxTime: UInt16
        public init(supportedMaxTxOctets: UInt16, supportedMaxTxTime: UInt16, supportedMaxRxOctets: UInt16, supportedMaxRxTime: UInt16) {
            self.supportedMaxTxOctets = supportedMaxTxOctets
            self.supportedMaxTxTime = supportedMaxTxTime
            self.supportedMaxRxOctets = supportedMaxRxOctets
            self.supportedMaxRxTime = supportedMaxRxTime
        }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            supportedMaxTxOctets = try reader.readUInt16()
            supportedMaxTxTime = try reader.readUInt16()
            supportedMaxRxOctets = try reader.readUInt16()
            supportedMaxRxTime = try reader.readUInt16()
        }
        public func encode(to writer: inout ByteWriter) {
            writer.write(supportedMaxTxOctets)
            writer.write(supportedMaxTxTime)
            writer.write(supportedMaxRxOctets)
            writer.write(supportedMaxRxTime)
        }
    }
}
