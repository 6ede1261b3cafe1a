import Bluejay
import BluetoothCore
import Foundation
import HCITestSupport

/// What every test of our peripheral against the Bumble central sets up: the central
/// (`peer.py --central`, one or `centrals` of them), a store of its own in a fresh temporary
/// folder, and a `PeripheralManager` on the controller the peer serves us. `close()` ends
/// all three.
@BluetoothActor final class PeripheralRig {
    let central: TestCentral
    let store: StoreDirectory
    /// The manager now serving; ``restart()`` replaces it.
    private(set) var manager: PeripheralManager
    private let name: String

    /// Starts the central and a manager named `name` (the GAP Device Name).
    init(name: String, centrals: Int = 1) async throws {
        self.name = name
        central = try await TestCentral(centrals: centrals)
        store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-periph-\(UUID().uuidString)")
        do {
            manager = try await PeripheralManager(
                transport: central.transport, name: name, store: store, logger: .silent)
        } catch {
            central.stop()
            throw error
        }
    }

    /// Closes the manager (again, if the test already has: closing twice is harmless) and
    /// starts a new one on the same controller and store, as a new process of the app would.
    func restart() async throws -> PeripheralManager {
        manager.close()
        manager = try await PeripheralManager(transport: central.transport, name: name, store: store, logger: .silent)
        return manager
    }

    func close() {
        manager.close()
        central.stop()
        try? FileManager.default.removeItem(atPath: store.path)
    }
}

extension TestCentral {
    /// Central `index` scans for the advertisement with local name `name` and connects to the
    /// address it was found at. Returns the scan's answer (address, data, scan response), on
    /// the caller's actor as ``send(_:isolation:)`` does.
    @discardableResult
    func connect(
        toAdvertised name: String, central index: Int = 0,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> [String: Any] {
        let found = try await send(["op": "scan", "name": name, "central": index])
        try await send([
            "op": "connect", "address": found["address"] as Any, "address_type": found["address_type"] as Any,
            "central": index,
        ])
        return found
    }
}
