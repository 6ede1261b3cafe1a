import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif

/// What tells one version of a stored file from another without reading it: its device and
/// inode (an atomic write renames a new file over the old, so the inode changes), its size
/// and its modification time to the nanosecond. A record read once can be kept while its
/// file's stamp is the same.
public struct FileStamp: Sendable, Hashable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let seconds: Int
    let nanoseconds: Int
}

extension StoreDirectory {
    /// The stamp of `name` now, or nil when there is no such file (or it cannot be examined).
    public func stamp(of name: String) -> FileStamp? {
        var status = stat()
        guard stat(path + "/" + name, &status) == 0 else { return nil }
        return FileStamp(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            seconds: status.st_mtim.tv_sec, nanoseconds: status.st_mtim.tv_nsec)
    }
}
