import BluetoothCore
import HCI

/// The secret octets of every packet of an HCI stream, followed in order: commands and
/// events by `HCISecretFields`, SMP PDUs in ACL data by ``SMPSecretFields``. An SMP PDU
/// split across ACL fragments is followed per handle and direction (the L2CAP basic header,
/// then the Code octet, may each arrive in a fragment of their own), so each fragment's
/// share of a secret field is named in that fragment.
///
/// What `BTSnoopWriter(path:redactor:)` (`--capture-redacted`) and `BTSnoopRedaction`
/// (`trace --redact`) are given.
public struct PacketSecrets: PacketRedacting {
    /// The L2CAP PDU under way on one handle in one direction.
    private struct PDU {
        /// Octets of the PDU (basic header included) seen so far.
        var position = 0
        /// The basic header's octets, until there are four.
        var header: [UInt8] = []
        /// The PDU's secret fields, offsets from its first octet, once its Code is known.
        var fields: [SecretField]?
        /// Whether the header says the channel is not SMP: nothing of this PDU is secret.
        var otherChannel = false
    }

    private struct Key: Hashable {
        let handle: UInt16
        let received: Bool
    }

    private var pdus: [Key: PDU] = [:]

    /// Nothing followed yet.
    public init() {}

    /// The secret fields of one packet, offsets from the first octet after its H4 indicator.
    public mutating func secretFields(type: H4PacketType, body: ArraySlice<UInt8>, direction: BTSnoop.Direction)
        -> [SecretField]
    {
        guard type == .acl else { return HCISecretFields.packet(type: type, body: body) }
        guard body.count >= 4 else { return [] }
        let base = body.startIndex
        let handleAndFlags = UInt16(body[base]) | UInt16(body[base + 1]) << 8
        let key = Key(handle: handleAndFlags & 0x0FFF, received: direction == .received)
        // Packet_Boundary_Flag: 0b01 continues a PDU; 0b00, 0b10 (and the old 0b11) start one.
        if (handleAndFlags >> 12) & 0b11 != 0b01 {
            pdus[key] = PDU()
        }
        // A continuation with no start seen (a capture begun mid-PDU) cannot be placed.
        guard var pdu = pdus[key] else { return [] }
        let data = body.dropFirst(4)
        let first = pdu.position
        for octet in data.prefix(max(0, 5 - first)) {
            if pdu.header.count < 4 {
                pdu.header.append(octet)
                if pdu.header.count == 4 {
                    let channel = UInt16(pdu.header[2]) | UInt16(pdu.header[3]) << 8
                    pdu.otherChannel = !SMPSecretFields.carriesSMP(channel: channel)
                }
            } else if !pdu.otherChannel, pdu.fields == nil {
                pdu.fields = SMPSecretFields.fields(code: octet).map { $0.shifted(by: 4) }
            }
        }
        pdu.position += data.count
        pdus[key] = pdu
        // This fragment holds the PDU's octets first..<position, at body offsets 4...
        let window = first..<pdu.position
        return (pdu.fields ?? []).compactMap { field in
            let start = max(field.range.lowerBound, window.lowerBound),
                end = min(field.range.upperBound, window.upperBound)
            guard start < end else { return nil }
            return SecretField(field.name, offset: 4 + start - first, length: end - start)
        }
    }
}
