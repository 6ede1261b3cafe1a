import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif
import CBluetooth

/// The kernel's HCI user channel: exclusive raw access to one adapter, no bluetoothd.
enum UserChannel {
    /// How long to keep retrying EBUSY/ENODEV: right after an adapter appears the kernel
    /// runs its own init for about half a second, during which the bind fails; and a
    /// program that held the adapter may be handing it back.
    static let retryWindowMilliseconds = 3000
    /// How long to keep retrying EBUSY while the kernel says it is initializing the adapter
    /// (and it is not up): its own setup (a firmware download on a USB or UART controller,
    /// a loaded machine) ends by itself. An adapter that is up is held (bluetoothd powered
    /// it, or another user-channel program has it), and one neither up nor initializing
    /// after the short window is one whose setup failed: those wait only
    /// ``retryWindowMilliseconds``, so the error naming the fixes comes soon.
    static let setupWindowMilliseconds = 30_000
    /// The wait between two binds while retrying.
    static let retryIntervalMilliseconds = 100

    /// Binds a user-channel socket to `hci<index>`, waiting on `clock` between attempts: the
    /// caller's actor is free while the kernel finishes with the adapter. `retrying` is told
    /// the errno of each bind that failed and is about to be retried (the tests watch the
    /// kernel's init window). Cancelled while it waits, it gives up with the last bind's error.
    static func open(index: UInt16, clock: any Clock<Duration>, retrying: (Int32) -> Void = { _ in })
        async throws(TransportError) -> Int32
    {
        let fd = try unboundSocket(index)
        var retries = Retries()
        while let code = try bindOnce(fd, index, &retries, retrying) {
            // Cancelled while waiting: give up with what the last bind said.
            if (try? await clock.sleep(for: .milliseconds(retryIntervalMilliseconds))) == nil {
                throw giveUp(fd, index, code)
            }
        }
        return fd
    }

    /// As ``open(index:clock:retrying:)``, for a caller that can only block: the calling
    /// thread sleeps between attempts.
    static func open(index: UInt16, retrying: (Int32) -> Void = { _ in }) throws(TransportError) -> Int32 {
        let fd = try unboundSocket(index)
        var retries = Retries()
        while try bindOnce(fd, index, &retries, retrying) != nil {
            usleep(useconds_t(retryIntervalMilliseconds * 1000))
        }
        return fd
    }

    /// Binds `fd` once: nil when it is bound; the failed bind's errno when `retries` allows
    /// another try after a wait (`retrying` is told); an error, with `fd` closed, otherwise.
    private static func bindOnce(
        _ fd: Int32, _ index: UInt16, _ retries: inout Retries, _ retrying: (Int32) -> Void
    ) throws(TransportError) -> Int32? {
        let code = bindUserChannel(fd, index)
        if code == 0 { return nil }
        guard retries.allow(code, adapter: { kernelState(fd, index) }) else { throw giveUp(fd, index, code) }
        retrying(code)
        return code
    }

    /// Closes `fd` after a bind that failed with `code`: the error that says why, with what
    /// the kernel says of a busy adapter.
    private static func giveUp(_ fd: Int32, _ index: UInt16, _ code: Int32) -> TransportError {
        let state = code == EBUSY ? kernelState(fd, index) : nil
        close(fd)
        return failure(code, index, state)
    }

    /// What the kernel says of an adapter (HCIGETDEVINFO's device flags).
    enum KernelState: Equatable {
        /// `HCI_UP`: powered by bluetoothd, or held by a user-channel program. (An adapter
        /// the kernel keeps powered only until someone asks for it, `HCI_AUTO_OFF`, is
        /// reported down.)
        case up
        /// `HCI_INIT` and not up: the kernel is running its init.
        case initializing
        /// Neither.
        case down
    }

