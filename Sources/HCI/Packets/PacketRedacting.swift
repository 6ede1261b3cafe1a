import BluetoothCore

/// Follows a stream of HCI packets, in order, and names the secret octets of each: what a
/// redacting btsnoop writer and `trace --redact` need. Stateful because an SMP PDU may be
/// split across ACL fragments: whether an octet of a continuation fragment is secret
/// depends on the fragments before it on the same handle and direction.
public protocol PacketRedacting: Sendable {
    /// The secret fields of one packet, offsets counted from the first octet of `body` (the
    /// packet after its H4 indicator), clipped to the octets present.
    mutating func secretFields(type: H4PacketType, body: ArraySlice<UInt8>, direction: BTSnoop.Direction)
        -> [SecretField]
}
