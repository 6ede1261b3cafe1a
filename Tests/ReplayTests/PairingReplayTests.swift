import ATT
import BluetoothCore
import Foundation
import GAP
import GATT
import HCI
import L2CAP
import SMP
import Storage
import Testing

/// The recorded pairings (`pairing`, `pairing-on-demand`) replayed through the public
/// API: the Security Manager with the seeded entropy the recording was made with (a
/// pairing only replays if our keys and nonces are the recorded ones: the peer's recorded
/// confirm values are checked against them).
extension APIReplayTests {
    /// Connect, exchange MTUs, then `body` with a Security Manager on the link; disconnect.
    func withSecurity<T: Sendable>(
        _ name: String, seed: UInt64,
        _ body: (GATTClient, SecurityManager, LEConnection) async throws -> T
    ) async throws -> T {
        // Exact octets: with the seed, every nonce, key and our IRK is the recorded one.
        try await replaying(name, rules: []) { controller, _ in
            let manager = ConnectionManager(controller: controller, logger: .silent)
            let channels = L2CAPChannels(controller: controller, logger: .silent)
            let bearers = ATTBearers(controller: controller, channels: channels, logger: .silent)
            bearers.server = LocalGATTServer()
            let store = NSTemporaryDirectory() + "bluejay-api-replay-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: store) }
            let security = SecurityManager(
                controller: controller, channels: channels, store: StoreDirectory(path: store),
                logger: .silent)
            security.entropy = .seeded(seed)
            defer {
                security.close()
                bearers.close()
                channels.close()
                manager.close()
            }
            let connection = try await manager.connect(to: Self.peripheral, type: .random)
            let bearer = try bearers.bearer(for: connection.handle)
            bearer.onSecurityRequired = { code in await security.securityRequired(connection.handle, for: code) }
            let client = GATTClient(bearer: bearer)
            try await client.exchangeMTU()
            let result = try await body(client, security, connection)
            _ = try? await manager.disconnect(connection.handle)
            return result
        }
    }

    /// `bluejay pair`: LE Secure Connections Just Works, the link encrypted, the bond kept.
    @Test func pairing() async throws {
        let pairing = try await withSecurity("pairing", seed: 1) { _, security, connection in
            let pairing = try await security.pair(connection.handle)
            #expect(security.isEncrypted(connection.handle))
            #expect(security.bonds.all().map(\.address) == [Self.peripheral.description])
            return pairing
        }
        #expect(pairing.method == .justWorks && pairing.secureConnections)
    }

    /// `bluejay read --handle 0x0024`: Insufficient Encryption, pairing on demand, the read
    /// again, the value.
    @Test func pairingOnDemand() async throws {
        let value = try await withSecurity("pairing-on-demand", seed: 2) { client, _, _ in try await client.read(0x0024)
        }
        #expect(value == Array("Bluejay secret".utf8))
    }
}
