import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif
import HCI
import Testing

/// The real-world traces the repository ships, in `Fixtures/real-traces`. Derived from
/// this file's path, never from the working directory, so `swift test` works from anywhere.
enum Traces {
    /// `<package root>/Fixtures/real-traces`.
    static var directory: String {
        // #filePath is <root>/Tests/HCITests/TestSupport.swift: drop three components to
        // reach the package root.
        var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)
        return components.joined(separator: "/") + "/Fixtures/real-traces"
    }

    static func path(_ name: String) -> String { directory + "/" + name }

    /// Reads a trace; a missing file is a test failure that says where it was looked for.
    static func file(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> BTSnoopFile {
        do {
            return try BTSnoopFile(path: path(name))
        } catch {
            Issue.record(
                "cannot read trace \(name) from \(directory): \(error)",
                sourceLocation: sourceLocation)
            throw error
        }
    }
}

/// A fresh directory under /tmp for the files a test writes.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/bluejay-tests-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        guard let made else { throw TestIOError(errno: errno) }
        path = made
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// Removes the named files and the directory.
    func remove(files: [String]) {
        for name in files { unlink(file(name)) }
        rmdir(path)
    }
}

/// A failed system call in test scaffolding.
struct TestIOError: Error {
    let errno: Int32
}

/// Writes `contents` to `path`, replacing it.
func writeFile(_ path: String, _ contents: [UInt8]) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw TestIOError(errno: errno) }
    defer { close(fd) }
    let written = contents.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == contents.count else { throw TestIOError(errno: errno) }
}

/// Wall-clock now in btsnoop's microseconds since year 0, computed independently of the
/// writer under test (0x00DCDDB30F2F8000 is the year-0-to-1970 offset every btsnoop
/// reader uses).
func btsnoopNow() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000 + 0x00DC_DDB3_0F2F_8000
}

/// Checks that `value` encodes to `expected` (when given), decodes back to itself, that
/// every strict prefix of the encoding is a DecodingError rather than a trap, and that one
/// extra byte is reported as trailing.
func expectFixedSizeRoundTrip<P: HCIParameters>(
    _ value: P, _ expected: [UInt8]? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let encoded = value.encoded()
    if let expected {
        #expect(encoded.hexDump == expected.hexDump, "encoding of \(P.self)", sourceLocation: sourceLocation)
    }
    let decoded = try P(decoding: encoded[...])
    #expect(decoded == value, "round trip of \(P.self)", sourceLocation: sourceLocation)
    for length in 0..<encoded.count {
        #expect(
            throws: DecodingError.self, "\(P.self) truncated to \(length) of \(encoded.count) bytes",
            sourceLocation: sourceLocation
        ) {
            _ = try P(decoding: encoded.prefix(length))
        }
    }
    #expect(throws: DecodingError.trailingBytes(1), "\(P.self) with one extra byte", sourceLocation: sourceLocation) {
        _ = try P(decoding: (encoded + [0xA5])[...])
    }
}

/// Checks that every strict prefix of an H4 packet fails to decode with a DecodingError.
func expectEveryPrefixRejected(h4 encoded: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    for length in 0..<encoded.count {
        #expect(
            throws: DecodingError.self, "H4 packet truncated to \(length) of \(encoded.count) bytes",
            sourceLocation: sourceLocation
        ) {
            _ = try HCIPacket(h4: encoded.prefix(length))
        }
    }
}
