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
    func allowed(_ code: Int32, adapterUp: Bool?) -> (retries: Int, asked: Int) {
        var retries = UserChannel.Retries()
        var count = 0, asked = 0
        while retries.allow(code, adapterUp: { asked += 1; return adapterUp }), count < 10_000 { count += 1 }
        return (count, asked)
    }

    @Test("EBUSY while the kernel sets the adapter up is retried for the setup window")
    func busyWhileSettingUp() {
        let window = UserChannel.setupWindowMilliseconds / UserChannel.retryIntervalMilliseconds
        #expect(allowed(EBUSY, adapterUp: false).retries == window)
    }

    @Test("EBUSY on an adapter someone holds (up), or one the kernel cannot report, gives up after the short window")
    func busyWhileHeld() {
        let window = UserChannel.retryWindowMilliseconds / UserChannel.retryIntervalMilliseconds
        #expect(allowed(EBUSY, adapterUp: true).retries == window)
        #expect(allowed(EBUSY, adapterUp: nil).retries == window)
        // The kernel is asked only once the short window is spent.
        #expect(allowed(EBUSY, adapterUp: true).asked == 1)
    }

    @Test("ENODEV is retried for the short window only; other errors not at all")
    func otherErrors() {
        let window = UserChannel.retryWindowMilliseconds / UserChannel.retryIntervalMilliseconds
        #expect(allowed(ENODEV, adapterUp: false).retries == window)
        #expect(allowed(EPERM, adapterUp: false).retries == 0)
        #expect(allowed(ERFKILL, adapterUp: false).retries == 0)
    }
}
