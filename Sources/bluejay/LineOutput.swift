import BluetoothCore
#if canImport(Glibc)
import Glibc
#endif

/// Standard output for a stream of values (`bluejay listen`): each value's line is appended
/// here, and the lines go out in one `write` once the stack has handled what it is handling
/// now — a burst of notifications costs one system call, a lone one still appears at once.
/// A line per `print` and a flush per line cost more than the stack's whole receive path.
@BluetoothActor
final class LineOutput {
    /// Written out as soon as this much is waiting, whatever is still coming.
    static let limit = 1 << 16
    private var buffer: [UInt8] = []
    private var flushScheduled = false

    init() {
        buffer.reserveCapacity(Self.limit + 1024)
    }

    /// Appends `line` and a newline.
    func append(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        written()
    }

    /// Appends `prefix`, then `bytes` as lowercase hex separated by spaces, and a newline.
    func appendHexLine(_ prefix: String, _ bytes: ArraySlice<UInt8>) {
        // Built in a local array: each access to a class's stored property is checked for
        // exclusivity at run time, which cost more than the formatting, byte by byte.
        var line: [UInt8] = []
        swap(&line, &buffer)
        line.append(contentsOf: prefix.utf8)
        var first = true
        for byte in bytes {
            if !first { line.append(0x20) }
            first = false
            line.append(Self.digits[Int(byte >> 4)])
            line.append(Self.digits[Int(byte & 0x0F)])
        }
        line.append(0x0A)
        swap(&line, &buffer)
        written()
    }

    /// Writes what is waiting now (before an indication is confirmed, and at the end).
    func flush() {
        flushScheduled = false
        guard !buffer.isEmpty else { return }
        // Whatever `print` left in stdio's buffer goes first, so lines keep their order.
        fflush(nil)
        buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let count = write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if count > 0 {
                    offset += count
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break  // a closed pipe: nothing more can be shown
                }
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    private func written() {
        if buffer.count >= Self.limit { return flush() }
        guard !flushScheduled else { return }
        flushScheduled = true
        // Runs once the stack's actor is done with the delivery it is handling.
        Task { @BluetoothActor [self] in if flushScheduled { flush() } }
    }
}
