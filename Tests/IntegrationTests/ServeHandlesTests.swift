import BluetoothCore
import Foundation
import HCITestSupport
import Testing

/// `bluejay serve` with a database that says where everything goes, discovered by the
/// Bumble central: exactly the file's handles, its include, its Extended Properties and
/// its own CCCD; ours in the room the file leaves.
extension CommandLineTests {
    @Test(.hangGuard) func serveKeepsTheFilesHandlesForACentralThatIsNotOurs() async throws {
        let database = try Self.temporaryFile(
            """
            {"name": "Bluejay Handles", "services": [
              {"uuid": "180F", "primary": false, "handle": "0x0030", "characteristics": [{"uuid": "2A19", "properties": ["read"], "value": "64"}]},
              {"uuid": "B1E70100-9D3B-4C7A-8A5E-6F2D0C1B0A00", "handle": "0x0020", "end_handle": "0x002F",
               "includes": [{"uuid": "180F", "handle": "0x0021"}],
               "characteristics": [
                 {"uuid": "FF01", "handle": "0x0023", "value_handle": "0x0025", "properties": ["read", "write"],
                  "extended_properties": ["reliable-write"], "value": "00"},
                 {"uuid": "FF02", "handle": "0x0028", "properties": ["read", "notify"], "cccd": false, "value": "00",
                  "notify": {"every": 0.1, "values": ["01", "02"]}, "descriptors": [{"uuid": "2902", "handle": "0x002B"}]}]}]}
            """)
        defer { try? FileManager.default.removeItem(atPath: database) }
        let central = try await TestCentral()
        defer { central.stop() }
        let stop = ProgramInterrupt()
        async let result = run(
            Repository.bluejay, ["serve", database, "--transport", central.transport], interrupt: stop)
        try await central.connect(toAdvertised: "Bluejay Handles")
        let services = try #require(try await central.send(["op": "discover"])["services"] as? [[String: Any]])
        #expect(services.compactMap { $0["uuid"] as? String } == ["1800", "1801", "B1E701009D3B4C7A8A5E6F2D0C1B0A00"])
        #expect(
            services.compactMap { $0["start"] as? Int } == [0x0001, 0x0006, 0x0020], "ours where the file leaves room")
        #expect(
            services.compactMap { $0["end"] as? Int } == [0x0005, 0x000D, 0x002F],
            "end_handle reserves the group's rest")
        let characteristics = try #require(services.last?["characteristics"] as? [[String: Any]])
        #expect(characteristics.compactMap { $0["handle"] as? Int } == [0x0025, 0x0029])
        let descriptors = characteristics.map {
            ($0["descriptors"] as? [[String: Any]] ?? []).map { "\($0["uuid"] ?? "") \($0["handle"] ?? "")" }
        }
        #expect(
            descriptors == [["2900 \(0x0026)"], ["2902 \(0x002B)"]],
            "the server's Extended Properties; the file's CCCD, none of ours")
        func declarations(_ type: String) async throws -> [String] {
            let found = try await central.send(["op": "read_by_type", "start": 0x0020, "end": 0x002F, "uuid": type])
            return (found["attributes"] as? [[String: Any]] ?? []).map { "\($0["handle"] ?? "") \($0["value"] ?? "")" }
        }
        #expect(
            try await declarations("2803") == ["\(0x0023) 8a250001ff", "\(0x0028) 12290002ff"],
            "declared where the file says")
        #expect(
            try await declarations("2802") == ["\(0x0021) 300032000f18"],
            "the include names 180F's group and its 16-bit UUID")
        #expect(
            hexBytes(try await central.send(["op": "read", "handle": 0x0026])["value"]) == [0x01, 0x00],
            "Reliable Write")
        try await central.send(["op": "reliable_write", "writes": [["handle": 0x0025, "value": "07"]]])
        #expect(hexBytes(try await central.send(["op": "read", "handle": 0x0025])["value"]) == [0x07])
        try await central.send(["op": "subscribe", "handle": 0x0029])
        let values =
            try await central.send(["op": "values", "handle": 0x0029, "count": 2])["values"] as? [String] ?? []
        #expect(
            values.count == 2 && values.allSatisfy { ["01", "02"].contains($0) }, "notified through the file's CCCD")
        try await central.send(["op": "disconnect"])
        try await stop.interrupt(after: "disconnected ")
        let finished = try await result
        #expect(finished.status == 0, "stderr: \(finished.stderr)")
        #expect(finished.stdout.contains("FF02: notifications on, indications off"), "\(finished.stdout)")
    }

    /// `json` in a file of its own in the temporary folder; its path.
    static func temporaryFile(_ json: String) throws -> String {
        let path = NSTemporaryDirectory() + "bluejay-serve-\(UUID().uuidString).json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}
