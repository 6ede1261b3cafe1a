import BluetoothCore
import HCI

// Server-initiated: notifications, indications and their confirmation (Core Vol 3, Part F,
// 3.4.7).

/// ATT_HANDLE_VALUE_NTF (0x1B, 3.4.7.1): an attribute's value, not acknowledged.
public struct HandleValueNotification: HandleValuePDU {
    /// 0x1B.
    public static var opcode: ATTOpcode { .handleValueNotification }
    /// The attribute notified.
    public var handle: UInt16
    /// Its value (at most ATT_MTU - 3 bytes).
    public var value: [UInt8]

    /// A notification of `value` for the attribute at `handle`.
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// ATT_HANDLE_VALUE_IND (0x1D, 3.4.7.2): an attribute's value the client must confirm.
public struct HandleValueIndication: HandleValuePDU {
    /// 0x1D.
    public static var opcode: ATTOpcode { .handleValueIndication }
    /// The attribute indicated.
    public var handle: UInt16
    /// Its value (at most ATT_MTU - 3 bytes).
    public var value: [UInt8]

    /// An indication of `value` for the attribute at `handle`.
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// ATT_HANDLE_VALUE_CFM (0x1E, 3.4.7.3): confirms an indication. No parameters.
public struct HandleValueConfirmation: ParameterlessPDU {
    /// 0x1E.
    public static var opcode: ATTOpcode { .handleValueConfirmation }

    /// The confirmation.
    public init() {}
}

/// ATT_MULTIPLE_HANDLE_VALUE_NTF (0x23, 3.4.7.4): several values in one PDU, each as
/// handle, 16-bit length, value.
public struct MultipleHandleValueNotification: ATTPDU {
    /// One attribute's handle and value.
    public struct Entry: Sendable, Equatable {
        /// The attribute notified.
        public var handle: UInt16
        /// Its value.
        public var value: [UInt8]

        /// An entry for the attribute at `handle`.
        public init(handle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.value = value
        }
    }

    /// 0x23.
    public static var opcode: ATTOpcode { .multipleHandleValueNotification }
    /// The values notified. The spec sends two or more; decoding accepts one.
    public var entries: [Entry]

    /// A notification of `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        guard !reader.isAtEnd else { throw .truncated(needed: 4, available: 0) }
        var entries: [Entry] = []
        while !reader.isAtEnd {
            let handle = try reader.readUInt16()
            let length = Int(try reader.readUInt16())
            entries.append(Entry(handle: handle, value: Array(try reader.readBytes(length))))
        }
        self.entries = entries
    }

    /// Encodes the tuples; traps if a value is longer than 65535 bytes.
    public func encode(to writer: inout ByteWriter) {
        for entry in entries {
            writer.write(entry.handle)
            writer.write(UInt16(entry.value.count))
            writer.write(bytes: entry.value)
        }
    }
}
