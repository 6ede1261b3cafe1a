#if canImport(Glibc)
    import Glibc
#endif
@testable import HCI
import Testing

/// Which failed binds of the user channel are tried again, and for how long: the rule
/// itself, with the kernel's answer about the adapter given by the test (the VM's
/// scenarios hold it against a real kernel, `make vmtest`).
@Suite struct UserChannelRetryTests {
    /// How many retries `retries` allows for binds failing with `code`, the adapter up or not.
    func allowed(_ code: Int32, _ adapter: UserChannel.KernelState?) -> (retries: Int, asked: Int) {
        var retries = UserChannel.Retries()
        var count = 0, asked = 0
        while retries.allow(
            code,
            adapter: {
                asked += 1; return adapter
            }), count < 10_000
        { count += 1 }
        return (count, asked)
    }

    @Test("EBUSY while the kernel initializes the adapter is retried for the setup window")
    func busyWhileInitializing() {
        let window = UserChannel.setupWindowMilliseconds / UserChannel.retryIntervalMilliseconds
        #expect(allowed(EBUSY, .initializing).retries == window)
    }

    @Test(
        "EBUSY on an adapter someone holds (up), one whose setup failed (down), or one the kernel cannot report, gives up after the short window"
    )
    func busyOtherwise() {
        let window = UserChannel.retryWindowMilliseconds / UserChannel.retryIntervalMilliseconds
        #expect(allowed(EBUSY, .up).retries == window)
        #expect(allowed(EBUSY, .down).retries == window)
        #expect(allowed(EBUSY, nil).retries == window)
        // The kernel is asked only once the short window is spent.
        #expect(allowed(EBUSY, .up).asked == 1)
    }

    @Test("ENODEV is retried for the short window only; other errors not at all")
    func otherErrors() {
        let window = UserChannel.retryWindowMilliseconds / UserChannel.retryIntervalMilliseconds
        #expect(allowed(ENODEV, .initializing).retries == window)
        #expect(allowed(EPERM, .initializing).retries == 0)
        #expect(allowed(ERFKILL, .initializing).retries == 0)
    }
}
