import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import Testing

/// `bluejay advertise` and `bluejay serve` against the Bumble central.
extension CommandLineTests {
    @Test(.hangGuard) func advertiseIsFoundWithItsServiceAndData() async throws {
        let central = try await TestCentral()
        defer { central.stop() }
        let stop = ProgramInterrupt()
        async let result = run(
            Repository.bluejay,
            [
                "advertise", "--transport", central.transport, "--name", "Bluejay Adv",
                "--service", "180D", "--data", "05ffffffb1e7",
            ], interrupt: stop)
        let found = try await central.send(["op": "scan", "name": "Bluejay Adv"])
        try await stop.interrupt(after: "advertising as")
        let data = AdvertisingData(parsing: hexBytes(found["data"]))
        #expect(data.serviceUUIDs == [BluetoothUUID(UInt16(0x180D))])
        #expect(data.manufacturerData == [ManufacturerData(companyIdentifier: 0xFFFF, data: [0xB1, 0xE7])])
        #expect(found["connectable"] as? Bool == true)
        let finished = try await result
        #expect(finished.status == 0, "stderr: \(finished.stderr)")
        #expect(finished.stdout.hasPrefix("advertising as Bluejay Adv (extended advertising commands)"))
    }

    @Test(.hangGuard) func serveAnswersACentralFromTheJSONDatabase() async throws {
        let central = try await TestCentral()
        defer { central.stop() }
        let database = NSTemporaryDirectory() + "bluejay-serve-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: database) }
        try Data(
            """
            {"name": "Bluejay Serve", "services": [{"uuid": "181A", "characteristics": [
              {"uuid": "2A6E", "properties": ["read", "notify"], "value": "0a09",
               "notify": {"every": 0.1, "values": ["0100", "0200"]},
               "descriptors": [{"uuid": "2901", "text": "Temperature"}]},
              {"uuid": "B1E70A02-9D3B-4C7A-8A5E-6F2D0C1B0A00", "properties": ["read", "write"], "text": "21"}]}]}
            """.utf8
        ).write(to: URL(fileURLWithPath: database))
        let stop = ProgramInterrupt()
        async let result = run(
            Repository.bluejay, ["serve", database, "--transport", central.transport], interrupt: stop)
        let found = try await central.send(["op": "scan", "name": "Bluejay Serve"])
        #expect(AdvertisingData(parsing: hexBytes(found["data"])).serviceUUIDs == [BluetoothUUID(UInt16(0x181A))])
        try await central.send([
            "op": "connect", "address": found["address"] as Any, "address_type": found["address_type"] as Any,
        ])
        let services = try #require(try await central.send(["op": "discover"])["services"] as? [[String: Any]])
        let characteristics = try #require(services.last?["characteristics"] as? [[String: Any]])
        let handles = characteristics.compactMap { $0["handle"] as? Int }
        try #require(handles.count == 2)
        let descriptors = try #require(characteristics[0]["descriptors"] as? [[String: Any]])
        #expect(descriptors.compactMap { $0["uuid"] as? String }.contains("2901"))
        // The timer has been changing the value since the start: one of its values or the first.
        #expect(
            ["0a09", "0100", "0200"].contains(
                try await central.send(["op": "read", "handle": handles[0]])["value"] as? String ?? ""))
        #expect(hexBytes(try await central.send(["op": "read", "handle": handles[1]])["value"]) == Array("21".utf8))
        try await central.send(["op": "write", "handle": handles[1], "value": "3232"])
        try await central.send(["op": "subscribe", "handle": handles[0]])
        let values =
            try await central.send(["op": "values", "handle": handles[0], "count": 3])["values"] as? [String] ?? []
        #expect(values.count == 3 && values.allSatisfy { ["0100", "0200"].contains($0) })
        try await central.send(["op": "disconnect"])
        try await stop.interrupt(after: "disconnected ")
        let finished = try await result
        #expect(finished.status == 0, "stderr: \(finished.stderr)")
        let lines = finished.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "advertising as Bluejay Serve (extended advertising commands)")
        #expect(lines.contains { $0.hasPrefix("connected ") })
        #expect(lines.contains { $0.hasSuffix("wrote B1E70A02-9D3B-4C7A-8A5E-6F2D0C1B0A00: 3232") }, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("2A6E: notifications on, indications off") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("disconnected ") })
    }

    /// `bluejay serve` with its standard input open and silent, as a person runs it (an idle
    /// terminal) or a script does (`sleep 40 | bluejay serve`): the stack answers at once.
    /// The reader of value lines blocks in `readLine()` holding stdin's lock; output must
    /// never wait for it (`fflush(nil)` did, and stopped the whole stack: a central's
    /// Exchange MTU went unanswered and `connected` was never printed).
    @Test(.hangGuard, arguments: [IdleInput.openPipe, .terminal])
    func serveAnswersWhileItsInputIsOpenAndSilent(_ idle: IdleInput) async throws {
        let central = try await TestCentral()
        defer { central.stop() }
        let database = NSTemporaryDirectory() + "bluejay-serve-idle-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: database) }
        try Data(
            """
            {"name": "Bluejay Idle", "services": [{"uuid": "181A", "characteristics": [
              {"uuid": "2A6E", "properties": ["read"], "value": "0a09"}]}]}
            """.utf8
        ).write(to: URL(fileURLWithPath: database))
        let stop = ProgramInterrupt()
        async let result = run(
            Repository.bluejay, ["serve", database, "--transport", central.transport], idleInput: idle, interrupt: stop)
        let found = try await central.send(["op": "scan", "name": "Bluejay Idle"])
        try await central.send([
            "op": "connect", "address": found["address"] as Any, "address_type": found["address_type"] as Any,
        ])
        #expect(try await central.send(["op": "mtu", "mtu": 247])["mtu"] as? Int == 247)
        let services = try #require(try await central.send(["op": "discover"])["services"] as? [[String: Any]])
        let handle = try #require((services.last?["characteristics"] as? [[String: Any]])?.first?["handle"] as? Int)
        #expect(try await central.send(["op": "read", "handle": handle])["value"] as? String == "0a09")
        try await central.send(["op": "disconnect"])
        try await stop.interrupt(after: "disconnected ")
        let finished = try await result
        #expect(finished.status == 0, "stderr: \(finished.stderr)")
        let lines = finished.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("connected ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("disconnected ") }, "\(lines)")
    }
}

