import ATT
import BluetoothCore
import Foundation
import HCI
import L2CAP
import HCITestSupport
import Testing

/// The attribute-level commands (`discover`, `read`, `write`, `listen` by handle) against
/// the Bumble peer, as the issue accepts them: each run's own btsnoop capture holds, from
/// the host, the MTU exchange and the asked procedure's ATT PDUs and nothing else; ATT
/// errors are printed by name with code and handle and exit 1; bad arguments exit 64.
/// Handles are the peer's (Fixtures/peer/README.md, "GATT database").
extension IntegrationTests {
    @Test func attributeDiscoverRunsOnlyTheAskedProcedure() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let cli = AttributeCLI(peer: peer)
        defer { cli.finish() }

        // Discover All Primary Services: Read By Group Type from 0x0001, continued after
        // each response's last group until Attribute Not Found.
        let services = try await cli.bluejay("discover", ["services"])
        #expect(services.status == 0, "\(services.stderr)")
        #expect(
            services.stdout == """
                1800 Generic Access 0x0001…0x0005
                1801 Generic Attribute 0x0006…0x000d
                180D Heart Rate 0x000e…0x0013
                180A Device Information 0x0014…0x0018
                180F Battery 0x0019…0x001c
                B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00 0x001d…0x002e
                B1E70200-9D3B-4C7A-8A5E-6F2D0C1B0A00 0x0032…0x0035

                """)
        expectOnly(services, ["Read_By_Group_Type_Req", "Read_By_Group_Type_Req", "Read_By_Group_Type_Req"])
        let servicesSentHex: ArraySlice<String> = [
            "10 01 00 ff ff 00 28", "10 1d 00 ff ff 00 28", "10 36 00 ff ff 00 28",
        ]
        #expect(services.sentHex.dropFirst() == servicesSentHex)
        let servicesReceivedNames: [String] = [
            "Exchange_MTU_Rsp", "Read_By_Group_Type_Rsp", "Read_By_Group_Type_Rsp", "Error_Rsp",
        ]
        #expect(services.receivedNames == servicesReceivedNames)

        let servicesJSON = try await cli.bluejay("discover", ["services", "--json"])
        let list = try #require(servicesJSON.json as? [[String: Any]])
        #expect(list.count == 7)
        let serviceKeys: Set<String> = ["uuid", "name", "start_handle", "end_handle"]
        #expect(list.allSatisfy { (service: [String: Any]) -> Bool in Set(service.keys) == serviceKeys })
        let testService = try #require(list.dropLast().last)
        #expect(testService["uuid"] as? String == "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00")
        #expect(testService["name"] is NSNull)
        let testServiceStartHandle: Int? = testService["start_handle"] as? Int
        let testServiceEndHandle: Int? = testService["end_handle"] as? Int
        #expect(testServiceStartHandle == 0x1D && testServiceEndHandle == 0x2E)
        expectOnly(servicesJSON, ["Read_By_Group_Type_Req", "Read_By_Group_Type_Req", "Read_By_Group_Type_Req"])

        // By UUID: Find By Type Value (0x2800 = the UUID), 16-bit and 128-bit.
        let heartRate = try await cli.bluejay("discover", ["services", "--uuid", "180D", "--json"])
        #expect(heartRate.status == 0, "\(heartRate.stderr)")
        let found = try #require(heartRate.json as? [[String: Any]])
        #expect(found.count == 1)
        let foundUUID: String? = found.first?["uuid"] as? String
        let foundName: String? = found.first?["name"] as? String
        #expect(foundUUID == "180D" && foundName == "Heart Rate")
        let foundStartHandle: Int? = found.first?["start_handle"] as? Int
        let foundEndHandle: Int? = found.first?["end_handle"] as? Int
        #expect(foundStartHandle == 0x0E && foundEndHandle == 0x13)
        expectOnly(heartRate, ["Find_By_Type_Value_Req", "Find_By_Type_Value_Req"])
        let heartRateSentHex: ArraySlice<String> = ["06 01 00 ff ff 00 28 0d 18", "06 14 00 ff ff 00 28 0d 18"]
        #expect(heartRate.sentHex.dropFirst() == heartRateSentHex)
        let custom = try await cli.bluejay("discover", ["services", "--uuid", "b1e70001-9d3b-4c7a-8a5e-6f2d0c1b0a00"])
        #expect(custom.stdout == "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00 0x001d…0x002e\n")
        expectOnly(custom, ["Find_By_Type_Value_Req", "Find_By_Type_Value_Req"])
        #expect(custom.sentHex[1] == "06 01 00 ff ff 00 28 00 0a 1b 0c 2d 6f 5e 8a 7a 4c 3b 9d 01 00 e7 b1")

        // Find Included Services: Read By Type (0x2802) finds the tolerance service's include
        // of a secondary service with a 128-bit UUID, which the declaration leaves out (a
        // 4-octet value), and a Read of the included service's declaration gives its UUID at
        // once; then the continuation is answered Attribute Not Found.
        let includes = try await cli.bluejay(
            "discover", ["includes", "--start", "0x0001", "--end", "0xFFFF", "--json"])
        #expect(includes.status == 0, "\(includes.stderr)")
        let include = try #require((includes.json as? [[String: Any]])?.first, "\(includes.stdout)")
        let includeHandle: Int? = include["handle"] as? Int
        let includeStartHandle: Int? = include["start_handle"] as? Int
        let includeEndHandle: Int? = include["end_handle"] as? Int
        #expect(includeHandle == 0x33 && includeStartHandle == 0x2F && includeEndHandle == 0x31)
        #expect(include["uuid"] as? String == "B1E70201-9D3B-4C7A-8A5E-6F2D0C1B0A00")
        expectOnly(includes, ["Read_By_Type_Req", "Read_Req", "Read_By_Type_Req"])
        let includesSentHex: ArraySlice<String> = ["08 01 00 ff ff 02 28", "0a 2f 00", "08 34 00 ff ff 02 28"]
        #expect(includes.sentHex.dropFirst() == includesSentHex)
        let includesReceivedNames: [String] = ["Exchange_MTU_Rsp", "Read_By_Type_Rsp", "Read_Rsp", "Error_Rsp"]
        #expect(includes.receivedNames == includesReceivedNames)

        // Secondary services: Read By Group Type «Secondary Service» (0x2801) over the whole
        // database finds the one the tolerance service includes.
        let secondary = try await cli.bluejay("discover", ["secondary", "--json"])
        #expect(secondary.status == 0, "\(secondary.stderr)")
        let found2801 = try #require(secondary.json as? [[String: Any]], "\(secondary.stdout)")
        let secondaryUUIDs: [String?] = found2801.map { (service: [String: Any]) -> String? in
            service["uuid"] as? String
        }
        #expect(secondaryUUIDs == ["B1E70201-9D3B-4C7A-8A5E-6F2D0C1B0A00"])
        let found2801StartHandle: Int? = found2801.first?["start_handle"] as? Int
        let found2801EndHandle: Int? = found2801.first?["end_handle"] as? Int
        #expect(found2801StartHandle == 0x2F && found2801EndHandle == 0x31)
        expectOnly(secondary, ["Read_By_Group_Type_Req", "Read_By_Group_Type_Req"])
        let secondarySentHex: ArraySlice<String> = ["10 01 00 ff ff 01 28", "10 32 00 ff ff 01 28"]
        #expect(secondary.sentHex.dropFirst() == secondarySentHex)
        let inRange = try await cli.bluejay("discover", ["includes", "--start", "0x0032", "--end", "0x0035"])
        #expect(inRange.stdout == "0x0033 → B1E70201-9D3B-4C7A-8A5E-6F2D0C1B0A00 0x002f…0x0031\n", "\(inRange.stdout)")

        // Discover All Characteristics of a range: Read By Type (0x2803) from --start,
        // continued after the last declaration.
        let characteristics = try await cli.bluejay(
            "discover", ["characteristics", "--start", "0x001D", "--end", "0x002E"])
        #expect(characteristics.status == 0, "\(characteristics.stderr)")
        let characteristicLines: [Substring] = [
            "0x001e B1E70002-9D3B-4C7A-8A5E-6F2D0C1B0A00 value 0x001f [read, write]",
            "0x0020 B1E70003-9D3B-4C7A-8A5E-6F2D0C1B0A00 value 0x0021 [read, indicate]",
            "0x0023 B1E70004-9D3B-4C7A-8A5E-6F2D0C1B0A00 value 0x0024 [read]",
            "0x0025 B1E70005-9D3B-4C7A-8A5E-6F2D0C1B0A00 value 0x0026 [writeWithoutResponse, notify]",
            "0x0028 B1E70006-9D3B-4C7A-8A5E-6F2D0C1B0A00 value 0x0029 [write]",
            "0x002a B1E70007-9D3B-4C7A-8A5E-6F2D0C1B0A00 value 0x002b [notify]",
            "0x002d B1E70008-9D3B-4C7A-8A5E-6F2D0C1B0A00 value 0x002e [read]",
        ]
        #expect(characteristics.stdout.split(separator: "\n") == characteristicLines)
        expectOnly(characteristics, ["Read_By_Type_Req", "Read_By_Type_Req"])
        let characteristicsSentHex: ArraySlice<String> = ["08 1d 00 2e 00 03 28", "08 2e 00 2e 00 03 28"]
        #expect(characteristics.sentHex.dropFirst() == characteristicsSentHex)

        // Discover Characteristics by UUID: the same walk, only the matching ones kept
        // (decimal handles work as well as hex).
        let bodySensor = try await cli.bluejay(
            "discover", ["characteristics", "--start", "14", "--end", "19", "--uuid", "2A38", "--json"])
        let characteristic = try #require((bodySensor.json as? [[String: Any]])?.first)
        #expect((bodySensor.json as? [Any])?.count == 1)
        let characteristicKeys: Set<String> = ["uuid", "name", "declaration_handle", "value_handle", "properties"]
        #expect(Set(characteristic.keys) == characteristicKeys)
        let characteristicUUID: String? = characteristic["uuid"] as? String
        let characteristicName: String? = characteristic["name"] as? String
        #expect(characteristicUUID == "2A38" && characteristicName == "Body Sensor Location")
        let characteristicDeclarationHandle: Int? = characteristic["declaration_handle"] as? Int
        let characteristicValueHandle: Int? = characteristic["value_handle"] as? Int
        #expect(characteristicDeclarationHandle == 0x12 && characteristicValueHandle == 0x13)
        let characteristicProperties: [String]? = characteristic["properties"] as? [String]
        #expect(characteristicProperties == ["read", "write"])
        expectOnly(bodySensor, ["Read_By_Type_Req", "Read_By_Type_Req"])
        let bodySensorSentHex: ArraySlice<String> = ["08 0e 00 13 00 03 28", "08 13 00 13 00 03 28"]
        #expect(bodySensor.sentHex.dropFirst() == bodySensorSentHex)

        // Discover All Characteristic Descriptors: Find Information over exactly the range.
        let descriptors = try await cli.bluejay(
            "discover", ["descriptors", "--start", "0x0010", "--end", "0x0013", "--json"])
        let entries = try #require(descriptors.json as? [[String: Any]])
        let descriptorKeys: Set<String> = ["uuid", "name", "handle"]
        #expect(entries.allSatisfy { (entry: [String: Any]) -> Bool in Set(entry.keys) == descriptorKeys })
        let entryHandles: [Int?] = entries.map { (entry: [String: Any]) -> Int? in entry["handle"] as? Int }
        #expect(entryHandles == [0x10, 0x11, 0x12, 0x13])
        let entryUUIDs: [String?] = entries.map { (entry: [String: Any]) -> String? in entry["uuid"] as? String }
        #expect(entryUUIDs == ["2A37", "2902", "2803", "2A38"])
        #expect(entries[1]["name"] as? String == "Client Characteristic Configuration")
        expectOnly(descriptors, ["Find_Information_Req"])
        #expect(descriptors.sentHex[1] == "04 10 00 13 00")

        // With --mtu 23 each Find Information Response holds one UUID size only: five
        // requests over 0x001D…0x0022, the last one ending exactly at --end.
        let small = try await cli.bluejay(
            "discover", ["descriptors", "--start", "0x001D", "--end", "0x0022", "--mtu", "23"])
        #expect(small.status == 0, "\(small.stderr)")
        #expect(small.stdout.split(separator: "\n").count == 6)
        expectOnly(small, Array(repeating: "Find_Information_Req", count: 5), mtu: 23)
        let smallSentHex: ArraySlice<String> = [
            "04 1d 00 22 00", "04 1f 00 22 00", "04 20 00 22 00", "04 21 00 22 00", "04 22 00 22 00",
        ]
        #expect(small.sentHex.dropFirst() == smallSentHex)
    }

    /// No characteristic of the peer notifies or indicates on subscription by itself (the
    /// heart rate, the echo and the indication all need another write on the same link), so
    /// this proves the subscription: the CCCD found by Find Information when --cccd is not
    /// given, written 01 00 / 02 00, and after --duration written 00 00.
    @Test func attributeListenByHandleSubscribesAndUnsubscribes() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let cli = AttributeCLI(peer: peer)
        defer { cli.finish() }

        let indications = try await cli.bluejay("listen", ["--handle", "0x0021", "--indicate", "--duration", "0.5"])
        #expect(indications.status == 0, "\(indications.stderr)")
        #expect(indications.stdout.isEmpty)
        #expect(indications.stderr == "0 values received\n")
        expectOnly(indications, ["Find_Information_Req", "Write_Req", "Write_Req"])
        let indicationsSentHex: ArraySlice<String> = ["04 22 00 ff ff", "12 22 00 02 00", "12 22 00 00 00"]
        #expect(indications.sentHex.dropFirst() == indicationsSentHex)
        let indicationsReceivedNames: [String] = ["Exchange_MTU_Rsp", "Find_Information_Rsp", "Write_Rsp", "Write_Rsp"]
        #expect(indications.receivedNames == indicationsReceivedNames)
        try #require(indications.sentTimes.count == 4)
        let held = indications.sentTimes[3] - indications.sentTimes[2]
        #expect(held >= 450_000 && held < 3_000_000, "subscribed for \(held) µs with --duration 0.5")

        let notifications = try await cli.bluejay(
            "listen", ["--handle", "0x001B", "--cccd", "0x001C", "--duration", "0.3", "--count", "2", "--json"])
        #expect(notifications.status == 0, "\(notifications.stderr)")
        #expect(notifications.stdout.isEmpty)
        #expect(notifications.stderr == "0 values received\n")
        expectOnly(notifications, ["Write_Req", "Write_Req"])
        let notificationsSentHex: ArraySlice<String> = ["12 1c 00 01 00", "12 1c 00 00 00"]
        #expect(notifications.sentHex.dropFirst() == notificationsSentHex)

        // No CCCD after the handle: Find Information meets the next service declaration.
        let none = try await cli.bluejay("listen", ["--handle", "0x0013", "--duration", "0.3"])
        #expect(none.status == 1)
        #expect(
            none.stderr
                == "Error: no Client Characteristic Configuration descriptor follows 0x0013; give it with --cccd\n")
        expectOnly(none, ["Find_Information_Req"])
        #expect(none.sentHex[1] == "04 14 00 ff ff")
    }

    /// The negative cases conformance suites run against servers: handle 0x0000, a start
    /// after the end, a one-handle Read Multiple. The request goes out as given and the
    /// server's answer is reported as usual (exit status 1, the ATT error by name); only
    /// malformed syntax is a usage error.
    @Test func attributeCommandsSendWhatTheyAreToldAndReportTheAnswer() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let cli = AttributeCLI(peer: peer)
        defer { cli.finish() }
        let cases: [(arguments: [String], request: String, error: String)] = [
            (["read", "--handle", "0x0000"], "0a 00 00", "0x01 invalidHandle (Read_Req on handle 0x0000)"),
            (["read", "--handle", "0"], "0a 00 00", "0x01 invalidHandle"),
            (["read", "--handle", "0xFFFF"], "0a ff ff", "0x01 invalidHandle (Read_Req on handle 0xffff)"),
            (
                ["discover", "characteristics", "--start", "0x0013", "--end", "0x0010"], "08 13 00 10 00 03 28",
                "0x01 invalidHandle"
            ),
            (
                ["discover", "descriptors", "--start", "0x0000", "--end", "0x0010"], "04 00 00 10 00",
                "0x01 invalidHandle"
            ),
            (
                ["discover", "includes", "--start", "0x0020", "--end", "0x0001"], "08 20 00 01 00 02 28",
                "0x01 invalidHandle"
            ),
            (
                ["read", "--uuid", "2A29", "--start", "0x0100", "--end", "0x0001"], "08 00 01 01 00 29 2a",
                "0x01 invalidHandle"
            ),
            (["write", "--handle", "0x0000", "01"], "12 00 00 01", "0x01 invalidHandle (Write_Req on handle 0x0000)"),
        ]
        for (arguments, request, error) in cases {
            let result = try await cli.bluejay(arguments[0], Array(arguments.dropFirst()))
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.sentHex.dropFirst().first == request, "\(arguments): sent \(result.sentHex)")
            #expect(result.receivedNames.last == "Error_Rsp", "\(arguments): \(result.receivedNames)")
            #expect(result.stderr.contains(error), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error"), "\(arguments)")
        }
        // Read Multiple with one handle: the specification asks for two or more; the request
        // still goes out, and this server answers it.
        let one = try await cli.bluejay("read", ["--handles", "0x0016", "--hex"])
        #expect(one.sentHex.dropFirst().first == "0e 16 00", "\(one.sentHex)")
        #expect(one.receivedNames.count == 2, "\(one.receivedNames)")
    }

    @Test func attributeCommandsRejectBadArgumentsAsUsageErrors() async throws {
        // No peer: a command that got past validation would fail to connect (exit 1).
        let address = "F0:0D:B1:E7:00:01/random"
        let cases: [([String], String)] = [
            (["discover", address, "includes"], "includes need --start H --end H"),
            (["discover", address, "descriptors", "--start", "0x0010"], "descriptors need --start H --end H"),
            (["discover", address, "services", "--start", "1", "--end", "2"], "services take no --start/--end"),
            (
                ["discover", address, "descriptors", "--start", "1", "--end", "2", "--uuid", "2902"],
                "--uuid goes with services or characteristics"
            ),
            (["discover", address, "services", "--uuid", "xyz"], "--uuid 'xyz' is not a UUID"),
            (["discover", address, "everything"], "'everything' is invalid"),
            (
                ["read", address, "--handle", "70000"],
                "--handle '70000' is not an attribute handle (0…65535, decimal or 0x0000…0xFFFF)"
            ),
            (["read", address, "--handle", "0x10000"], "--handle '0x10000' is not an attribute handle"),
            (["read", address, "--handle", "abc"], "--handle 'abc' is not an attribute handle"),
            (["read", address], "give exactly one of: SERVICE CHARACTERISTIC, --handle, --uuid, --handles"),
            (["read", address, "--handle", "3", "--uuid", "2A00"], "give exactly one of"),
            (
                ["read", address, "--handles", "3,x"],
                "--handles wants comma-separated handles (decimal or 0x-hex), got '3,x'"
            ),
            (["read", address, "--handle", "3", "--max-value", "511"], "--max-value must be at least 512"),
            (["read", address, "--handle", "3", "--variable"], "--variable goes with --handles"),
            (["read", address, "--uuid", "2A00", "--long"], "--long and --offset go with --handle"),
            (["read", address, "--handle", "3", "--start", "1"], "--start and --end go with --uuid"),
            (["read", address, "--handle", "3", "--mtu", "22"], "--mtu must be between 23 and 517"),
            (["read", address, "--handle", "3", "--mtu", "518"], "--mtu must be between 23 and 517"),
            (["read", "F0:0D:B1:E7:00/random", "--handle", "3"], "is not an address"),
            (["write", address, "--handle", "3", "zz"], "'zz' is not hex bytes"),
            (["write", address, "--handle", "3", "012"], "'012' is not hex bytes"),
            (["write", address, "--handle", "3"], "with --handle, give only HEXBYTES"),
            (
                ["write", address, "--handle", "3", "01", "--signed", "--long"],
                "--without-response, --signed, --long and --reliable exclude each other"
            ),
            (["write", address, "--handle", "3", "01", "--without-response", "--reliable"], "exclude each other"),
            (["write", address, "--handle", "3", "01", "--offset", "2"], "--offset goes with --long"),
            (["write", address, "180D", "2A38", "01", "--long"], "--long goes with --handle"),
            (["listen", address], "give SERVICE CHARACTERISTIC or --handle H"),
            (
                ["listen", address, "180D", "2A37", "--handle", "3"],
                "give SERVICE CHARACTERISTIC or --handle, not both"
            ),
            (["listen", address, "--handle", "3", "--count", "0"], "--count must be at least 1"),
            (
                ["listen", address, "--handle", "3", "--duration", "0"],
                "--duration must be between 0 and 86400 seconds"
            ),
            (["listen", address, "--handle", "3", "--cccd", "0x1ffff"], "--cccd '0x1ffff' is not an attribute handle"),
            (["listen", address, "180D", "2A37", "--indicate"], "--cccd and --indicate go with --handle"),
        ]
        for (arguments, message) in cases {
            let result = try await run(Repository.bluejay, arguments + ["--transport", "tcp:127.0.0.1:1"])
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("ECONNREFUSED"), "\(arguments)")
        }
    }

    /// The host's ATT PDUs in the run's capture are the MTU exchange (asking for `mtu`) and
    /// then exactly `procedure`, by name; the host sent nothing on any other L2CAP channel.
    func expectOnly(
        _ result: AttributeRun, _ procedure: [String], mtu: UInt16 = 517,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let names: [String] = ["Exchange_MTU_Req"] + procedure
        #expect(result.sentNames == names, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        let exchange: [UInt8] = [0x02, UInt8(mtu & 0xFF), UInt8(mtu >> 8)]
        #expect(result.sent.first == exchange, sourceLocation: sourceLocation)
        #expect(result.receivedNames.first == "Exchange_MTU_Rsp", sourceLocation: sourceLocation)
        #expect(result.otherFrames.isEmpty, "not ATT: \(result.otherFrames)", sourceLocation: sourceLocation)
    }
}
