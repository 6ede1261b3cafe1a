import Foundation

/// Runs `body`, which blocks (a child process, a pipe read to its end, a compiler run), on
/// a thread of its own and waits for it without holding a thread of Swift's cooperative
/// pool. That pool has one thread per core: on a 2-core machine two tests blocked in
/// `waitUntilExit()` stalled every other test of the parallel run for as long as their
/// child ran, and a test's wall time came to depend on what ran beside it.
package func blocking<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = "test-blocking"
        thread.start()
    }
}

/// ``blocking(_:)`` for a body that cannot throw.
package func blocking<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = "test-blocking"
        thread.start()
    }
}

/// A value handed to the thread of ``blocking(_:)`` and used there alone while the caller
/// waits: Foundation's `Process` and `FileHandle` are not `Sendable`.
private struct HandedOver<Value>: @unchecked Sendable {
    let value: Value
}

/// Waits, off the cooperative pool, for `process` to end.
package func waitUntilExit(_ process: Process) async {
    let process = HandedOver(value: process)
    await blocking { process.value.waitUntilExit() }
}

/// Returns at once; a thread of its own waits for each of `processes` to end and then runs
/// `cleanUp` (removing their files): how a test's `stop()`, often called from a `defer`,
/// lets processes shut down without holding a thread of the cooperative pool.
package func cleanUpAfterExit(of processes: [Process], _ cleanUp: @escaping @Sendable () -> Void) {
    let processes = HandedOver(value: processes)
    Thread.detachNewThread {
        for process in processes.value { process.waitUntilExit() }
        cleanUp()
    }
}

/// The next octets `handle` has (empty at its end), read off the cooperative pool.
package func availableData(_ handle: FileHandle) async -> Data {
    await blocking { handle.availableData }
}
