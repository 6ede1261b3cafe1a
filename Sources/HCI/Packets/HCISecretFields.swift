import BluetoothCore

/// Which parameters of which HCI command and event are secret (Core Vol 4, Part E, 7): the
/// one table logs, the trace printer, `trace --redact` and the redacting capture writer
/// consult for HCI. SMP PDUs, carried in ACL data, have their own table in the SMP module.
///
/// Secret: keys (LTKs, BR/EDR link keys, IRKs, the key and data of a host's AES
/// computation and its result), random numbers a host may make keys from (LE_Rand), OOB
/// confirm and random values, passkeys, PINs, Diffie-Hellman keys and broadcast codes.
///
/// Not secret, and left visible: addresses, handles, public keys (LE Generate DHKey's input,
/// LE Read Local P-256 Public Key's output), numeric comparison values (shown on both
/// screens and useless to an attacker), and the Rand and EDIV that identify a legacy LTK in
/// LE_Enable_Encryption and the LE Long Term Key Request event: they travel unencrypted in
/// every LL_ENC_REQ on the air, so hiding them hides nothing from a sniffer, and they are
/// what tells which bond a link was encrypted with.
public enum HCISecretFields {
    /// The secret fields of a command, offsets from its first parameter. `parameters` is
    /// read only where the layout depends on it (a count of keys).
    public static func command(_ opcode: HCIOpcode, parameters: some Collection<UInt8>) -> [SecretField] {
        switch opcode.rawValue {
        case 0x040B: [SecretField("Link_Key", offset: 6, length: 16)]  // 7.1.10 Link_Key_Request_Reply
        case 0x040D: [SecretField("PIN_Code", offset: 7, length: 16)]  // 7.1.12 PIN_Code_Request_Reply
        case 0x042E:  // 7.1.32 User_Passkey_Request_Reply: the passkey
            [SecretField("Numeric_Value", offset: 6, length: 4)]
        case 0x0430:  // 7.1.34 Remote_OOB_Data_Request_Reply
            [SecretField("C", offset: 6, length: 16), SecretField("R", offset: 22, length: 16)]
        case 0x0445:  // 7.1.53 Remote_OOB_Extended_Data_Request_Reply
            [
                SecretField("C_192", offset: 6, length: 16), SecretField("R_192", offset: 22, length: 16),
                SecretField("C_256", offset: 38, length: 16), SecretField("R_256", offset: 54, length: 16),
            ]
        case 0x0C11:  // 7.3.9 Write_Stored_Link_Key: Num_Keys_To_Write, BD_ADDR[i], Link_Key[i]
            linkKeyArray(parameters)
        case 0x2017:  // 7.8.22 LE_Encrypt: a legacy host computes keys and RPAs with it
            [SecretField("Key", offset: 0, length: 16), SecretField("Plaintext_Data", offset: 16, length: 16)]
        case 0x2019: [SecretField("Long_Term_Key", offset: 12, length: 16)]  // 7.8.24 LE_Enable_Encryption
        case 0x201A: [SecretField("Long_Term_Key", offset: 2, length: 16)]  // 7.8.25 LE_Long_Term_Key_Request_Reply
        case 0x2027:  // 7.8.38 LE_Add_Device_To_Resolving_List
            [SecretField("Peer_IRK", offset: 7, length: 16), SecretField("Local_IRK", offset: 23, length: 16)]
        case 0x2068: [SecretField("Broadcast_Code", offset: 15, length: 16)]  // 7.8.103 LE_Create_BIG
        case 0x2069: [SecretField("Broadcast_Code", offset: 20, length: 16)]  // 7.8.104 LE_Create_BIG_Test
        case 0x206B: [SecretField("Broadcast_Code", offset: 4, length: 16)]  // 7.8.106 LE_BIG_Create_Sync
        default: []
        }
    }

