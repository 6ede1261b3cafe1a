import BluetoothCore
import HCI
import HCITestSupport
import Synchronization
import Testing

// The HCI half of redaction: which octets of which command and event are secret, how a
// log line prints them, and how a capture is written without them. Each key below is a run
// of octets that occurs nowhere else in its packet, so a field that lands one octet off
// fails.

/// `count` octets from `first` on, never zero (zeros are what redaction writes).
private func key(_ first: UInt8, _ count: Int = 16) -> [UInt8] { (0..<count).map { first &+ UInt8($0) } }

private let peer = bytes("66 55 44 33 22 11")

/// An H4 command packet.
private func command(_ opcode: UInt16, _ parameters: [UInt8]) -> [UInt8] {
    HCIPacket.command(HCICommandPacket(opcode: HCIOpcode(rawValue: opcode), parameters: parameters[...])).encodeH4()
}

/// An H4 event packet.
private func event(_ code: UInt8, _ parameters: [UInt8]) -> [UInt8] {
    HCIPacket.event(HCIEventPacket(code: code, parameters: parameters[...])).encodeH4()
}

/// The octets each secret field of an H4 packet covers, by field name.
private func secretOctets(_ h4: [UInt8]) -> [String: [UInt8]] {
    let type = H4PacketType(rawValue: h4[0])!
    var result: [String: [UInt8]] = [:]
    for field in HCISecretFields.packet(type: type, body: h4[1...]) {
        result[field.name] = Array(h4[(1 + field.offset)..<(1 + field.offset + field.length)])
    }
    return result
}

/// Redacts with the HCI table alone (what a layer below SMP can know).
private struct HCIOnlyRedactor: PacketRedacting {
    func secretFields(type: H4PacketType, body: ArraySlice<UInt8>, direction: BTSnoop.Direction) -> [SecretField] {
        HCISecretFields.packet(type: type, body: body)
    }
}

