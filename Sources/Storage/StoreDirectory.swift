import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif

/// The store directory (docs/ARCHITECTURE.md, Storage): bonds and the GATT cache, one file per peer
/// identity, each written atomically with mode 0600.
public struct StoreDirectory: Sendable, Hashable {
    /// The directory's path.
    public let path: String

    /// A store at `path`.
    public init(path: String) { self.path = path }

    /// `$BLUEJAY_STORE`, else `$XDG_STATE_HOME/bluejay`, else `~/.local/state/bluejay`.
    public static var standard: StoreDirectory {
        func variable(_ name: String) -> String? {
            guard let value = getenv(name).map({ String(cString: $0) }), !value.isEmpty else { return nil }
            return value
        }
        if let store = variable("BLUEJAY_STORE") { return StoreDirectory(path: store) }
        if let state = variable("XDG_STATE_HOME") { return StoreDirectory(path: state + "/bluejay") }
        return StoreDirectory(path: (variable("HOME") ?? "/tmp") + "/.local/state/bluejay")
    }

    /// A subdirectory of the store.
    public func subdirectory(_ name: String) -> StoreDirectory { StoreDirectory(path: path + "/" + name) }

    /// Creates the directory and its parents (mode 0700) when missing.
    public func create() throws(StoreError) {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o700) != 0, errno != EEXIST { throw .system("creating \(built)", errno) }
        }
    }

    /// Writes `bytes` to `name` so that a crash at any moment leaves either the old file or
    /// the new one: a temporary file (mode 0600) written and fsynced, renamed over the old
    /// one, then the directory fsynced.
    public func writeAtomically(_ bytes: [UInt8], to name: String) throws(StoreError) {
        try create()
        let final = path + "/" + name
        // A fresh name opened exclusively and never through a symlink: nobody else's file
        // can be truncated or written through it.
        var temporary = ""
        var fd: Int32 = -1
        for _ in 0..<16 {
            temporary = path + "/." + name + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw .system("creating \(temporary)", errno) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else {
                let error = errno
                close(fd)
                unlink(temporary)
                throw .system("writing \(temporary)", error)
            }
            written += result
        }
        guard fsync(fd) == 0 else {
            let error = errno
            close(fd)
            unlink(temporary)
            throw .system("syncing \(temporary)", error)
        }
        close(fd)
        guard rename(temporary, final) == 0 else {
            let error = errno
            unlink(temporary)
            throw .system("renaming \(temporary) to \(final)", error)
        }
        // The rename itself must reach the disk too.
        let directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    /// The contents of `name`, or nil when there is no such file.
    public func read(_ name: String) throws(StoreError) -> [UInt8]? {
        let fd = open(path + "/" + name, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .system("opening \(path)/\(name)", errno)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .system("reading \(path)/\(name)", errno) }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
        }
    }

    /// Deletes `name`; true when it existed.
    @discardableResult
    public func remove(_ name: String) throws(StoreError) -> Bool {
        if unlink(path + "/" + name) == 0 { return true }
        if errno == ENOENT { return false }
        throw .system("removing \(path)/\(name)", errno)
    }

    /// The names of the files in the directory (none when it does not exist), sorted,
    /// leaving out temporary files.
    public func fileNames() throws(StoreError) -> [String] {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return [] }
            throw .system("listing \(path)", errno)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }
}

/// A failure of the store directory, with the system's reason.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A system call failed: what was being done, and errno.
    case system(String, Int32)
    /// A file is not in the expected format.
    case malformed(String)

    /// Readable, with the errno text.
    public var description: String {
        switch self {
        case let .system(what, code): "\(what): \(String(cString: strerror(code))) (errno \(code))"
        case let .malformed(what): what
        }
    }
}