    /// The secret fields of a command's Command Complete return parameters, offsets from the
    /// first of them (Status).
    public static func returnParameters(_ opcode: HCIOpcode, _ parameters: some Collection<UInt8>) -> [SecretField] {
        switch opcode.rawValue {
        case 0x0C57:  // 7.3.60 Read_Local_OOB_Data
            [SecretField("C", offset: 1, length: 16), SecretField("R", offset: 17, length: 16)]
        case 0x0C7D:  // 7.3.95 Read_Local_OOB_Extended_Data
            [
                SecretField("C_192", offset: 1, length: 16), SecretField("R_192", offset: 17, length: 16),
                SecretField("C_256", offset: 33, length: 16), SecretField("R_256", offset: 49, length: 16),
            ]
        case 0x2017: [SecretField("Encrypted_Data", offset: 1, length: 16)]  // 7.8.22 LE_Encrypt
        // 7.8.23 LE_Rand: this host makes no keys from it, but others do (Android's legacy
        // SMP draws its keys and nonces from it), and `trace --redact` meets their captures.
        case 0x2018: [SecretField("Random_Number", offset: 1, length: 8)]
        default: []
        }
    }

    /// The secret fields of an event, offsets from its first parameter: Command Complete's
    /// return parameters, LE subevents and the BR/EDR events that carry keys or passkeys.
    public static func event(code: UInt8, parameters: some Collection<UInt8>) -> [SecretField] {
        switch code {
        case 0x0E:
            // 7.7.14 Command_Complete: Num_HCI_Command_Packets, Command_Opcode, then the return parameters.
            guard parameters.count >= 3 else { return [] }
            let octets = Array(parameters.prefix(3))
            let opcode = HCIOpcode(rawValue: UInt16(octets[1]) | UInt16(octets[2]) << 8)
            return returnParameters(opcode, parameters.dropFirst(3)).map { $0.shifted(by: 3) }
        case 0x15: return linkKeyArray(parameters)  // 7.7.21 Return_Link_Keys: Num_Keys, BD_ADDR[i], Link_Key[i]
        case 0x18: return [SecretField("Link_Key", offset: 6, length: 16)]  // 7.7.24 Link_Key_Notification
        case 0x3B: return [SecretField("Passkey", offset: 6, length: 4)]  // 7.7.48 User_Passkey_Notification
        case 0x3E:
            guard let subevent = parameters.first else { return [] }
            return leSubevent(subevent).map { $0.shifted(by: 1) }
        default: return []
        }
    }

    /// The secret fields of an LE subevent, offsets from the first parameter after
    /// Subevent_Code.
    public static func leSubevent(_ code: UInt8) -> [SecretField] {
        switch code {
        case 0x09:  // 7.7.65.9 LE_Generate_DHKey_Complete: Status, DH_Key
            [SecretField("DH_Key", offset: 1, length: 32)]
        default: []
        }
    }

    /// The secret fields of a command or event packet, offsets from the first octet after its
    /// H4 indicator (the opcode or the event code), clipped to the octets present. Other
    /// packet types have none at the HCI level (SMP in ACL data is the SMP module's).
    public static func packet(type: H4PacketType, body: ArraySlice<UInt8>) -> [SecretField] {
        let fields: [SecretField]
        switch type {
        case .command:
            guard body.count >= 2 else { return [] }
            let opcode = HCIOpcode(rawValue: UInt16(body[body.startIndex]) | UInt16(body[body.startIndex + 1]) << 8)
            fields = command(opcode, parameters: body.dropFirst(3)).map { $0.shifted(by: 3) }
        case .event:
            guard let code = body.first else { return [] }
            fields = event(code: code, parameters: body.dropFirst(2)).map { $0.shifted(by: 2) }
        case .acl, .sco, .iso:
            return []
        }
        return fields.compactMap { $0.clipped(to: body.count) }
    }

    /// `Num_Keys`, then every `BD_ADDR[i]`, then every `Link_Key[i]` (arrayed parameters come
    /// field by field, Core Vol 4, Part E, 5.2).
    private static func linkKeyArray(_ parameters: some Collection<UInt8>) -> [SecretField] {
        guard let count = parameters.first.map(Int.init), count > 0 else { return [] }
        return (0..<count).map { SecretField("Link_Key[\($0)]", offset: 1 + 6 * count + 16 * $0, length: 16) }
    }
}
