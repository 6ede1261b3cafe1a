/// The stack's serial context. Every piece of protocol state — controller, connections,
/// L2CAP, ATT, GATT, SMP — is isolated to this one actor, so protocol code runs without
/// locks and calls between layers are plain synchronous calls.
@globalActor
public actor BluetoothActor {
    /// The one instance.
    public static let shared = BluetoothActor()
}

/// Where the stack's diagnostics go. Quiet by default; the CLI's `--verbose` turns on
/// `.debug` to stderr.
public struct HCILogger: Sendable {
    /// How much to say.
    public enum Level: Int, Sendable, Comparable {
        /// Least to most detailed: failures, anomalies, notable events, packet tracing.
        case error, warning, info, debug
        /// Orders levels from least detailed (`error`) to most (`debug`).
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The most detailed level written.
    public var level: Level
    /// Receives each line.
    public var sink: @Sendable (Level, String) -> Void

    /// A logger writing lines at or above `level` to `sink`.
    public init(level: Level, sink: @escaping @Sendable (Level, String) -> Void) {
        self.level = level
        self.sink = sink
    }

    /// Writes nothing below warnings, and those to standard error.
    public static let standardError = HCILogger(level: .warning) { level, line in
        printToStandardError("bluejay: \(level): \(line)")
    }

    /// Writes nothing.
    public static let silent = HCILogger(level: .error) { _, _ in }

    /// Logs `message` at `level`; the message is built only if it will be written.
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        if level <= self.level { sink(level, message()) }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Writes a line to standard error, unbuffered.
public func printToStandardError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = writeAll(2, bytes[...])
}
