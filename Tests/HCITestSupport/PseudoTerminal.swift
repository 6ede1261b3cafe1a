import Foundation

/// A new pseudo-terminal: its master end (open) and the path of its device end.
/// posix_openpt/unlockpt/ptsname are not exported to Swift; their kernel interface is: open
/// /dev/ptmx, clear the lock (TIOCSPTLCK), ask the number (TIOCGPTN).
package func openPseudoTerminal() throws -> (master: Int32, devicePath: String) {
    let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
    var unlock: Int32 = 0
    var number: UInt32 = 0
    guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
        let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        if master >= 0 { close(master) }
        throw error
    }
    return (master, "/dev/pts/\(number)")
}
