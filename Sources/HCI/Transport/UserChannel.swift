#if canImport(Glibc)
import Glibc
#endif
import CBluetooth

/// The kernel's HCI user channel: exclusive raw access to one adapter, no bluetoothd.
enum UserChannel {
    /// How long to keep retrying EBUSY/ENODEV: right after an adapter appears the kernel
    /// runs its own init for about half a second, during which the bind fails.
    static let retryWindowMilliseconds = 3000

    /// Binds a user-channel socket to `hci<index>`. `retrying` is told the errno of each
    /// bind that failed and is about to be retried (the tests watch the kernel's init window).
    static func open(index: UInt16, retrying: (Int32) -> Void = { _ in }) throws(TransportError) -> Int32 {
        let adapter = "hci\(index)"
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else {
            let code = errno
            if code == EAFNOSUPPORT || code == EPROTONOSUPPORT { throw .bluetoothUnsupportedByKernel }
            if code == EPERM || code == EACCES { throw .permissionDenied(adapter: adapter, errno: code) }
            throw .openFailed(what: adapter, errno: code)
        }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = index
        address.hci_channel = UInt16(HCI_CHANNEL_USER)
        var waited = 0
        while true {
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
                }
            }
            if result == 0 { return fd }
            let code = errno
            if (code == EBUSY || code == ENODEV), waited < retryWindowMilliseconds {
                retrying(code)
                usleep(100_000)
                waited += 100
                continue
            }
            close(fd)
            switch code {
            case EBUSY: throw .adapterBusy(adapter: adapter)
            case EPERM, EACCES: throw .permissionDenied(adapter: adapter, errno: code)
            case ENODEV: throw .noSuchAdapter(adapter: adapter, present: presentAdapters())
            case ERFKILL: throw .openFailed(what: "\(adapter) (blocked by rfkill: 'sudo rfkill unblock bluetooth')", errno: code)
            default: throw .openFailed(what: adapter, errno: code)
            }
        }
    }

    /// The adapters the kernel knows, from /sys/class/bluetooth.
    static func presentAdapters() -> [String] {
        guard let directory = opendir("/sys/class/bluetooth") else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("hci"), !name.contains(":") { names.append(name) }
        }
        return names.sorted()
    }
}