@Suite("Secret fields")
struct SecretFieldsTests {
    /// (what, H4 packet, the secret octets it must name, by field).
    static let secretCases: [(String, [UInt8], [String: [UInt8]])] = [
        (
            "LE_Enable_Encryption",
            LEEnableEncryption(handle: 0x0040, random: key(0x30, 8), ediv: 0x4321, longTermKey: key(0xA0)).packet.h4,
            ["Long_Term_Key": key(0xA0)]
        ),
        ("LE_Long_Term_Key_Request_Reply", command(0x201A, [0x40, 0x00] + key(0xA0)), ["Long_Term_Key": key(0xA0)]),
        ("LE_Encrypt", command(0x2017, key(0xA0) + key(0xC0)), ["Key": key(0xA0), "Plaintext_Data": key(0xC0)]),
        (
            "LE_Add_Device_To_Resolving_List", command(0x2027, [0x01] + peer + key(0xA0) + key(0xC0)),
            ["Peer_IRK": key(0xA0), "Local_IRK": key(0xC0)]
        ),
        ("Link_Key_Request_Reply", command(0x040B, peer + key(0xA0)), ["Link_Key": key(0xA0)]),
        ("PIN_Code_Request_Reply", command(0x040D, peer + [0x04] + key(0xA0)), ["PIN_Code": key(0xA0)]),
        ("User_Passkey_Request_Reply", command(0x042E, peer + key(0xA0, 4)), ["Numeric_Value": key(0xA0, 4)]),
        (
            "Remote_OOB_Data_Request_Reply", command(0x0430, peer + key(0xA0) + key(0xC0)),
            ["C": key(0xA0), "R": key(0xC0)]
        ),
        (
            "Remote_OOB_Extended_Data_Request_Reply",
            command(0x0445, peer + key(0x80) + key(0xA0) + key(0xC0) + key(0xE0)),
            ["C_192": key(0x80), "R_192": key(0xA0), "C_256": key(0xC0), "R_256": key(0xE0)]
        ),
        (
            "Write_Stored_Link_Key, two keys", command(0x0C11, [0x02] + peer + peer + key(0xA0) + key(0xC0)),
            ["Link_Key[0]": key(0xA0), "Link_Key[1]": key(0xC0)]
        ),
        (
            "LE_Create_BIG",
            command(
                0x2068,
                [0x01, 0x02, 0x02, 0x10, 0x27, 0x00, 0x64, 0x00, 0x0A, 0x00, 0x02, 0x02, 0x00, 0x00, 0x01] + key(0xA0)),
            ["Broadcast_Code": key(0xA0)]
        ),
        (
            "LE_Create_BIG_Test", command(0x2069, [UInt8](repeating: 0x01, count: 20) + key(0xA0)),
            ["Broadcast_Code": key(0xA0)]
        ),
        (
            "LE_BIG_Create_Sync",
            command(0x206B, [0x01, 0x02, 0x00, 0x01] + key(0xA0) + [0x00, 0x10, 0x00, 0x01, 0x01]),
            ["Broadcast_Code": key(0xA0)]
        ),
        (
            "Command Complete of LE_Encrypt", event(0x0E, [0x01, 0x17, 0x20, 0x00] + key(0xA0)),
            ["Encrypted_Data": key(0xA0)]
        ),
        (
            "Command Complete of LE_Rand", event(0x0E, [0x01, 0x18, 0x20, 0x00] + key(0xA0, 8)),
            ["Random_Number": key(0xA0, 8)]
        ),
        (
            "Command Complete of Read_Local_OOB_Data", event(0x0E, [0x01, 0x57, 0x0C, 0x00] + key(0xA0) + key(0xC0)),
            ["C": key(0xA0), "R": key(0xC0)]
        ),
        (
            "Command Complete of Read_Local_OOB_Extended_Data",
            event(0x0E, [0x01, 0x7D, 0x0C, 0x00] + key(0x80) + key(0xA0) + key(0xC0) + key(0xE0)),
            ["C_192": key(0x80), "R_192": key(0xA0), "C_256": key(0xC0), "R_256": key(0xE0)]
        ),
        ("Link_Key_Notification", event(0x18, peer + key(0xA0) + [0x05]), ["Link_Key": key(0xA0)]),
        (
            "Return_Link_Keys, two keys", event(0x15, [0x02] + peer + peer + key(0xA0) + key(0xC0)),
            ["Link_Key[0]": key(0xA0), "Link_Key[1]": key(0xC0)]
        ),
        ("User_Passkey_Notification", event(0x3B, peer + key(0xA0, 4)), ["Passkey": key(0xA0, 4)]),
        ("LE_Generate_DHKey_Complete", event(0x3E, [0x09, 0x00] + key(0xA0, 32)), ["DH_Key": key(0xA0, 32)]),
    ]

    @Test("Each secret field lands on exactly the octets of its key", arguments: secretCases)
    func fieldsLandOnTheKeys(what: String, h4: [UInt8], expected: [String: [UInt8]]) {
        #expect(secretOctets(h4) == expected, "\(what)")
        // Zeroed, the packet keeps its length and every octet outside the keys.
        var zeroed = h4
        let fields = HCISecretFields.packet(type: H4PacketType(rawValue: h4[0])!, body: h4[1...]).map {
            $0.shifted(by: 1)
        }
        zeroed.zero(fields)
        #expect(zeroed.count == h4.count)
        let covered = Set(fields.flatMap { Array($0.range) })
        for index in h4.indices {
            #expect(zeroed[index] == (covered.contains(index) ? 0 : h4[index]), "\(what): octet \(index)")
        }
    }

