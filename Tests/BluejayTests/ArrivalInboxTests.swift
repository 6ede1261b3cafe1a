import BluetoothCore
import Testing
@testable import Bluejay

// The one route of notified values to the main actor: order kept across threads and
// batches, nothing taken once closed, and the long-lived taker gone after close (it would
// otherwise keep the inbox, and a main-actor task, alive for the life of the process).

/// What the taker was given (on the main actor).
@MainActor
private final class Taken {
    var numbers: [UInt16] = []
    var batches = 0
}

@MainActor
@Suite("ArrivalInbox")
struct ArrivalInboxTests {
    /// A value that needs no listen: the handle numbers it.
    private func arrival(_ number: UInt16) -> ValueArrival {
        .unsolicited(link: ConnectionHandle(rawValue: 0x0040), valueHandle: AttributeHandle(rawValue: number), nil, [])
    }

    /// Lets the main actor's other work run until `done` holds (60 s: a hang guard only).
    private func yield(until done: () -> Bool) async {
        let deadline = ContinuousClock.now + .seconds(60)
        while !done(), ContinuousClock.now < deadline { await Task.yield() }
    }

    @Test("Values posted from another thread, before and after the taker starts, are taken once each, in order")
    func orderAcrossThreadsAndBatches() async {
        let inbox = ArrivalInbox()
        let taken = Taken()
        for number in 1...10 { inbox.post(arrival(UInt16(number))) }
        inbox.deliver { batch in
            taken.batches += 1
            let numbers: [UInt16] = batch.compactMap { (arrival: ValueArrival) -> UInt16? in
                if case let .unsolicited(_, valueHandle, _, _) = arrival { valueHandle.rawValue } else { nil }
            }
            taken.numbers += numbers
        }
        let post = { @Sendable (number: UInt16) in
            inbox.post(
                .unsolicited(
                    link: ConnectionHandle(rawValue: 0x0040), valueHandle: AttributeHandle(rawValue: number), nil, []))
        }
        await Task.detached { for number in 11...5_000 { post(UInt16(number)) } }.value
        await yield { taken.numbers.count >= 5_000 }
        let expected: [UInt16] = (1...5_000).map { (number: Int) -> UInt16 in UInt16(number) }
        #expect(taken.numbers == expected)
        #expect(taken.batches <= taken.numbers.count)
        inbox.close()
    }

    @Test("Once closed, nothing more is taken and the taker lets the inbox go")
    func closeEndsTheTaker() async {
        var inbox: ArrivalInbox? = ArrivalInbox()
        #if compiler(>=6.2)
            weak let watched = inbox
        #else
            weak var watched = inbox  // weak let is Swift 6.2's (SE-0481)
        #endif
        let taken = Taken()
        inbox?.deliver { batch in taken.batches += batch.count }
        inbox?.post(arrival(1))
        await yield { taken.batches == 1 }
        inbox?.close()
        inbox?.post(arrival(2))
        inbox = nil
        // The taker returns at its next turn; until then it holds the inbox (hang guard only).
        await yield { watched == nil }
        #expect(watched == nil, "the taker still holds the inbox after close")
        #expect(taken.batches == 1, "a value posted after close was taken")
    }
}
