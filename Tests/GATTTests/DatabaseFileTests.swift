import ATT
import BluetoothCore
import GATT
import Testing

/// `bluejay serve`'s database file: what it declares becomes the server's definitions, and
/// what cannot be read fails naming the entry, before anything is served.
struct DatabaseFileTests {
    static func file(_ json: String) throws(DatabaseFileError) -> DatabaseFile { try DatabaseFile(json: Array(json.utf8)) }

    @Test func aFileBecomesTheServersDefinitions() throws {
        let file = try Self.file("""
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
        #expect(setPoint.permissions == [.read, .write, .writeEncrypted, .writeAuthorized] && setPoint.value == Array("21".utf8))
        #expect(!file.services[1].definition.isPrimary)
    }

    @Test(arguments: [
        (#"{"services": [{"uuid": "2A37-0000", "characteristics": []}]}"#, "services[0]: '2A37-0000' is not a UUID"),
        (#"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["notfiy"]}]}]}"#,
         "services[0].characteristics[0]: no property is called 'notfiy'"),
        (#"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["read"], "permissions": ["readable"]}]}]}"#,
         "services[0].characteristics[0]: no permission is called 'readable'"),
        (#"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["read"], "value": "0g"}]}]}"#,
         "services[0].characteristics[0]: value '0g' is not hex octets"),
        (#"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["read"], "flood": true}]}]}"#,
         "services[0].characteristics[0]: \"flood\" needs the notify property"),
        (#"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["notify"], "notify": {"every": 1, "values": []}}]}]}"#,
         "services[0].characteristics[0].notify: no values to notify"),
        (#"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["notify"], "notify": {"every": 0, "values": ["00"]}}]}]}"#,
         "services[0].characteristics[0].notify: 'every' must be seconds above 0"),
        (#"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["read"], "descriptors": [{"uuid": "x"}]}]}]}"#,
         "services[0].characteristics[0].descriptors[0]: 'x' is not a UUID"),
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
            _ = try Self.file(#"{"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["read"], "value": "\#(long)"}]}]}"#)
            Issue.record("a 513-octet value was accepted")
        } catch {
            #expect(error.description == "services[0].characteristics[0]: the value is 513 octets; at most 512")
        }
    }
}
