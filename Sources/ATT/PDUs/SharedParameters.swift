import BluetoothCore

// Parameter lists that several PDUs share, declared once (Core Vol 3, Part F, 3.4): the
// PDUs keep their own types and names, and take their layout from here.

/// A PDU whose parameters are an attribute's handle and then its value to the end of the
/// PDU: Write Request and Command (3.4.5.1, 3.4.5.3), Handle Value Notification and
/// Indication (3.4.7.1, 3.4.7.2).
public protocol AttributeValuePDU: ATTPDU {
    /// The attribute.
    var handle: AttributeHandle { get }
    /// Its value; received, a view of the bytes read.
    var value: ArraySlice<UInt8> { get }
    /// The PDU for `value` of the attribute at `handle`.
    init(handle: AttributeHandle, value: ArraySlice<UInt8>)
}

extension AttributeValuePDU {
    /// Attribute_Handle, Attribute_Value: the layout of the PDU called `name`. The fields
    /// read through closures, not key paths: a key path to a protocol's property is applied
    /// through the witness at run time even where the layout is specialized, and this is
    /// the path of every notification.
    static func handleAndValue(_ name: String) -> MessageLayout<Self, AttributeHandle, ArraySlice<UInt8>> {
        MessageLayout(
            name, Self.init(handle:value:), Field("Attribute_Handle", { $0.handle }),
            .rest("Attribute_Value", { @Sendable pdu in pdu.value }))
    }
}

/// A PDU that carries one part of a queued write: Prepare Write Request and the Response
/// that echoes it (3.4.6.1, 3.4.6.2).
public protocol PreparedWritePDU: ATTPDU {
    /// The attribute the part is for.
    var handle: AttributeHandle { get }
    /// Where in the value the part goes.
    var offset: UInt16 { get }
    /// The part.
    var value: ArraySlice<UInt8> { get }
    /// The PDU for `value` of the attribute at `handle`, at `offset`.
    init(handle: AttributeHandle, offset: UInt16, value: ArraySlice<UInt8>)
}

extension PreparedWritePDU {
    /// Attribute_Handle, Value_Offset, Part_Attribute_Value: the layout of the PDU called `name`.
    static func preparedPart(_ name: String) -> MessageLayout<Self, AttributeHandle, UInt16, ArraySlice<UInt8>> {
        MessageLayout(
            name, Self.init(handle:offset:value:), Field("Attribute_Handle", { $0.handle }),
            Field("Value_Offset", { $0.offset }), .rest("Part_Attribute_Value", { @Sendable pdu in pdu.value }))
    }
}
