import BluetoothCore
import HCITestSupport
import Synchronization
import Testing
@testable import Bluejay

// Bluejay's FIFO takes operations from either actor and runs them on the stack's actor:
// each body runs once, in the order added, whenever the add comes (here, from a thread of
// its own, the instant the queue has emptied, when its runner is at its last step).

/// The bodies that ran, in order (they run on the stack's actor; the test reads from another).
private final class RunLog: Sendable {
    private let ran = Mutex<[Int]>([])
    func append(_ index: Int) { ran.withLock { $0.append(index) } }
    var all: [Int] { ran.withLock { $0 } }
}

@Suite("OperationQueue")
struct OperationQueueTests {
    @Test("An operation added as the runner finds the queue empty runs once, and the order holds")
    func addedAtTheRunnersLastStepRunsOnce() async {
        let queue = OperationQueue()
        let log = RunLog()
        let count = 20_000
        // On a thread of its own: the spin below must not hold one of the cooperative pool's.
        await blocking {
            for index in 0..<count {
                let operation = QueuedOperation(.read, body: { operation in
                    log.append(index)
                    // A body suspends (a real one awaits the controller): another runner
                    // that thought this operation its own would start it again meanwhile.
                    await Task.yield()
                    _ = operation.claim()
                }, onFailure: { _ in })
                // Added the moment the last one is done, made beforehand: the add then meets
                // the runner at its last step (a spin, not a sleep: that window is a few
                // instructions wide).
                while queue.count > 0 {}
                queue.add(operation)
            }
        }
        let ran = log.all
        #expect(ran.count == count, "bodies ran \(ran.count) times for \(count) operations (\(ran.count - Set(ran).count) ran again)")
        let outOfOrder = zip(ran, 0..<count).first { $0 != $1 }
        #expect(outOfOrder == nil, "the run order leaves the order added at operation \(outOfOrder.map { "\($0.1)" } ?? "")")
    }
}
