import ATT
import BluetoothCore
import HCI
import HCITestSupport
import Testing

/// A request refused for want of security asks the bearer's owner to secure the link, then is
/// sent once more; how it ends when securing fails.
@Suite("A request refused for want of security")
@BluetoothActor
struct ATTSecurityRetryTests {
    /// A client bearer whose sent PDUs are recorded. Its clock stands still: a loaded machine
    /// (ThreadSanitizer, tests in parallel) must not let the 30 s transaction timeout end a
    /// request before the test answers it.
    @BluetoothActor
    final class Rig {
        var sent: [[UInt8]] = []
        var bearer: ATTBearer!

        init() {
            bearer = ATTBearer(connection: 0x40, clock: ManualClock(), logger: .silent) {
                [unowned self] (frame: [UInt8]) throws(HCIError) in
                sent.append(frame)
            }
        }

        /// Waits until `count` PDUs were sent; false if they were not within the hang guard.
        func sentCount(_ count: Int) async -> Bool { await eventually { self.sent.count >= count } }

        /// A Read Request of attribute 0x0003, sent and refused with Insufficient Encryption;
        /// it goes on as the bearer's owner answers.
        func refusedRead() async -> Task<ReadResponse, any Error> {
            let read = Task { @BluetoothActor in
                try await self.bearer.request(ReadRequest(handle: 3), expecting: ReadResponse.self)
            }
            if await sentCount(1) {
                bearer.receive(hexBytes("01 0a 03 00 0f")[...])
            } else {
                Issue.record("the Read Request was never sent")
                bearer.close(.timeout)  // ends the request, so nothing waits on it for ever
            }
            return read
        }

        /// How a refused read ended when it failed: its error.
        func refusedReadError() async -> ATTError? {
            let outcome = await refusedRead().result
            guard case let .failure(error as ATTError) = outcome else {
                Issue.record("the read did not fail with an ATT error: \(outcome)")
                return nil
            }
            return error
        }
    }

    @Test("Secured: the request is sent again and its answer returned")
    func secured() async throws {
        let rig = Rig()
        var asked: [ATTErrorCode] = []
        rig.bearer.onSecurityRequired = { code in
            asked.append(code)
            return true
        }
        let read = await rig.refusedRead()
        #expect(await rig.sentCount(2), "the request was not sent again")
        #expect(rig.sent == [hexBytes("0a 03 00"), hexBytes("0a 03 00")])
        rig.bearer.receive(hexBytes("0b 2a")[...])
        #expect(try await read.value.value == [0x2A])
        #expect(asked == [.insufficientEncryption])
    }

    @Test("Refused by the policy: the request ends with its own Error Response")
    func notSecured() async {
        let rig = Rig()
        rig.bearer.onSecurityRequired = { _ in false }
        #expect(await rig.refusedReadError()?.code == .insufficientEncryption)
        #expect(rig.sent.count == 1)
    }

    /// The link is lost while it is being secured: the pairing fails (for that reason), and
    /// the request ends as every request under way on a lost link ends — disconnected, with
    /// the reason — whichever of the pairing's failure and the link's end the actor ran first.
    @Test("The link lost while it is secured: the request ends as disconnected")
    func linkLostWhileSecuring() async {
        let rig = Rig()
        rig.bearer.onSecurityRequired = { [unowned rig] _ in
            rig.bearer.close(.disconnected(.connectionTimeout))  // what the link's end does
            return false
        }
        #expect(await rig.refusedReadError() == .disconnected(.connectionTimeout))
        #expect(rig.sent.count == 1, "nothing is sent on a closed bearer")
    }
}