    /// Not secret: what identifies keys or travels in clear (public keys, addresses, the
    /// Rand and EDIV of a legacy LTK), numeric comparison values, and everything else.
    static let visibleCases: [(String, [UInt8])] = [
        ("LE_Generate_DHKey (a public key)", command(0x2026, key(0x20, 64))),
        ("LE_Long_Term_Key_Request (Rand, EDIV)", event(0x3E, [0x05, 0x40, 0x00] + key(0x30, 8) + [0x21, 0x43])),
        ("LE_Read_Local_P-256_Public_Key_Complete", event(0x3E, [0x08, 0x00] + key(0x20, 64))),
        ("User_Confirmation_Request", event(0x33, peer + [0x40, 0xE2, 0x01, 0x00])),
        ("Command Complete of LE_Long_Term_Key_Request_Reply", event(0x0E, [0x01, 0x1A, 0x20, 0x00, 0x40, 0x00])),
        ("Command Status of LE_Enable_Encryption", event(0x0F, [0x00, 0x01, 0x19, 0x20])),
        ("Reset", command(0x0C03, [])),
        ("LE_Set_Random_Address", command(0x2005, key(0x20, 6))),
    ]

    @Test("Packets without secrets name none", arguments: visibleCases)
    func nothingElseIsSecret(what: String, h4: [UInt8]) {
        #expect(HCISecretFields.packet(type: H4PacketType(rawValue: h4[0])!, body: h4[1...]).isEmpty, "\(what)")
    }

