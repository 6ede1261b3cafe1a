import BluetoothCore
import Foundation
import HCI
import SMP
import Storage
import HCITestSupport
import Testing
import TraceDecoding

/// Pairing, bonding and encryption against the Bumble peer, through the `bluejay` tool as
/// a user runs it: each command is a new process, so a bond must survive in the store.
@Suite struct PairingTests {
    static let secret = "0x0024"  // …0004: readable only on an encrypted link

    /// A store of the test's own.
    private func store() -> String { NSTemporaryDirectory() + "bluejay-pairing-\(UUID().uuidString)" }

    private func bluejay(_ arguments: [String], _ peer: TestPeer, store: String, input: String? = nil) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        // `bonds` and `unpair` only touch the store.
        let transport = ["bonds", "unpair"].contains(arguments[0]) ? [] : ["--transport", peer.transport]
        return try await run(
            Repository.bluejay, arguments + transport, environment: ["BLUEJAY_STORE": store], input: input)
    }

    /// SMP codes in a capture, by name.
    private func smpCodes(_ capture: String) throws -> [String: Int] {
        TraceSummary(file: try BTSnoopFile(path: capture)).smp
    }

    private func capturePath() -> String { NSTemporaryDirectory() + "bluejay-pairing-\(UUID().uuidString).btsnoop" }

    /// LESC Just Works: paired and bonded (file mode 0600), then a new process reading the
    /// protected characteristic encrypts with the stored key: no SMP in its capture.
    @Test func secureConnectionsJustWorksBondsAndReconnectsWithoutPairing() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = store()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let address = peer.address + "/random"

        let paired = try await bluejay(["pair", address, "--json"], peer, store: store)
        #expect(paired.status == 0, "stderr: \(paired.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(paired.stdout.utf8)) as? [String: Any])
        #expect(object["method"] as? String == "Just Works")
        #expect(object["secure_connections"] as? Bool == true)
        #expect(object["authenticated"] as? Bool == false)
        let file = try #require(object["bond_file"] as? String)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("\"longTermKey\"") && text.contains(peer.address))
        #expect(
            !paired.stderr.contains(String(text.split(separator: "\"longTermKey\" : \"").last?.prefix(32) ?? "-")),
            "a key reached the log")

        let listed = try await bluejay(["bonds", "--json"], peer, store: store)
        #expect(
            listed.stdout.contains("\"address\": \"\(peer.address)\"")
                && listed.stdout.contains("\"secure_connections\": true"))
        #expect(!listed.stdout.contains("longTermKey"))

        let capture = capturePath()
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let read = try await bluejay(
            ["read", address, "--handle", Self.secret, "--capture", capture], peer, store: store)
        #expect(read.status == 0, "stderr: \(read.stderr)")
        #expect(read.stdout.contains("\"Bluejay secret\""))
        #expect(try smpCodes(capture).isEmpty, "the bonded reconnection paired again")
        #expect(
            TraceSummary(file: try BTSnoopFile(path: capture)).commands.keys.contains {
                $0.contains("LE_Enable_Encryption")
            })

        let unpaired = try await bluejay(["unpair", peer.address], peer, store: store)
        #expect(unpaired.status == 0)
        #expect(!FileManager.default.fileExists(atPath: file))
        await #expect(try bluejay(["unpair", peer.address], peer, store: store).stderr.contains("no bond with"))
    }

    /// LESC Passkey Entry: the peer displays 123456, we type it (standard input); a wrong
    /// passkey fails by name and leaves no bond.
    @Test func secureConnectionsPasskeyEntry() async throws {
        let peer = try await TestPeer(arguments: ["--io-capability", "display"])
        defer { peer.stop() }
        let store = store()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let address = peer.address + "/random"

        let wrong = try await bluejay(["pair", address, "--io", "keyboard"], peer, store: store, input: "111111\n")
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("0x04 confirmValueFailed"), "stderr: \(wrong.stderr)")
        #expect(BondStore(store: StoreDirectory(path: store)).all().isEmpty)

        let paired = try await bluejay(["pair", address, "--io", "keyboard"], peer, store: store, input: "123456\n")
        #expect(paired.status == 0, "stderr: \(paired.stderr)")
        #expect(
            paired.stdout.contains("Passkey Entry, LE Secure Connections") && paired.stdout.contains("authenticated"))
        #expect(paired.stderr.contains("Enter the passkey"))
        let read = try await bluejay(["read", address, "--handle", Self.secret], peer, store: store)
        #expect(read.stdout.contains("\"Bluejay secret\""), "stderr: \(read.stderr)")
    }

    /// LE legacy Just Works (the peer offers no Secure Connections): the peer's distributed
    /// LTK (Bumble sends EDIV 0 and Rand 0 with it) encrypts the next link; `--sc-only` refuses such a peer.
    @Test func legacyJustWorksAndSecureConnectionsOnly() async throws {
        let peer = try await TestPeer(arguments: ["--no-sc"])
        defer { peer.stop() }
        let store = store()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let address = peer.address + "/random"

        let refused = try await bluejay(["pair", address, "--sc-only"], peer, store: store)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("only LE legacy pairing"), "stderr: \(refused.stderr)")

        let paired = try await bluejay(["pair", address, "--json"], peer, store: store)
        #expect(paired.status == 0, "stderr: \(paired.stderr)")
        #expect(paired.stdout.contains("\"secure_connections\": false"))
        let bond = try #require(BondStore(store: StoreDirectory(path: store)).all().first)
        #expect(!bond.secureConnections && bond.longTermKeyBytes != nil, "the peer's distributed LTK is the bond")

        let capture = capturePath()
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let read = try await bluejay(
            ["read", address, "--handle", Self.secret, "--capture", capture], peer, store: store)
        #expect(read.stdout.contains("\"Bluejay secret\""), "stderr: \(read.stderr)")
        #expect(try smpCodes(capture).isEmpty)
    }

    /// On demand, like iOS: reading the protected characteristic on a fresh store pairs
    /// (Insufficient Encryption → pairing → the read again); `--no-pair` reports the ATT
    /// error by name instead.
    @Test func pairsOnDemandUnlessTold() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = store()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let address = peer.address + "/random"

        let refused = try await bluejay(["read", address, "--handle", Self.secret, "--no-pair"], peer, store: store)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("0x0F insufficientEncryption"), "stderr: \(refused.stderr)")

        let capture = capturePath()
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let read = try await bluejay(
            ["read", address, "--handle", Self.secret, "--capture", capture], peer, store: store)
        #expect(read.status == 0, "stderr: \(read.stderr)")
        #expect(read.stdout.contains("\"Bluejay secret\""))
        let codes = try smpCodes(capture)
        #expect(codes["0x01 Pairing_Request"] == 1 && codes["0x0d Pairing_DHKey_Check"] == 2, "\(codes)")
        #expect(BondStore(store: StoreDirectory(path: store)).all().count == 1)
    }

    /// A peer whose public key is off the curve (CVE-2018-5383) is refused by name, with
    /// Pairing Failed (Invalid Parameters) on the air and no bond.
    @Test func invalidPublicKeyIsRefused() async throws {
        let peer = try await TestPeer(arguments: ["--invalid-public-key"])
        defer { peer.stop() }
        let store = store()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let capture = capturePath()
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let paired = try await bluejay(["pair", peer.address + "/random", "--capture", capture], peer, store: store)
        #expect(paired.status == 1)
        #expect(
            paired.stderr.contains(
                "the peer's public key is invalid (the point is not on the P-256 curve, or a coordinate is not below p)"
            ), "stderr: \(paired.stderr)")
        let failed = try BTSnoopFile(path: capture).records.contains { record in
            guard case let .packet(_, packet) = record.content, record.direction == .sent else { return false }
            return packet.suffix(2).elementsEqual([0x05, 0x0A])  // SMP Pairing Failed, Invalid Parameters
        }
        #expect(failed)
        #expect(BondStore(store: StoreDirectory(path: store)).all().isEmpty)
    }
}

