import Bluejay
import BluetoothCore
import Foundation
import Synchronization
import Testing

/// Bluejay's FIFO runs on the stack's actor (issue 33): with the main actor blocked, queued
/// operations still go out and come back; only their completions wait for it.
extension IntegrationTests.BluejayAPITests {
    /// A read queued before the main actor blocks goes over the air and is answered while
    /// the main actor stays blocked: a background task queued behind it (which runs only
    /// once the read's body has ended) reads from the peer too and reports to a thread
    /// that is not the main one. Then the completions run on the main actor, in order.
    @Test func bluejayOperationsRunWhileTheMainActorIsBlocked() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = try await connectedBluejay(peer, store: store)

        let order = Mutex<[String]>([])
        let taskRead = DispatchSemaphore(value: 0)
        let completions: [String] = await withCheckedContinuation { done in
            bluejay.read(from: Self.bodySensorLocation) { (result: ReadResult<UInt8>) in
                MainActor.assertIsolated()
                order.withLock { $0.append("read \(result)") }
            }
            bluejay.run(
                backgroundTask: { peripheral -> UInt8 in
                    let value: UInt8 = try peripheral.read(from: Self.bodySensorLocation)
                    order.withLock { $0.append("task read \(value)") }
                    taskRead.signal()
                    return value
                },
                completionOnMainThread: { result in
                    MainActor.assertIsolated()
                    order.withLock { $0.append("task done \(result)") }
                    done.resume(returning: order.withLock { $0 })
                })
            // Block the main actor (this is its thread) until the task has read; the time
            // limit is a hang guard only: with the FIFO on the main actor nothing above
            // could run until this returned.
            let ranWhileBlocked = taskRead.wait(timeout: .now() + .seconds(20)) == .success
            #expect(ranWhileBlocked, "the queued read and background task waited for the main actor")
            // Nothing has called back on the main actor yet: it is this thread, still here.
            #expect(order.withLock { $0 } == (ranWhileBlocked ? ["task read 1"] : []))
        }
        #expect(completions == ["task read 1", "read success(1)", "task done success(1)"])
        await shutDown(bluejay)
    }
}
