import Foundation
import HCITestSupport
import Testing
import TraceDecoding
import TraceTestSupport

/// `bluejay mock` as scripts drive it: the JSON contract over a shipped real trace, and the
/// errors for a peer the recording lacks and for a file that is no recording.
@Suite struct MockCommandLineTests {
    static let treadmill = RealTraces.shipped + "/android-mediatek-horizon-treadmill-write-notify.btsnoop"

    @Test func jsonOfARealTraceHasThePeerItsDiscoveryShowed() async throws {
        let result = try await run(Repository.bluejay, ["mock", "--json", Self.treadmill])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        guard case let .object(top) = try JSONValue(parsing: result.stdout) else {
            Issue.record("not an object"); return
        }
        #expect(top["file"] == .string(Self.treadmill))
        guard case let .array(peers)? = top["peripherals"], case let .object(peer)? = peers.first else {
            Issue.record("no peripherals: \(result.stdout.prefix(200))")
            return
        }
        #expect(peers.count == 1)
        for key in [
            "address", "address_type", "address_made_up", "name", "connections", "advertising_data",
            "scan_response_data",
            "mtu", "services", "undiscovered_handles", "errors", "reactions", "missing",
        ] {
            #expect(peer[key] != nil, "no \(key)")
        }
        #expect(result.stdout.contains("\"address_made_up\": false"))
        #expect(peer["mtu"] == .null)
        guard case let .array(services)? = peer["services"], case let .array(reactions)? = peer["reactions"] else {
            return
        }
        #expect(services.count >= 1)
        #expect(!reactions.isEmpty)
    }

    /// `BLUEJAY_LOG` sets each layer's level: `hci=debug` shows the HCI packets, a debug
    /// level for another layer shows none of them, `--verbose` shows them all, and a
    /// malformed item is a usage error that names it.
    @Test func bluejayLogSetsEachLayersLevel() async throws {
        let info = ["info", "--transport", "mock:\(Self.treadmill)"]
        let hci = try await run(Repository.bluejay, info, environment: ["BLUEJAY_LOG": "hci=debug"])
        #expect(hci.status == 0, "stderr: \(hci.stderr)")
        #expect(hci.stderr.contains("bluejay: debug: < 0x0c03 Reset"), "\(hci.stderr.prefix(300))")
        let att = try await run(Repository.bluejay, info, environment: ["BLUEJAY_LOG": "att=debug"])
        #expect(att.status == 0 && !att.stderr.contains("bluejay: debug:"), "\(att.stderr.prefix(300))")
        let quietHCI = try await run(
            Repository.bluejay, info + ["--verbose"], environment: ["BLUEJAY_LOG": "hci=warning"])
        #expect(
            quietHCI.status == 0 && !quietHCI.stderr.contains("bluejay: debug: < "), "\(quietHCI.stderr.prefix(300))")
        let bad = try await run(Repository.bluejay, info, environment: ["BLUEJAY_LOG": "hci=loud"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("BLUEJAY_LOG: 'hci=loud' is not LAYER=LEVEL or LEVEL"), "\(bad.stderr)")
    }

    @Test func unknownPeerAndBadFileAreClearErrors() async throws {
        let absent = try await run(Repository.bluejay, ["mock", "--peer", "00:11:22:33:44:55", Self.treadmill])
        #expect(absent.status != 0)
        #expect(
            absent.stderr.contains("no peer 00:11:22:33:44:55") && absent.stderr.contains("FA:E4:E3:24:20:09"),
            "\(absent.stderr)")
        let notSnoop = try await run(Repository.bluejay, ["mock", RealTraces.shipped + "/README.md"])
        #expect(notSnoop.status != 0)
        #expect(notSnoop.stderr.contains("not a btsnoop file"), "\(notSnoop.stderr)")
    }
}