extension PairingTests {
    /// Numeric Comparison: both show the same six digits; "y" pairs (authenticated), "n"
    /// fails by name.
    @Test func secureConnectionsNumericComparison() async throws {
        let peer = try await TestPeer(arguments: ["--io-capability", "display-yes-no"])
        defer { peer.stop() }
        let store = store()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let address = peer.address + "/random"
        let declined = try await bluejay(["pair", address, "--io", "display-yesno"], peer, store: store, input: "n\n")
        #expect(declined.status == 1)
        #expect(declined.stderr.contains("0x0C numericComparisonFailed"), "stderr: \(declined.stderr)")
        let paired = try await bluejay(["pair", address, "--io", "display-yesno"], peer, store: store, input: "y\n")
        #expect(paired.status == 0, "stderr: \(paired.stderr)")
        #expect(
            paired.stdout.contains("Numeric Comparison, LE Secure Connections")
                && paired.stdout.contains("authenticated"))
        #expect(paired.stderr.contains("Does the peripheral show "))
    }

    /// A peer that lost our bond (restarted) answers the stored key with PIN or Key
    /// Missing; we pair again (the policy allows it) and the read succeeds.
    @Test func pairsAgainWhenThePeerLostTheBond() async throws {
        let store = store()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let first = try await TestPeer()
        let address = first.address + "/random"
        let paired = try await bluejay(["pair", address], first, store: store)
        #expect(paired.status == 0, "stderr: \(paired.stderr)")
        first.stop()

        let second = try await TestPeer()
        defer { second.stop() }
        let capture = capturePath()
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let read = try await bluejay(
            ["read", address, "--handle", Self.secret, "--capture", capture], second, store: store)
        #expect(read.status == 0, "stderr: \(read.stderr)")
        #expect(read.stdout.contains("\"Bluejay secret\""))
        #expect(
            read.stderr.contains("PIN or Key Missing") && read.stderr.contains("pairing again"),
            "stderr: \(read.stderr)")
        #expect(try smpCodes(capture)["0x01 Pairing_Request"] == 1)
    }
}

extension PairingTests {
    /// A bonded peer that comes back behind a resolvable private address (made from the IRK
    /// it distributed) is recognised in a scan by that IRK.
    @Test func bondedPeerIsRecognisedBehindItsPrivateAddress() async throws {
        let store = store()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let first = try await TestPeer()
        let paired = try await bluejay(["pair", first.address + "/random"], first, store: store)
        first.stop()
        #expect(paired.status == 0, "stderr: \(paired.stderr)")
        let bond = try #require(BondStore(store: StoreDirectory(path: store)).all().first)
        let irk = try #require(bond.identityResolvingKeyBytes)

        let privateAddress = ResolvablePrivateAddress.make(with: irk)
        let rotated = try await TestPeer(arguments: ["--address", privateAddress.description])
        defer { rotated.stop() }
        let scan = try await bluejay(["scan", "--json", "--duration", "1.5"], rotated, store: store)
        #expect(scan.status == 0, "stderr: \(scan.stderr)")
        let line = try #require(
            scan.stdout.split(separator: "\n").first { $0.contains(privateAddress.description) },
            "stdout: \(scan.stdout)")
        #expect(line.contains("\"bonded\": \"\(bond.address)/random\""), "\(line)")
    }
}
