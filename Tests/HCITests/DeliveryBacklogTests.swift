import BluetoothCore
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import HCI

/// The bound between the transport's thread and the controller: a reader that gets
/// `limit` deliveries ahead waits until the controller takes one, and is let go for good
/// when the controller closes.
@Suite struct DeliveryBacklogTests {
    @Test func readerWaitsAtTheLimitAndResumesWhenOneIsTaken() async throws {
        let backlog = DeliveryBacklog(limit: 3)
        let entered = Atomic<Int>(0)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for _ in 0..<5 {
                backlog.enter()
                entered.add(1, ordering: .sequentiallyConsistent)
            }
            finished.signal()
        }
        // Three get in; the fourth waits for as long as nobody takes one.
        for _ in 0..<1000 where entered.load(ordering: .sequentiallyConsistent) < 3 { await Task.yield() }
        #expect(finished.wait(timeout: .now() + .milliseconds(200)) == .timedOut)
        #expect(entered.load(ordering: .sequentiallyConsistent) == 3)
        backlog.leave()
        for _ in 0..<100_000 where entered.load(ordering: .sequentiallyConsistent) < 4 { await Task.yield() }
        #expect(entered.load(ordering: .sequentiallyConsistent) == 4)
        // Closing opens the gate: the last one goes through without anyone taking.
        backlog.open()
        #expect(finished.wait(timeout: .now() + .seconds(5)) == .success)
        #expect(entered.load(ordering: .sequentiallyConsistent) == 5)
    }
}