    @Test("LE_Enable_Encryption keeps its handle, Rand and EDIV visible: only the LTK goes")
    func enableEncryptionKeepsRandAndEDIV() {
        var h4 = LEEnableEncryption(handle: 0x0040, random: key(0x30, 8), ediv: 0x4321, longTermKey: key(0xA0)).packet
            .h4
        h4.zero(HCISecretFields.packet(type: .command, body: h4[1...]).map { $0.shifted(by: 1) })
        #expect(
            h4.hexDump == "01 19 20 1c 40 00 30 31 32 33 34 35 36 37 21 43 " + [UInt8](repeating: 0, count: 16).hexDump)
    }

    @Test("A packet cut short names only the secret octets it has")
    func truncatedPacketsAreClipped() {
        let whole = LEEnableEncryption(handle: 1, longTermKey: key(0xA0)).packet.h4
        let cut = Array(whole.prefix(4 + 12 + 5))  // indicator, opcode, length, up to 5 octets of the LTK
        #expect(
            HCISecretFields.packet(type: .command, body: cut[1...]) == [
                SecretField("Long_Term_Key", offset: 15, length: 5)
            ])
        #expect(HCISecretFields.packet(type: .command, body: cut.prefix(10).dropFirst()).isEmpty)
        #expect(
            HCISecretFields.packet(type: .event, body: event(0x18, peer + key(0xA0, 3))[1...]) == [
                SecretField("Link_Key", offset: 8, length: 3)
            ])
    }

    @Test("A hex dump prints each secret field as <redacted N octets>, the rest as it is")
    func redactedHexDump() {
        let data = key(0x10, 20)
        #expect(
            data.hexDump(redacting: [SecretField("K", offset: 2, length: 4)])
                == "10 11 <redacted 4 octets> 16 17 18 19 1a 1b 1c 1d 1e 1f 20 21 22 23")
        #expect(data.hexDump(redacting: []) == data.hexDump)
        // Overlapping fields are one run; a field running past the end is clipped.
        #expect(
            data.hexDump(redacting: [
                SecretField("A", offset: 0, length: 3), SecretField("B", offset: 2, length: 3),
                SecretField("C", offset: 18, length: 9),
            ])
                == "<redacted 5 octets> 15 16 17 18 19 1a 1b 1c 1d 1e 1f 20 21 <redacted 2 octets>")
        // With a limit, a field counts whole and the rest is marked.
        #expect(
            data.hexDump(redacting: [SecretField("K", offset: 2, length: 4)], limit: 4) == "10 11 <redacted 4 octets> …"
        )
        #expect(data.hexDump(redacting: [], limit: 3) == "10 11 12 …")
    }

    @Test("A logger redacts secrets by default; showing them warns once, across copies")
    func loggerRedactsUnlessToldAndWarnsOnce() {
        let lines = Mutex<[String]>([])
        let logger = HCILogger(level: .debug) { level, line in lines.withLock { $0.append("\(level): \(line)") } }
        let packet = LEEnableEncryption(handle: 1, longTermKey: key(0xA0)).packet
        let fields = HCISecretFields.command(packet.opcode, parameters: packet.parameters)
        logger.log(.debug, "< \(logger.hexDump(packet.parameters, secrets: fields))")
        let logged: [String] = lines.withLock { $0 }
        #expect(logged == ["debug: < 01 00 00 00 00 00 00 00 00 00 00 00 <redacted 16 octets>"])

        var showing = logger
        showing.showsSecrets = true
        let copy = showing
        showing.log(.debug, "< \(showing.hexDump(packet.parameters, secrets: fields))")
        copy.log(.debug, "< \(copy.hexDump(packet.parameters, secrets: fields))")
        showing.noteSecretsShown()
        let clear: String = "debug: < 01 00 00 00 00 00 00 00 00 00 00 00 " + key(0xA0).hexDump
        let shown: [String] = lines.withLock { Array($0.dropFirst()) }
        let expectedShown: [String] = ["warning: " + HCILogger.secretsWarningText, clear, clear]
        #expect(shown == expectedShown)
        // A line with nothing secret says nothing about secrets.
        let quiet = HCILogger(level: .debug, showsSecrets: true) { level, line in
            lines.withLock { $0.append("\(level): \(line)") }
        }
        #expect(quiet.hexDump(key(0x10, 2), secrets: []) == "10 11")
        let count: Int = lines.withLock { $0.count }
        #expect(count == 4)
    }

    @Test("A redacting BTSnoopWriter zeroes the keys it is told of; a plain one keeps them")
    func redactingWriter() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove(files: ["plain.btsnoop", "redacted.btsnoop"]) }
        let commandComplete: [UInt8] = [0x01, 0x17, 0x20, 0x00] + key(0xC0)
        let packets: [([UInt8], BTSnoop.Direction)] = [
            (LEEnableEncryption(handle: 1, random: key(0x30, 8), ediv: 7, longTermKey: key(0xA0)).packet.h4, .sent),
            (event(0x0E, commandComplete), .received),
            (bytes("02 01 00 05 00 01 00 04 00 0a"), .sent),
        ]
        let plain = try BTSnoopWriter(path: directory.file("plain.btsnoop"))
        let redacted = try BTSnoopWriter(path: directory.file("redacted.btsnoop"), redactor: HCIOnlyRedactor())
        #expect(!plain.redacts && redacted.redacts)
        for (packet, direction) in packets {
            plain.write(h4: packet[...], direction: direction, timestamp: 0x00E2_5F9B_0A2F_4240)
            redacted.write(h4: packet[...], direction: direction, timestamp: 0x00E2_5F9B_0A2F_4240)
        }
        plain.close()
        redacted.close()
        let original = try readWholeFile(directory.file("plain.btsnoop"))
        let written = try readWholeFile(directory.file("redacted.btsnoop"))
        #expect(original.count == written.count)
        let plainRecords = try BTSnoopFile(bytes: original).records
        let redactedRecords = try BTSnoopFile(bytes: written).records
        #expect(plainRecords.count == 3 && redactedRecords.count == 3)
        func h4(_ record: BTSnoopRecord) -> [UInt8] {
            if case let .packet(type, body) = record.content { [type.rawValue] + body } else { [] }
        }
        let packetBytes: [[UInt8]] = packets.map(\.0)
        #expect(plainRecords.map(h4) == packetBytes)
        let redactedEncryption: [UInt8] = Array(packets[0].0.prefix(16)) + [UInt8](repeating: 0, count: 16)
        #expect(h4(redactedRecords[0]) == redactedEncryption)
        let redactedComplete: [UInt8] = Array(packets[1].0.prefix(7)) + [UInt8](repeating: 0, count: 16)
        #expect(h4(redactedRecords[1]) == redactedComplete)
        #expect(h4(redactedRecords[2]) == packets[2].0)
    }

    @Test(
        "trace --redact's copy: zeros in the secret fields, every other octet, record and timestamp as they were, in each datalink"
    )
    func redactedCopyOfEveryDatalink() throws {
        let secret = LEEnableEncryption(handle: 1, random: key(0x30, 8), ediv: 7, longTermKey: key(0xA0)).packet.h4
        let linkKeyNotification: [UInt8] = peer + key(0xC0) + [0x05]
        let notification = event(0x18, linkKeyNotification)
        let magic: [UInt8] = Array("btsnoop".utf8) + [0]
        for datalink in [UInt32(1002), 1001, 2001] {
            var file = ByteWriter(prefix: magic)
            let shift: Int = datalink == 1002 ? 1 : 0
            file.writeBigEndian(UInt32(1))
            file.writeBigEndian(datalink)
            var keyOffsets: [Int] = []
            for (index, packet) in [secret, notification].enumerated() {
                let data = datalink == 1002 ? packet : Array(packet.dropFirst())
                // 1001 and 1002: bit 0 received, bit 1 command or event; btmon (2001): opcode 2 command, 3 event.
                let flags: UInt32 = index == 0 ? 2 : 3
                for length in [data.count, data.count] { file.writeBigEndian(UInt32(length)) }
                file.writeBigEndian(flags)
                file.writeBigEndian(UInt32(0))
                file.writeBigEndian(Int64(0x00E2_5F9B_0A2F_4240 + index))
                let start = file.bytes.count
                let keyStart: Int = (index == 0 ? 15 : 8) + shift, keyEnd: Int = (index == 0 ? 31 : 24) + shift
                keyOffsets += (keyStart..<keyEnd).map { (offset: Int) -> Int in start + offset }
                file.write(bytes: data)
            }
            // A record cut off inside its key: redacted as far as it goes.
            let cut = secret.prefix(20)
            let cutData = datalink == 1002 ? Array(cut) : Array(cut.dropFirst())
            file.writeBigEndian(UInt32(secret.count))
            file.writeBigEndian(UInt32(secret.count))
            file.writeBigEndian(UInt32(2))
            file.writeBigEndian(UInt32(0))
            file.writeBigEndian(Int64(0x00E2_5F9B_0A2F_4240 + 2))
            let cutStart = file.bytes.count
            keyOffsets += (15 + shift..<cutData.count).map { (offset: Int) -> Int in cutStart + offset }
            file.write(bytes: cutData)

            let original = file.bytes
            let redaction = try BTSnoopRedaction(original: original, redactor: HCIOnlyRedactor())
            #expect(redaction.bytes.count == original.count, "datalink \(datalink)")
            #expect(redaction.zeroed.map(\.recordNumber) == [1, 2, 3], "datalink \(datalink)")
            #expect(redaction.zeroed.map(\.field.name) == ["Long_Term_Key", "Link_Key", "Long_Term_Key"])
            let secretOctets = Set(keyOffsets)
            for index in original.indices {
                #expect(
                    redaction.bytes[index] == (secretOctets.contains(index) ? 0 : original[index]),
                    "datalink \(datalink), octet \(index)")
            }
            let before = try BTSnoopFile(bytes: original), after = try BTSnoopFile(bytes: redaction.bytes)
            #expect(after.records.count == before.records.count && after.truncatedTail == before.truncatedTail)
            #expect(after.records.map(\.timestamp) == before.records.map(\.timestamp))
            #expect(after.records.map(\.flags) == before.records.map(\.flags))
        }
    }
}

extension HCICommandPacket {
    /// The packet with its H4 indicator.
    fileprivate var h4: [UInt8] { HCIPacket.command(self).encodeH4() }
}