    /// Which failed binds are tried again, every ``retryIntervalMilliseconds``: EBUSY and
    /// ENODEV for ``retryWindowMilliseconds``; EBUSY while the kernel is initializing the
    /// adapter for ``setupWindowMilliseconds``.
    struct Retries {
        private var waited = 0

        /// Whether a bind that failed with `code` is to be tried again; counts the wait.
        /// `adapter` asks the kernel (nil: it cannot say), only for EBUSY past the short window.
        mutating func allow(_ code: Int32, adapter: () -> KernelState?) -> Bool {
            guard code == EBUSY || code == ENODEV else { return false }
            guard
                waited < retryWindowMilliseconds
                    || (code == EBUSY && waited < setupWindowMilliseconds && adapter() == .initializing)
            else {
                return false
            }
            waited += retryIntervalMilliseconds
            return true
        }
    }

    /// `HCIGETDEVINFO`, `_IOR('H', 211, int)` in <bluetooth/hci.h> (a macro Swift cannot import).
    private static let getDeviceInfo: UInt = {
        let direction: UInt = 2 << 30  // _IOC_READ
        let size: UInt = UInt(MemoryLayout<Int32>.size) << 16
        let type: UInt = UInt(UInt8(ascii: "H")) << 8
        let number: UInt = 211
        return direction | size | type | number
    }()

    /// What the kernel says of `hci<index>` (asked on the raw socket `fd`); nil when it
    /// cannot say.
    static func kernelState(_ fd: Int32, _ index: UInt16) -> KernelState? {
        var info = hci_dev_info()
        info.dev_id = index
        guard ioctl(fd, getDeviceInfo, &info) == 0 else { return nil }
        if info.flags & (1 << UInt32(HCI_UP)) != 0 { return .up }
        return info.flags & (1 << UInt32(HCI_INIT)) != 0 ? .initializing : .down
    }

    /// A raw HCI socket, not yet bound.
    private static func unboundSocket(_ index: UInt16) throws(TransportError) -> Int32 {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else {
            let code = errno
            if code == EAFNOSUPPORT || code == EPROTONOSUPPORT { throw .bluetoothUnsupportedByKernel }
            if code == EPERM || code == EACCES { throw .permissionDenied(adapter: "hci\(index)", errno: code) }
            throw .openFailed(what: "hci\(index)", errno: code)
        }
        return fd
    }

    /// Binds `fd` to the user channel of `hci<index>`: 0, or the errno of the failure.
    private static func bindUserChannel(_ fd: Int32, _ index: UInt16) -> Int32 {
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = index
        address.hci_channel = UInt16(HCI_CHANNEL_USER)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        return result == 0 ? 0 : errno
    }

    /// What a bind that failed with `code` (for good) tells the user; `state`, what the
    /// kernel said of the adapter then.
    private static func failure(_ code: Int32, _ index: UInt16, _ state: KernelState?) -> TransportError {
        let adapter = "hci\(index)"
        switch code {
        case EBUSY where state == .down:
            // Its setup in the kernel did not finish (HCI_Reset timed out): busy for good.
            return .openFailed(
                what: "\(adapter) (busy but neither up nor initializing: the kernel's setup of it did not finish; "
                    + "see 'dmesg | grep \(adapter)', then reload its driver or replug it)", errno: code)
        case EBUSY: return .adapterBusy(adapter: adapter)
        case EPERM, EACCES: return .permissionDenied(adapter: adapter, errno: code)
        case ENODEV: return .noSuchAdapter(adapter: adapter, present: presentAdapters())
        case ERFKILL:
            return .openFailed(what: "\(adapter) (blocked by rfkill: 'sudo rfkill unblock bluetooth')", errno: code)
        default: return .openFailed(what: adapter, errno: code)
        }
    }

    /// The adapters the kernel knows, from /sys/class/bluetooth.
    static func presentAdapters() -> [String] {
        guard let directory = opendir("/sys/class/bluetooth") else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("hci"), !name.contains(":") { names.append(name) }
        }
        return names.sorted()
    }
}
