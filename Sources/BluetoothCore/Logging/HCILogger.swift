import Synchronization

/// Where the stack's diagnostics go. Quiet by default; the CLI's `--verbose` turns on
/// `.debug` to stderr.
///
/// Secrets (keys, nonces, passkeys: `HCISecretFields` (HCI) and the SMP module's table) are
/// printed as `<redacted 16 octets>` at every level unless ``showsSecrets`` is set
/// (`--log-secrets`); then the first line that shows one is preceded by a warning.
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

    /// Whether secret fields are printed in clear (for debugging a pairing; never share
    /// such output). Off by default.
    public var showsSecrets: Bool
    /// Shared by copies of this logger, so the warning comes once per logger however the
    /// layers passed it around.
    private let secretsWarning = SecretsWarning()

    /// What is printed once, at `.warning`, before the first secret a logger shows in clear.
    public static let secretsWarningText = "--log-secrets: keys are printed in clear; do not share this output"

    /// A logger writing lines at or above `level` to `sink`; secrets in clear only when
    /// `showsSecrets`.
    public init(level: Level, showsSecrets: Bool = false, sink: @escaping @Sendable (Level, String) -> Void) {
        self.level = level
        self.showsSecrets = showsSecrets
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

    /// `bytes` as a hex dump for a log line: each of `secrets` (offsets from the first
    /// byte) as `<redacted N octets>`, or in clear when ``showsSecrets`` is set, after the
    /// warning (once).
    public func hexDump(_ bytes: some Collection<UInt8>, secrets: [SecretField]) -> String {
        guard !secrets.isEmpty else { return bytes.hexDump }
        guard showsSecrets else { return bytes.hexDump(redacting: secrets) }
        noteSecretsShown()
        return bytes.hexDump
    }

    /// Says once, at `.warning`, that secrets are being printed in clear: for output other
    /// than log lines (the trace printer) that shows one because ``showsSecrets`` is set.
    public func noteSecretsShown() {
        if secretsWarning.first() { sink(.warning, Self.secretsWarningText) }
    }
}

/// Whether a logger has warned that it prints secrets in clear.
private final class SecretsWarning: Sendable {
    private let given = Atomic<Bool>(false)

    /// True the first time only.
    func first() -> Bool { !given.exchange(true, ordering: .relaxed) }
}

#if canImport(Glibc)
import Glibc
#endif

/// Writes a line to standard error, unbuffered.
public func printToStandardError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = writeAll(2, bytes[...])
}