extension CommandLineTests {
    /// `bluejay advertise --address private --renew 1`: the central finds us at the
    /// resolvable private address the tool prints (not the controller's public one), and the
    /// tool prints each new address as it renews them; `--address static` advertises from
    /// our static random address, the same in the next run (kept in the store). Wrong
    /// combinations are refused before anything runs.
    @Test(.hangGuard) func advertiseFromPrivateAndStaticAddresses() async throws {
        let store = NSTemporaryDirectory() + "bluejay-adv-address-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: store) }
        let environment = ["BLUEJAY_STORE": store]
        let central = try await TestCentral()
        defer { central.stop() }
        let stop = ProgramInterrupt()
        async let result = run(
            Repository.bluejay,
            [
                "advertise", "--transport", central.transport, "--name", "Bluejay RPA",
                "--address", "private", "--renew", "1",
            ], environment: environment, interrupt: stop)
        let found = try await central.send(["op": "scan", "name": "Bluejay RPA"])
        // The first address and one renewal at least, a second after the first.
        try await stop.interrupt(after: " (resolvable private random)", times: 2)
        let address = try #require(BluetoothAddress(found["address"] as? String ?? ""))
        #expect(found["address_type"] as? Int == 1 && address.randomKind == .resolvablePrivate)
        let finished = try await result
        #expect(finished.status == 0, "stderr: \(finished.stderr)")
        let lines = finished.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "advertising as Bluejay RPA (extended advertising commands)")
        let announced = lines.dropFirst().filter {
            $0.hasPrefix("advertising address ") && $0.hasSuffix(" (resolvable private random)")
        }
        #expect(announced.count >= 2, "the first address and at least one renewal: \(lines)")
        #expect(announced.contains("advertising address \(address) (resolvable private random)"), "\(lines)")
        #expect(Set(announced).count == announced.count, "each renewal a new address")

        var statics: [String] = []
        for _ in 0..<2 {
            let central = try await TestCentral()
            defer { central.stop() }
            let stop = ProgramInterrupt()
            async let result = run(
                Repository.bluejay,
                [
                    "advertise", "--transport", central.transport, "--name", "Bluejay Static",
                    "--address", "static",
                ], environment: environment, interrupt: stop)
            let found = try await central.send(["op": "scan", "name": "Bluejay Static"])
            try await stop.interrupt(after: " (static random)")
            let finished = try await result
            #expect(finished.status == 0, "stderr: \(finished.stderr)")
            let address = try #require(BluetoothAddress(found["address"] as? String ?? ""))
            #expect(found["address_type"] as? Int == 1 && address.isValidStaticRandom)
            #expect(finished.stdout.contains("advertising address \(address) (static random)"))
            statics.append(address.description)
        }
        #expect(statics[0] == statics[1], "our static random address is kept in the store")

        for arguments in [
            ["--renew", "5"], ["--address", "private", "--renew", "0"], ["--address", "40:00:00:00:00:01"],
            ["--address", "nearby"],
        ] {
            let refused = try await run(
                Repository.bluejay, ["advertise", "--transport", "tcp:127.0.0.1:1", "--name", "X"] + arguments,
                environment: environment)
            #expect(refused.status != 0 && refused.stderr.contains("--"), "\(arguments): \(refused.stderr)")
        }
    }
}
