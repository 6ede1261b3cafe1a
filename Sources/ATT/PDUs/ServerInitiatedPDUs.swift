import BluetoothCore

// Server-initiated: notifications, indications and their confirmation (Core Vol 3, Part F,
// 3.4.7).

/// ATT_HANDLE_VALUE_NTF (0x1B, 3.4.7.1): an attribute's value, not acknowledged.
public struct HandleValueNotification: AttributeValuePDU {
    /// 0x1B.
    public static var opcode: ATTOpcode { .handleValueNotification }
    /// The attribute notified.
    public var handle: AttributeHandle
    /// Its value (at most ATT_MTU - 3 bytes); received, a view of the bytes read.
    public var value: ArraySlice<UInt8>

    /// A notification of `value` for the attribute at `handle`.
    public init(handle: AttributeHandle, value: ArraySlice<UInt8>) { (self.handle, self.value) = (handle, value) }

    /// Attribute_Handle, Attribute_Value. Spelled out here rather than taken from
    /// `handleAndValue`: every notification is decoded through it, and with the shared layout
    /// `bluejay-bench receive` ran at 0.95× (three interleaved runs), with this one at 0.98–1.04×.
    public static let layout = MessageLayout(
        "Handle_Value_Notification", Self.init(handle:value:),
        Field("Attribute_Handle", \.handle), .rest("Attribute_Value", \.value))
}

/// ATT_HANDLE_VALUE_IND (0x1D, 3.4.7.2): an attribute's value the client must confirm.
public struct HandleValueIndication: AttributeValuePDU {
    /// 0x1D.
    public static var opcode: ATTOpcode { .handleValueIndication }
    /// The attribute indicated.
    public var handle: AttributeHandle
    /// Its value (at most ATT_MTU - 3 bytes).
    public var value: ArraySlice<UInt8>

    /// An indication of `value` for the attribute at `handle`.
    public init(handle: AttributeHandle, value: ArraySlice<UInt8>) { (self.handle, self.value) = (handle, value) }

    /// Attribute_Handle, Attribute_Value.
    public static let layout = handleAndValue("Handle_Value_Indication")
}

/// ATT_HANDLE_VALUE_CFM (0x1E, 3.4.7.3): confirms an indication. No parameters.
public struct HandleValueConfirmation: ATTPDU {
    /// 0x1E.
    public static var opcode: ATTOpcode { .handleValueConfirmation }

    /// The confirmation.
    public init() {}

    /// No parameters.
    public static let layout = MessageLayout("Handle_Value_Confirmation", Self.init)
}

/// ATT_MULTIPLE_HANDLE_VALUE_NTF (0x23, 3.4.7.4): several values in one PDU, each as
/// handle, 16-bit length, value.
public struct MultipleHandleValueNotification: ATTPDU {
    /// One attribute's handle and value.
    public struct Entry: WireCodable, Equatable {
        /// The attribute notified.
        public var handle: AttributeHandle
        /// Its value.
        public var value: ArraySlice<UInt8>

        /// An entry for the attribute at `handle`.
        public init(handle: AttributeHandle, value: ArraySlice<UInt8>) { (self.handle, self.value) = (handle, value) }

        /// Reads Attribute_Handle, Value_Length and that many octets.
        public init(from reader: inout ByteReader) throws(DecodingError) {
            handle = try AttributeHandle(from: &reader)
            value = try reader.readBytes(Int(try reader.readUInt16()))
        }

        /// Writes the handle, the value's length and the value; traps past 65535 bytes.
        public func encode(to writer: inout ByteWriter) {
            writer.write(handle)
            writer.write(UInt16(value.count))
            writer.write(bytes: value)
        }
    }

    /// 0x23.
    public static var opcode: ATTOpcode { .multipleHandleValueNotification }
    /// The values notified. The spec sends two or more; decoding accepts one.
    public var entries: [Entry]

    /// A notification of `entries`.
    public init(entries: [Entry]) { self.entries = entries }

    /// Handle_Length_Value_Tuple_List.
    public static let layout = MessageLayout(
        "Multiple_Handle_Value_Notification", Self.init(entries:),
        .selfDelimitedEntries("Handle_Length_Value_Tuple_List", minimumSize: 4, \.entries))
}
