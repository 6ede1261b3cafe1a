import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import SMP
import Storage
import Testing

/// Issue 27: pairing with `--verbose`, as a user pasting output into a bug report would, leaves
/// none of the bond's keys in the output, in a capture recorded with `--capture-redacted`, or
/// in a copy made with `trace --redact`, in any spelling; the plain capture still holds them
/// (so the search can find what it looks for) and still replays; `--log-secrets` shows them
/// after one warning. Against the Bumble peer, LE Secure Connections and legacy pairing.
@Suite struct SecretRedactionTests {
    /// A fresh temporary path.
    private func temporary(_ suffix: String) -> String {
        NSTemporaryDirectory() + "bluejay-redact-\(UUID().uuidString)\(suffix)"
    }

    private func bluejay(_ arguments: [String], transport: String?, store: String) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try await run(
            Repository.bluejay, arguments + (transport.map { ["--transport", $0] } ?? []),
            environment: ["BLUEJAY_STORE": store])
    }

    /// The keys pairing left in `store`, by name: the bond's LTK, IRK and CSRK (when the
    /// peer distributed them) and our own IRK, which we distributed.
    private func keys(in store: String) throws -> [String: [UInt8]] {
        let bond = try #require(BondStore(store: StoreDirectory(path: store)).all().first, "no bond in \(store)")
        var keys = ["LTK": try #require(bond.longTermKeyBytes)]
        if let irk = bond.identityResolvingKeyBytes { keys["peer IRK"] = irk }
        if let csrk = bond.signatureKey { keys["CSRK"] = try parseHex(csrk) }
        let local = try String(contentsOfFile: store + "/bonds/local-irk.key", encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        keys["local IRK"] = try parseHex(local)
        for (name, key) in keys {
            #expect(
                key.count == 16 && Set(key).count > 1, "\(name) \(key.hexDump) is no key a search can tell from padding"
            )
        }
        return keys
    }

    private struct NotHex: Error { let text: String }

    /// The octets of a key written as hex in the store.
    private func parseHex(_ text: String) throws -> [UInt8] {
        guard text.count % 2 == 0 else { throw NotHex(text: text) }
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { throw NotHex(text: text) }
            bytes.append(byte)
            index = next
        }
        return bytes
    }

    /// Every way a key may be written in text: contiguous, space- or colon-separated, lower or
    /// upper case, in wire order and reversed.
    static func spellings(_ key: [UInt8]) -> [String] {
        [key, key.reversed()].flatMap { bytes in
            ["", " ", ":"].flatMap { separator in
                [bytes.hexString(separator: separator), bytes.hexString(uppercase: true, separator: separator)]
            }
        }
    }

    /// Records an issue for each key some spelling of which is in `text`.
    private func expectNoKey(
        in text: String, _ keys: [String: [UInt8]], _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (name, key) in keys {
            let found = Self.spellings(key).filter { text.contains($0) }
            #expect(found.isEmpty, "\(what) shows the \(name) as \(found)", sourceLocation: sourceLocation)
        }
    }

    /// Whether the capture holds the key's octets, in wire order or reversed.
    private func holds(_ capture: [UInt8], _ key: [UInt8]) -> Bool {
        [key, key.reversed()].contains { key in
            capture.count >= key.count
                && (0...(capture.count - key.count)).contains { capture[$0..<($0 + key.count)].elementsEqual(key) }
        }
    }

    /// Pairs with the peer started with `peerArguments` and holds the output and captures
    /// to the rule; `logSecretsShowsLTK` when the session's LE_Enable_Encryption carries the
    /// bond's LTK (Secure Connections; legacy pairing encrypts with the STK and receives
    /// the LTK over SMP, which the log does not dump).
    private func pairAndCheck(peerArguments: [String], secureConnections: Bool, logSecretsShowsLTK: Bool) async throws {
        // A peer IRK of random octets: Bumble's default is all zeros, which zeroing would fake.
        let irk = (0..<16).map { _ in UInt8.random(in: 1...255) }
        let peer = try await TestPeer(arguments: peerArguments + ["--irk", irk.hexString()])
        defer { peer.stop() }
        let address = peer.address + "/random"
        let stores = (0..<4).map { _ in temporary("") }
        let plain = temporary(".btsnoop"), copy = temporary("-copy.btsnoop"), direct = temporary("-direct.btsnoop")
        defer {
            for path in stores + [plain, copy, direct] { try? FileManager.default.removeItem(atPath: path) }
        }
        let seed = ["--smp-test-seed", secureConnections ? "27" : "28"]

        // 1. --verbose with a plain capture: nothing in the output, everything in the capture.
        let paired = try await bluejay(
            ["pair", address, "--verbose", "--capture", plain] + seed, transport: peer.transport, store: stores[0])
        #expect(paired.status == 0, "stderr: \(paired.stderr)")
        #expect(
            paired.stdout.contains(secureConnections ? "LE Secure Connections" : "LE legacy pairing"),
            "\(paired.stdout)")
        let keys = try keys(in: stores[0])
        #expect(keys["peer IRK"] == irk)
        expectNoKey(in: paired.stdout + paired.stderr, keys, "pair --verbose")
        let marks = paired.stderr.contains("<redacted 16 octets>"),
            warned = paired.stderr.contains(HCILogger.secretsWarningText)
        #expect(marks, "the verbose log shows no redaction at all")
        #expect(!warned, "a warning about secrets in clear without --log-secrets")
        let original = try readWholeFile(plain)
        for (name, key) in keys {
            let held = holds(original, key)
            #expect(held, "the plain capture lacks the \(name): the search would find nothing anywhere")
        }

        // 2. trace --redact: the copy holds none, is as long, and prints where it was zeroed.
        let redacted = try await bluejay(["trace", "--redact", plain, copy], transport: nil, store: stores[0])
        #expect(redacted.status == 0 && redacted.stdout.contains("zeroed"), "\(redacted)")
        let zeroed = try readWholeFile(copy)
        #expect(zeroed.count == original.count)
        #expect(try BTSnoopFile(bytes: zeroed).records.count == BTSnoopFile(bytes: original).records.count)
        for (name, key) in keys {
            let held = holds(zeroed, key)
            #expect(!held, "trace --redact left the \(name)")
        }
        let printed = try await bluejay(["trace", copy], transport: nil, store: stores[0])
        #expect(printed.status == 0)
        expectNoKey(in: printed.stdout + printed.stderr, keys, "trace of the redacted copy")
        let marked = printed.stdout.split(separator: "\n").filter { $0.contains("<redacted 16 octets>") }
        #expect(marked.contains { $0.contains("Identity_Information") }, "\(printed.stdout)")
        #expect(
            marked.contains { $0.contains(secureConnections ? "LE_Enable_Encryption" : "Encryption_Information") },
            "\(printed.stdout)")
        let printedOriginal = try await bluejay(["trace", plain], transport: nil, store: stores[0])
        expectNoKey(in: printedOriginal.stdout + printedOriginal.stderr, keys, "trace of the plain capture")

        // 3. The plain capture replays: the same pairing, the same keys, byte for byte.
        let replayed = try await bluejay(["pair", address] + seed, transport: "replay:\(plain)", store: stores[1])
        #expect(replayed.status == 0, "stderr: \(replayed.stderr)")
        #expect(try self.keys(in: stores[1]) == keys)

        // 4. --capture-redacted records that way directly.
        let live = try await bluejay(
            ["pair", address, "--verbose", "--capture-redacted", direct], transport: peer.transport, store: stores[2])
        #expect(live.status == 0, "stderr: \(live.stderr)")
        let liveKeys = try self.keys(in: stores[2])
        expectNoKey(in: live.stdout + live.stderr, liveKeys, "pair --verbose --capture-redacted")
        let recorded = try readWholeFile(direct)
        for (name, key) in liveKeys {
            let held = holds(recorded, key)
            #expect(!held, "--capture-redacted wrote the \(name)")
        }
        await #expect(try bluejay(["trace", "--check", direct], transport: nil, store: stores[2]).status == 0)

        // 5. --log-secrets: one warning, then the keys as they are.
        let debugging = try await bluejay(
            ["pair", address, "--verbose", "--log-secrets"], transport: peer.transport, store: stores[3])
        #expect(debugging.status == 0, "stderr: \(debugging.stderr)")
        #expect(
            debugging.stderr.components(separatedBy: "bluejay: warning: " + HCILogger.secretsWarningText).count == 2,
            "\(debugging.stderr.prefix(3000))")
        if logSecretsShowsLTK {
            let ltk = try #require(try self.keys(in: stores[3])["LTK"])
            #expect(debugging.stderr.contains(ltk.hexDump), "the LTK is not in the --log-secrets output")
        }
    }

    @Test func secureConnectionsPairingKeepsKeysOutOfLogsAndRedactedCaptures() async throws {
        try await pairAndCheck(peerArguments: [], secureConnections: true, logSecretsShowsLTK: true)
    }

    @Test func legacyPairingKeepsKeysOutOfLogsAndRedactedCaptures() async throws {
        try await pairAndCheck(peerArguments: ["--no-sc"], secureConnections: false, logSecretsShowsLTK: false)
    }
}
