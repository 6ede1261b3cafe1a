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
                let operation = QueuedOperation(
                    .read,
                    body: { operation in
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
        #expect(
            ran.count == count,
            "bodies ran \(ran.count) times for \(count) operations (\(ran.count - Set(ran).count) ran again)")
        let outOfOrder = zip(ran, 0..<count).first { $0 != $1 }
        #expect(
            outOfOrder == nil, "the run order leaves the order added at operation \(outOfOrder.map { "\($0.1)" } ?? "")"
        )
    }

    /// What one operation ended with.
    private final class Outcome: Sendable {
        private let ended = Mutex<[String]>([])
        func record(_ what: String) { ended.withLock { $0.append(what) } }
        var all: [String] { ended.withLock { $0 } }
    }

    private struct Loss: Error, CustomStringConvertible { var description: String { "loss" } }
    private struct Refused: Error, CustomStringConvertible { var description: String { "refused" } }

    /// A running operation of `kind` whose body waits for `answer`, then claims success or
    /// fails with what it was answered; a read queued behind it; then the link is lost.
    @BluetoothActor
    private func loseTheLink(running kind: OperationKind, answer: Result<Void, Refused>) async -> (
        running: [String], waiting: [String]
    ) {
        let queue = OperationQueue()
        let answered = OneShot<Result<Void, Refused>>()
        let started = OneShot<Void>()
        let running = Outcome(), waiting = Outcome()
        queue.add(
            QueuedOperation(
                kind,
                body: { operation in
                    started.fulfill(())
                    switch await answered.value() {
                    case .success: if operation.claim() { running.record("success") }
                    case let .failure(error): operation.fail(error)
                    }
                }, onFailure: { running.record("\($0)") }))
        queue.add(QueuedOperation(.read, body: { _ in waiting.record("ran") }, onFailure: { waiting.record("\($0)") }))
        await started.value()
        // The answer arrived (its task not run yet), then the loss is handled.
        answered.fulfill(answer)
        queue.endAll(losing: Loss())
        _ = await eventually { queue.count == 0 }
        return (running.all, waiting.all)
    }

    @Test("A loss leaves an answer that came before it to its operation, and ends the rest")
    func anAnswerBeforeTheLossIsDelivered() async {
        let answered = await loseTheLink(running: .write, answer: .success(()))
        #expect(answered.running == ["success"])
        #expect(answered.waiting == ["loss"])
        // An error answer (a closed bearer, say) is reported as the loss that caused it.
        let refused = await loseTheLink(running: .read, answer: .failure(Refused()))
        #expect(refused.running == ["loss"])
        // An operation that waits on more than its link ends at once with the loss.
        let scan = await loseTheLink(running: .scan, answer: .success(()))
        #expect(scan.running == ["loss"])
        #expect(scan.waiting == ["loss"])
    }
}
