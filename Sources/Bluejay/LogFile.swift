#if canImport(Glibc)
    import Glibc
#endif

/// Bluejay's log file: appended a line at a time (O_APPEND, mode 0600), read whole.
struct LogFile: Sendable {
    let path: String

    /// Appends `text`, creating the file and its directory when missing.
    func append(_ text: String) throws(LogFileError) {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty { makeDirectories(directory) }
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LogFileError(operation: "opening \(path)", code: errno) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw LogFileError(operation: "writing \(path)", code: errno) }
    }

    /// The file's text ("" when there is no file).
    func contents() throws(LogFileError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return "" }
            throw LogFileError(operation: "opening \(path)", code: errno)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Empties the file.
    func truncate() throws(LogFileError) {
        guard Glibc.truncate(path, 0) == 0 || errno == ENOENT else {
            throw LogFileError(operation: "truncating \(path)", code: errno)
        }
    }

    private func makeDirectories(_ directory: String) {
        var built = directory.hasPrefix("/") ? "" : "."
        for part in directory.split(separator: "/") {
            built += "/" + part
            _ = mkdir(built, 0o700)
        }
    }
}

/// A log file operation that failed, with errno.
struct LogFileError: Error, CustomStringConvertible {
    let operation: String
    let code: Int32
    var description: String { "\(operation): \(String(cString: strerror(code))) (errno \(code))" }
}
