import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif

/// Standard output for a stream of values (`bluejay listen`): each value's line is appended
/// here, and the lines go out in one `write` once the stack has handled what it is handling
/// now — a burst of notifications costs one system call, a lone one still appears at once.
/// A line per `print` and a flush per line cost more than the stack's whole receive path.
///
/// The lines are formatted straight into a buffer this object owns (not an `Array`): an
/// array appended to byte by byte checks its capacity and uniqueness for every byte, and a
/// hex line of a 244-octet value is 732 of them; that took most of `bluejay listen`'s time.
@BluetoothActor
final class LineOutput {
    /// Written out as soon as this much is waiting, whatever is still coming.
    static let limit = 1 << 16
    #if compiler(>=6.2)
        private var buffer: UnsafeMutablePointer<UInt8>
    #else
        // Read by the nonisolated deinit below (Swift 6.0 and 6.1), which cannot see the actor's
        // properties otherwise; every other use is on the actor.
        nonisolated(unsafe) private var buffer: UnsafeMutablePointer<UInt8>
    #endif
    private var capacity: Int
    private var count = 0
    private var flushScheduled = false

    init() {
        capacity = Self.limit + 1024
        buffer = .allocate(capacity: capacity)
    }

    #if compiler(>=6.2)
        isolated deinit {
            buffer.deallocate()
        }
    #else
        // No isolated deinit before Swift 6.2 (SE-0371): freeing the buffer needs no actor, as
        // nothing else holds the object by then (the buffer is nonisolated(unsafe) above).
        deinit {
            buffer.deallocate()
        }
    #endif

    /// Appends `line` and a newline.
    func append(_ line: String) {
        var line = line
        line.withUTF8 { utf8 in
            let end = reserve(utf8.count + 1)
            if let base = utf8.baseAddress { (buffer + count).update(from: base, count: utf8.count) }
            buffer[end - 1] = 0x0A
            count = end
        }
        written()
    }

    /// Appends `prefix`, then `bytes` as lowercase hex separated by spaces, and a newline.
    func appendHexLine(_ prefix: String, _ bytes: ArraySlice<UInt8>) {
        var prefix = prefix
        prefix.withUTF8 { prefix in
            // The prefix, two digits per octet with a space between, and the newline.
            var end = reserve(prefix.count + max(1, bytes.count * 3))
            if let base = prefix.baseAddress { (buffer + count).update(from: base, count: prefix.count) }
            var at = buffer + count + prefix.count
            bytes.withUnsafeBufferPointer { octets in
                for octet in octets {
                    at[0] = Self.digit(octet >> 4)
                    at[1] = Self.digit(octet & 0x0F)
                    at[2] = 0x20
                    at += 3
                }
            }
            // The last space (or, for no octets, the one place kept) is the newline.
            if bytes.isEmpty { end = count + prefix.count + 1 }
            buffer[end - 1] = 0x0A
            count = end
        }
        written()
    }

    /// Writes what is waiting now (before an indication is confirmed, and at the end).
    func flush() {
        flushScheduled = false
        guard count > 0 else { return }
        // Whatever `print` left in stdio's buffer goes first, so lines keep their order.
        flushStandardOutput()
        var offset = 0
        while offset < count {
            let written = write(STDOUT_FILENO, buffer + offset, count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                break  // a closed pipe: nothing more can be shown
            }
        }
        count = 0
    }

    /// A lowercase hex digit's ASCII code, without a table (a static array is reached
    /// through a lazy initializer's check on every access).
    @inline(__always)
    private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? 0x30 + value : 0x57 + value  // "0"…"9", then "a"…"f"
    }

    /// Makes room for `length` more octets (writing out what waits, or growing for a line
    /// longer than the buffer); returns where the line will end.
    private func reserve(_ length: Int) -> Int {
        if count + length > capacity { flush() }
        if length > capacity {
            buffer.deallocate()
            capacity = length
            buffer = .allocate(capacity: capacity)
        }
        return count + length
    }

    private func written() {
        if count >= Self.limit { return flush() }
        guard !flushScheduled else { return }
        flushScheduled = true
        // Runs once the stack's actor is done with the delivery it is handling.
        Task { @BluetoothActor [self] in if flushScheduled { flush() } }
    }
}
