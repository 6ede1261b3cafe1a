import BluetoothCore
import HCI

/// Which octets of which SMP command are secret (Core Vol 3, Part H, 3.5 and 3.6): the one
/// table logs, the trace printer, `trace --redact` and the redacting capture writer consult
/// for SMP, on the LE channel (0x0006) and the BR/EDR one (0x0007) alike. It is read off
/// the commands' declarations: a field is secret when its type is ``SecretValue``.
///
/// Secret: the confirm and random values (with them a recorded legacy pairing's TK, and so
/// its keys, can be brute-forced), the DHKey check, and every distributed key: the LTK
/// (Encryption Information), the IRK (Identity Information, ours included) and the CSRK
/// (Signing Information).
///
/// Not secret, and left visible: the public keys (public by design; the DHKey cannot be
/// had from them), the pairing features, addresses, Pairing Failed reasons, keypress
/// notifications, and Central Identification's EDIV and Rand: they only name a legacy LTK,
/// and travel unencrypted in every LL_ENC_REQ that uses it (`HCISecretFields` leaves them
/// visible in LE_Enable_Encryption for the same reason).
public enum SMPSecretFields {
    /// The secret fields of the command with this Code, offsets from the Code octet.
    public static func fields(code: UInt8) -> [SecretField] {
        SMPCode(rawValue: code).commandType?.secretFields ?? []
    }

    /// The secret fields of a whole SMP PDU (Code octet first), clipped to its octets.
    public static func fields(pdu: some Collection<UInt8>) -> [SecretField] {
        guard let code = pdu.first else { return [] }
        return fields(code: code).compactMap { $0.clipped(to: pdu.count) }
    }

    /// Whether an L2CAP fixed channel carries SMP: 0x0006 on LE, 0x0007 on BR/EDR.
    public static func carriesSMP(channel: UInt16) -> Bool { channel == 0x0006 || channel == 0x0007 }
}
