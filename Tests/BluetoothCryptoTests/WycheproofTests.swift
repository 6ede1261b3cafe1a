import BluetoothCrypto
import Foundation
import Testing

/// BluetoothCrypto held to Project Wycheproof's vectors (Tests/Vectors/Wycheproof, with
/// their licence and source): every vector the API can take is run, and the counts are
/// printed, so a vector that stops being run shows.
struct WycheproofTests {
    struct Counts: CustomStringConvertible {
        var run = 0, passed = 0
        var notApplicable: [String: Int] = [:]
        var description: String {
            "\(run) run, \(passed) passed"
                + notApplicable.sorted { $0.key < $1.key }.map { ", \($0.value) left out: \($0.key)" }.joined()
        }
    }

    /// The test groups of a vector file.
    static func groups(_ file: String) throws -> [[String: Any]] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/Wycheproof").appendingPathComponent(file)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        return try #require(object["testGroups"] as? [[String: Any]])
    }

    /// P-256 ECDH (`ecdh_secp256r1_ecpoint_test.json`): a valid vector's shared secret is
    /// ours; an invalid one's public key is refused (off the curve, or not a point at all).
    /// Compressed points are left out: the Pairing Public Key PDU carries X and Y.
    @Test func p256ECDH() throws {
        var counts = Counts()
        for group in try Self.groups("ecdh_secp256r1_ecpoint_test.json") {
            for test in try #require(group["tests"] as? [[String: Any]]) {
                let id = test["tcId"] as? Int ?? 0
                let result = try #require(test["result"] as? String)
                let encoded = hex(try #require(test["public"] as? String))
                guard encoded.count == 65, encoded.first == 0x04 else {
                    // A compressed point (02/03) or no point: nothing the API takes.
                    #expect(result != "valid", "tcId \(id): a valid vector the API cannot take")
                    counts.notApplicable["a compressed or empty point", default: 0] += 1
                    continue
                }
                // The private key as Wycheproof writes it: big-endian, maybe with a sign octet.
                var scalar = Array(hex(try #require(test["private"] as? String)).drop { $0 == 0 })
                guard scalar.count <= 32 else {
                    counts.notApplicable["a private key past 32 octets", default: 0] += 1
                    continue
                }
                scalar = [UInt8](repeating: 0, count: 32 - scalar.count) + scalar
                counts.run += 1
                let publicKey = P256PublicKey(rawRepresentation: Array(encoded.dropFirst()))
                switch result {
                case "valid":
                    let privateKey = try #require(P256PrivateKey(rawRepresentation: scalar), "tcId \(id)")
                    let key = try #require(publicKey, "tcId \(id): a valid public key was refused")
                    let shared = privateKey.sharedSecret(with: key)
                    // Not inside #expect's ==: Swift 6.0's #expect evaluates its right side in
                    // an autoclosure that cannot throw.
                    let expected = try #require(test["shared"] as? String)
                    #expect(shared == hex(expected), "tcId \(id)")
                    if shared == hex(test["shared"] as? String ?? "") { counts.passed += 1 }
                case "invalid":
                    #expect(publicKey == nil, "tcId \(id): \(test["comment"] ?? "") was accepted")
                    if publicKey == nil { counts.passed += 1 }
                default:
                    // Acceptable: either outcome is right, as long as it does not crash.
                    if let publicKey, let privateKey = P256PrivateKey(rawRepresentation: scalar) {
                        _ = privateKey.sharedSecret(with: publicKey)
                    }
                    counts.passed += 1
                }
            }
        }
        print("Wycheproof P-256 ECDH: \(counts)")
        #expect(counts.run >= 346, "every uncompressed vector runs")
        #expect(counts.passed == counts.run)
    }

    /// AES-CMAC (`aes_cmac_test.json`) with 128-bit keys, the only size Bluetooth uses: a
    /// valid vector's tag is ours (its first tagSize bits); a modified one's is not.
    @Test func aesCMACWith128BitKeys() throws {
        var counts = Counts()
        for group in try Self.groups("aes_cmac_test.json") {
            let keySize = group["keySize"] as? Int ?? 0, tagSize = group["tagSize"] as? Int ?? 0
            let tests = try #require(group["tests"] as? [[String: Any]])
            guard keySize == 128, tagSize % 8 == 0, tagSize <= 128 else {
                counts.notApplicable["\(keySize)-bit keys", default: 0] += tests.count
                continue
            }
            for test in tests {
                let id = test["tcId"] as? Int ?? 0
                counts.run += 1
                let mac = aesCMAC(
                    key: hex(try #require(test["key"] as? String)), message: hex(try #require(test["msg"] as? String)))
                let matches = Array(mac.prefix(tagSize / 8)) == hex(try #require(test["tag"] as? String))
                let valid = test["result"] as? String == "valid"
                #expect(matches == valid, "tcId \(id): \(test["comment"] ?? "")")
                if matches == valid { counts.passed += 1 }
            }
        }
        print("Wycheproof AES-CMAC: \(counts)")
        #expect(counts.run == 102, "every 128-bit-key vector runs")
        #expect(counts.passed == counts.run)
    }
}
