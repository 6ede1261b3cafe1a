import BluetoothCore

/// One operation at a time, in the order they asked: Bluejay's queue rule for one
/// peripheral, as an async lock on the stack's actor. Operations on different gates run
/// concurrently.
@BluetoothActor
final class SerialGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` once every operation that asked before has finished.
    func run<T>(_ body: () async throws -> T) async throws -> T {
        await enter()
        defer { leave() }
        return try await body()
    }

    private func enter() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
