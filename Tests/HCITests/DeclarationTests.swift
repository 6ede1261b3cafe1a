import BluetoothCore
import HCI
import HCITestSupport
import Testing

// Each command, event and LE subevent is declared once, by its layout; the names in those
// declarations must be the ones HCINames prints in traces, and the opcode tables built from
// the declarations must hold what the stack sends.

/// The events HCIEvent decodes, by their declarations (Encryption Change, one value with a
/// layout per version, is checked on its own).
private let eventTypes: [any HCIEventParameters.Type] = [
    DisconnectionComplete.self, EncryptionKeyRefreshComplete.self, CommandComplete.self, CommandStatus.self,
    HardwareError.self, NumberOfCompletedPackets.self, DataBufferOverflow.self, LEMetaEvent.self,
]

/// The LE subevents the host decodes, by their declarations.
private let subeventTypes: [any LESubeventParameters.Type] = [
    LEConnectionComplete.self, LEEnhancedConnectionComplete.self, LEEnhancedConnectionCompleteV2.self,
    LEConnectionUpdateComplete.self, LEReadRemoteFeaturesComplete.self, LERemoteConnectionParameterRequest.self,
    LEDataLengthChange.self, LEPHYUpdateComplete.self, LEAdvertisingReport.self, LEExtendedAdvertisingReport.self,
]

@Suite("Declarations")
struct DeclarationTests {
    @Test("Every command's layout is named as HCINames names its opcode")
    func commandNames() {
        #expect(KnownCommands.all.count == 45)
        for command in KnownCommands.all {
            #expect(HCINames.command(command.opcode) != "Unknown", "\(command) has an opcode HCINames does not know")
            #expect(command.name == HCINames.command(command.opcode), "\(command)")
        }
        let opcodes = KnownCommands.all.map { $0.opcode }
        #expect(Set(opcodes).count == opcodes.count, "one declaration per opcode")
    }

    @Test("The return-parameter table holds the commands that return more than a status")
    func returnParameterTable() {
        let expected: [UInt16] = [
            0x1001, 0x1002, 0x1003, 0x1005, 0x1009, 0x1405, 0x2002, 0x2003, 0x2007, 0x201A, 0x201B, 0x2020, 0x2021,
            0x2022, 0x202F,
            0x2036, 0x203A, 0x203B, 0x2060,
        ]
        #expect(KnownCommands.withReturnParameters.keys.map(\.rawValue).sorted() == expected)
        for (opcode, format) in KnownCommands.withReturnParameters { #expect(format.opcode == opcode) }
    }

    @Test("Every event's layout is named as HCINames names its code")
    func eventNames() {
        for event in eventTypes {
            #expect(event.name == HCINames.event(event.code), "\(event)")
        }
        #expect(EncryptionChange.layoutV1.name == HCINames.event(EncryptionChange.codeV1))
        #expect(EncryptionChange.layoutV2.name == HCINames.event(EncryptionChange.codeV2))
    }

    @Test("Every LE subevent's layout is named as HCINames names its subevent code")
    func subeventNames() {
        for subevent in subeventTypes {
            #expect(subevent.name == HCINames.leSubevent(subevent.subeventCode), "\(subevent)")
        }
        #expect(AdvertisingReport.legacySubevent == 0x02 && AdvertisingReport.extendedSubevent == 0x0D)
    }

    @Test("Fields are listed with the specification's names, groups by the fields they hold")
    func fieldNames() {
        #expect(Disconnect.layout.fieldNames == ["Connection_Handle", "Reason"])
        #expect(
            LEConnectionUpdate.layout.fieldNames == [
                "Connection_Handle",
                "Connection_Interval_Min, Connection_Interval_Max, Max_Latency, Supervision_Timeout",
                "Min_CE_Length", "Max_CE_Length",
            ])
        #expect(
            LEConnectionComplete.layout.fieldNames == [
                "Status", "Connection_Handle", "Role", "Peer_Address_Type", "Peer_Address",
                "Connection_Interval, Peripheral_Latency, Supervision_Timeout", "Central_Clock_Accuracy",
            ])
    }

    @Test(
        "LE Enhanced Connection Complete v1 and v2 read as a connection complete; a short one is truncated at the field it ends in"
    )
    func enhancedConnectionComplete() throws {
        // Status 0, handle 0x0040, central, random peer F0:0D:B1:E7:00:01, no RPAs, interval
        // 0x18, latency 0, timeout 0x2a, clock accuracy 0; v2 adds advertising handle 0xff,
        // sync handle 0xffff.
        let v1 =
            bytes("00 40 00 00 01 01 00 e7 b1 0d f0") + [UInt8](repeating: 0, count: 12) + bytes("18 00 00 00 2a 00 00")
        let v2 = v1 + bytes("ff ff ff")
        let expected = LEConnectionEvent.connectionComplete(
            status: .success, handle: 0x40, role: 0, peerAddressType: 1,
            peerAddress: try #require(BluetoothAddress("F0:0D:B1:E7:00:01")),
            parameters: LEConnectionParameters(interval: 0x18, latency: 0, supervisionTimeout: 0x2A))
        #expect(try LEConnectionEvent.decode(LEMetaEvent(subeventCode: 0x0A, parameters: v1[...])) == expected)
        #expect(try LEConnectionEvent.decode(LEMetaEvent(subeventCode: 0x29, parameters: v2[...])) == expected)
        #expect(try LEEnhancedConnectionCompleteV2(decoding: v2[...]).encoded() == v2)
        // Cut inside Local_Resolvable_Private_Address (5 of its 6 octets), and inside
        // Sync_Handle (1 of 2): truncated where the octets run out, as every layout reports it.
        #expect(throws: DecodingError.truncated(needed: 6, available: 5)) {
            try LEConnectionEvent.decode(LEMetaEvent(subeventCode: 0x0A, parameters: v1.prefix(16)))
        }
        #expect(throws: DecodingError.truncated(needed: 2, available: 1)) {
            try LEConnectionEvent.decode(LEMetaEvent(subeventCode: 0x29, parameters: v2.prefix(v2.count - 1)))
        }
    }
}
