import ATT
import BluetoothCore
import GATT
import Testing

/// `bluejay serve`'s database file: what it declares becomes the server's definitions, and
/// what cannot be read fails naming the entry, before anything is served.
struct DatabaseFileTests {
    static func file(_ json: String) throws(DatabaseFileError) -> DatabaseFile {
        try DatabaseFile(json: Array(json.utf8))
    }

    @Test func aFileBecomesTheServersDefinitions() throws {
        let file = try Self.file(
            """
            {"name": "Thermometer", "appearance": 768,
             "services": [{"uuid": "181A", "characteristics": [
               {"uuid": "2A6E", "properties": ["read", "notify"], "value": "0a 09", "notify": {"every": 0.5, "values": ["0b09"]},
                "descriptors": [{"uuid": "2901", "text": "Temperature"}]},
               {"uuid": "B1E70A02-9D3B-4C7A-8A5E-6F2D0C1B0A00", "properties": ["read", "write", "extendedProperties"],
                "permissions": ["read", "write", "writeEncrypted", "writeAuthorized"], "text": "21"}]},
              {"uuid": "180F", "primary": false, "characteristics": []}]}
            """)
        #expect(file.name == "Thermometer" && file.appearance == 768)
        #expect(file.advertise == [BluetoothUUID(UInt16(0x181A))], "the primary services are advertised by default")
        let temperature = file.services[0].characteristics[0]
        #expect(temperature.definition.value == [0x0A, 0x09] && temperature.definition.properties == [.read, .notify])
        #expect(temperature.definition.descriptors == [MutableDescriptor.userDescription("Temperature")])
        #expect(temperature.notify == DatabaseFile.NotifyTimer(every: .milliseconds(500), values: [[0x0B, 0x09]]))
        let setPoint = file.services[0].characteristics[1].definition
        #expect(setPoint.properties == [.read, .write, .extendedProperties])
        #expect(
            setPoint.permissions == [.read, .write, .writeEncrypted, .writeAuthorized]
                && setPoint.value == Array("21".utf8))
        #expect(!file.services[1].definition.isPrimary)
    }

    @Test(arguments: [
        (#"{"services": [{"uuid": "2A37-0000", "characteristics": []}]}"#, "services[0]: '2A37-0000' is not a UUID"),
        (
            #"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["notfiy"]}]}]}"#,
            "services[0].characteristics[0]: no property is called 'notfiy'"
        ),
        (
            #"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["read"], "permissions": ["readable"]}]}]}"#,
            "services[0].characteristics[0]: no permission is called 'readable'"
        ),
        (
            #"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["read"], "value": "0g"}]}]}"#,
            "services[0].characteristics[0]: value '0g' is not hex octets"
        ),
        (
            #"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["read"], "flood": true}]}]}"#,
            "services[0].characteristics[0]: \"flood\" needs the notify property"
        ),
        (
            #"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["notify"], "notify": {"every": 1, "values": []}}]}]}"#,
            "services[0].characteristics[0].notify: no values to notify"
        ),
        (
            #"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["notify"], "notify": {"every": 0, "values": ["00"]}}]}]}"#,
            "services[0].characteristics[0].notify: 'every' must be seconds above 0"
        ),
        (
            #"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["read"], "descriptors": [{"uuid": "x"}]}]}]}"#,
            "services[0].characteristics[0].descriptors[0]: 'x' is not a UUID"
        ),
        (
            #"{"services": [{"uuid": "180D", "handle": 16, "characteristics": []}, {"uuid": "180F", "handle": 16, "characteristics": []}]}"#,
            "services[1]: handle 0x0010 is taken by services[0] (declaration)"
        ),
        (
            #"{"services": [{"uuid": "180D", "handle": 16, "end_handle": 32, "characteristics": []}, {"uuid": "180F", "handle": 24, "characteristics": []}]}"#,
            "services[1]: handles 0x0018–0x0018 overlap services[0] (0x0010–0x0020)"
        ),
        (
            Self.characteristics(
                #"{"uuid": "2A37", "properties": ["read"], "handle": 8, "value_handle": 10}, {"uuid": "2A38", "properties": ["read"], "handle": 9}"#
            ),
            "services[0].characteristics[1]: handle 0x0009 is not after 0x000a, the attribute before it"
        ),
        (
            #"{"services": [{"uuid": "180D", "handle": 1, "characteristics": [{"uuid": "2A37", "properties": ["read"], "descriptors": [{"uuid": "2901", "handle": 4}]}, {"uuid": "2A38", "properties": ["read"], "handle": 3, "value_handle": 4}]}]}"#,
            "services[0].characteristics[1]: handle 0x0003 is not after 0x0004, the attribute before it"
        ),
        (
            #"{"services": [{"uuid": "180D", "handle": 1, "characteristics": [{"uuid": "2A37", "properties": ["read"]}]}, {"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"], "handle": 5, "value_handle": 2}]}]}"#,
            "services[1].characteristics[0]: handle 0x0002 is not after 0x0005, the attribute before it"
        ),
        (
            #"{"services": [{"uuid": "180D", "handle": 16, "characteristics": [{"uuid": "2A37", "properties": ["read"], "handle": 18}]}, {"uuid": "180F", "handle": 1, "characteristics": [{"uuid": "2A19", "properties": ["read"], "value_handle": 18}]}]}"#,
            "services[1].characteristics[0]: handle 0x0012 is taken by services[0].characteristics[0] (declaration)"
        ),
        (
            #"{"services": [{"uuid": "180D", "handle": 16, "end_handle": 17, "characteristics": [{"uuid": "2A37", "properties": ["read"]}]}]}"#,
            "services[0].characteristics[0]: handle 0x0012 is past the service's end_handle 0x0011"
        ),
        (
            #"{"services": [{"uuid": "180D", "handle": 16, "end_handle": 15, "characteristics": []}]}"#,
            "services[0]: end_handle 0x000f is before the service's handle 0x0010"
        ),
        (
            #"{"services": [{"uuid": "180D", "includes": ["180F"], "characteristics": []}]}"#,
            "services[0].includes[0]: no service 180F is in the database or added with it"
        ),
        (
            #"{"services": [{"uuid": "180F", "handle": 32, "characteristics": []}, {"uuid": "180D", "includes": [{"uuid": "180F", "service_handle": 33}], "characteristics": []}]}"#,
            "services[1].includes[0]: no service 180F at 0x0021 is in the database or added with it"
        ),
        (
            #"{"services": [{"uuid": "180D", "handle": 0, "characteristics": []}]}"#,
            "services[0]: handle 0x0000 is reserved"
        ),
        (
            Self.characteristics(#"{"uuid": "2A37", "properties": ["read"], "extended_properties": ["reliable"]}"#),
            "services[0].characteristics[0]: no extended property is called 'reliable'"
        ),
        (
            Self.characteristics(
                #"{"uuid": "2A37", "properties": ["read"], "descriptors": [{"uuid": "2901", "permissions": ["wirte"]}]}"#
            ),
            "services[0].characteristics[0].descriptors[0]: no permission is called 'wirte'"
        ),
    ])
    func whatCannotBeReadNamesItsEntry(json: String, reason: String) {
        do {
            _ = try Self.file(json)
            Issue.record("accepted: \(json)")
        } catch {
            #expect(error.description == reason)
        }
    }

    @Test func aValueOver512OctetsIsRefused() {
        let long = String(repeating: "00", count: 513)
        do {
            _ = try Self.file(
                #"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["read"], "value": "\#(long)"}]}]}"#
            )
            Issue.record("a 513-octet value was accepted")
        } catch {
            #expect(error.description == "services[0].characteristics[0]: the value is 513 octets; at most 512")
        }
    }

    /// A database as a conformance case lays it out: its own GAP service, a service at
    /// handles of its own with room reserved, an include, extended properties and a CCCD
    /// declared by hand.
    static let placed = """
        {"services": [
          {"uuid": "1800", "handle": 1, "characteristics": [{"uuid": "2A00", "properties": ["read"], "text": "PTS"}]},
          {"uuid": "180F", "primary": false, "handle": "0x0020", "characteristics": [{"uuid": "2A19", "properties": ["read"], "value": "64"}]},
          {"uuid": "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00", "handle": "0x0010", "end_handle": "0x001F",
           "includes": [{"uuid": "180F", "handle": "0x0011"}],
           "characteristics": [
             {"uuid": "FF01", "handle": "0x0012", "value_handle": "0x0014",
              "properties": ["read", "write", "write-without-response", "authenticated_signed_writes"],
              "extended_properties": ["reliable-write", "writableAuxiliaries"],
              "descriptors": [{"uuid": "2901", "text": "set point", "handle": "0x0016"}]},
             {"uuid": "FF02", "properties": ["notify", "indicate"], "cccd": false,
              "descriptors": [{"uuid": "2902", "handle": "0x001A"}, {"uuid": "2904", "value": "0400", "permissions": ["read", "write"]}]}]}]}
        """

    @Test func handlesIncludesExtendedPropertiesAndCCCDsAreRead() throws {
        let file = try Self.file(Self.placed)
        let service = file.services[2].definition
        #expect(service.handle == 0x0010 && service.endHandle == 0x001F)
        #expect(service.includes == [IncludeDefinition(uuid: BluetoothUUID(UInt16(0x180F)), handle: 0x0011)])
        #expect(file.services[1].definition.handle == 0x0020, "a handle may be hex text")
        let setPoint = service.characteristics[0]
        #expect(setPoint.handle == 0x0012 && setPoint.valueHandle == 0x0014)
        #expect(
            setPoint.properties == [
                .read, .write, .writeWithoutResponse, .authenticatedSignedWrites, .extendedProperties,
            ],
            "every property by name, with - or _ between the words; extended properties set the bit")
        #expect(setPoint.extendedProperties == [.reliableWrite, .writableAuxiliaries])
        #expect(
            setPoint.descriptors == [
                MutableDescriptor(
                    uuid: BluetoothUUID(UInt16(0x2901)), value: Array("set point".utf8),
                    permissions: [.read, .write], handle: 0x0016)
            ],
            "Writable Auxiliaries makes the user description writable")
        let notifying = service.characteristics[1]
        #expect(!notifying.automaticCCCD && !notifying.hasCCCD)
        #expect(
            notifying.descriptors.map(\.permissions) == [[.read, .write], [.read, .write]],
            "a declared CCCD can be written; a descriptor's permissions are the file's")
        #expect(notifying.descriptors.map(\.value) == [[0, 0], [0x04, 0x00]])
        let oldFile = try Self.file(
            Self.characteristics(
                #"{"uuid": "2A37", "properties": ["notify", "extendedProperties"], "descriptors": [{"uuid": "2902"}]}"#)
        )
        let old = oldFile.services[0].definition
        #expect(
            old.handle == nil && old.endHandle == nil && old.includes.isEmpty,
            "a file without the new keys reads as before")
        #expect(old.characteristics[0].hasCCCD && old.characteristics[0].extendedProperties.isEmpty)
        #expect(
            old.characteristics[0].descriptors == [
                MutableDescriptor(uuid: .clientCharacteristicConfiguration, value: [])
            ],
            "a CCCD declared beside ours stays the plain read-only descriptor it was")
    }

    static func characteristics(_ entries: String) -> String {
        #"{"services": [{"uuid": "180D", "characteristics": [\#(entries)]}]}"#
    }
}
