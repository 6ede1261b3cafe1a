import Logging
import Synchronization

/// Where the stack's diagnostics go: swift-log, one `Logger` per layer, each labelled
/// `bluejay.LAYER` (`hci`, `l2cap`, `att`, `smp`, `cache`, `bluejay`), each at its own level
/// (``LogLevels``). Every layer and the facade log through it: there is one route.
///
/// The handler is the app's choice: ``system(levels:showsSecrets:)`` hands each layer's
/// logger to the app's `LoggingSystem`; ``standardError`` writes warnings and errors to
/// standard error; ``init(levels:showsSecrets:sink:)`` takes each line as a closure (tests,
/// the command line). Quiet by default; the CLI's `--verbose` and `BLUEJAY_LOG` set levels.
///
/// Secrets (keys, nonces, passkeys: `HCISecretFields` (HCI) and the SMP module's table) are
/// printed as `<redacted 16 octets>` at every level unless ``showsSecrets`` is set
/// (`--log-secrets`); then the first line that shows one is preceded by a warning.
public struct HCILogger: Sendable {
    /// How much to say.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        /// Least to most detailed: failures, anomalies, notable events, packet tracing.
        case error, warning, info, debug
        /// Orders levels from least detailed (`error`) to most (`debug`).
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The level by its name (`error`, `warning`, `info`, `debug`; `trace` is `debug`).
        public init?(name: String) {
            switch name.lowercased() {
            case "error", "critical": self = .error
            case "warning", "notice": self = .warning
            case "info": self = .info
            case "debug", "trace": self = .debug
            default: return nil
            }
        }

        /// swift-log's level for this one.
        var swiftLog: Logger.Level {
            switch self {
            case .error: .error
            case .warning: .warning
            case .info: .info
            case .debug: .debug
            }
        }

        /// This package's level for swift-log's (`trace` is `debug`, `notice` `warning`,
        /// `critical` `error`).
        init(_ level: Logger.Level) {
            switch level {
            case .trace, .debug: self = .debug
            case .info: self = .info
            case .notice, .warning: self = .warning
            case .error, .critical: self = .error
            }
        }
    }

    /// This layer's swift-log logger: every line goes through it.
    public private(set) var logger: Logger
    /// The layer this logger is for (`""` before ``layer(_:)``).
    public private(set) var layerName: String
    /// The most detailed level written for this layer (kept apart from the handler's for
    /// the packet path, which asks it for every packet).
    public private(set) var level: Level
    /// Whether secret fields are printed in clear (for debugging a pairing; never share
    /// such output). Off by default.
    public var showsSecrets: Bool
    /// The level of each layer.
    public let levels: LogLevels
    /// Makes the handler of a layer's logger from its label.
    private let makeHandler: @Sendable (String) -> any LogHandler
    /// Shared by copies of this logger, so the warning comes once per logger however the
    /// layers passed it around.
    private let secretsWarning = SecretsWarning()

    /// What is printed once, at `.warning`, before the first secret a logger shows in clear.
    public static let secretsWarningText = "--log-secrets: keys are printed in clear; do not share this output"

    /// Loggers whose handlers `makeHandler` makes from each layer's label, at `levels`.
    public init(
        levels: LogLevels, showsSecrets: Bool = false,
        handler makeHandler: @escaping @Sendable (String) -> any LogHandler
    ) {
        self.levels = levels
        self.showsSecrets = showsSecrets
        self.makeHandler = makeHandler
        layerName = ""
        level = levels.default
        logger = Logger(label: "bluejay", factory: makeHandler)
        logger.logLevel = level.swiftLog
    }

    /// Loggers writing each line at or above its layer's level to `sink`.
    public init(levels: LogLevels, showsSecrets: Bool = false, sink: @escaping @Sendable (Level, String) -> Void) {
        self.init(levels: levels, showsSecrets: showsSecrets) { _ in SinkLogHandler(sink: sink) }
    }

    /// Loggers writing lines at or above `level`, in every layer, to `sink`.
    public init(level: Level, showsSecrets: Bool = false, sink: @escaping @Sendable (Level, String) -> Void) {
        self.init(levels: LogLevels(default: level), showsSecrets: showsSecrets, sink: sink)
    }

    /// Each layer's logger from the app's `LoggingSystem` (`Logger(label: "bluejay.att")`
    /// and so on), at `levels`.
    public static func system(levels: LogLevels = LogLevels(default: .warning), showsSecrets: Bool = false) -> HCILogger
    {
        HCILogger(levels: levels, showsSecrets: showsSecrets) { label in Logger(label: label).handler }
    }

    /// Writes nothing below warnings, and those to standard error.
    public static let standardError = HCILogger(level: .warning, sink: standardErrorLine)

    /// Writes nothing.
    public static let silent = HCILogger(level: .error) { _, _ in }

    /// `bluejay: LEVEL: LINE` on standard error: the command line's lines.
    public static let standardErrorLine: @Sendable (Level, String) -> Void = { level, line in
        printToStandardError("bluejay: \(level): \(line)")
    }

    /// This logger for layer `name`: labelled `bluejay.NAME`, at that layer's level. Each
    /// layer takes the logger it is given through here.
    public func layer(_ name: String) -> HCILogger {
        var copy = self
        copy.layerName = name
        copy.level = levels.level(of: name)
        copy.logger = Logger(label: "bluejay.\(name)", factory: makeHandler)
        copy.logger.logLevel = copy.level.swiftLog
        return copy
    }

    /// Logs `message` at `level`; the message is built only if it will be written.
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        if level <= self.level { logger.log(level: level.swiftLog, "\(message())") }
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
        if secretsWarning.first() { logger.log(level: .warning, "\(Self.secretsWarningText)") }
    }
}

/// The level of each layer: one for all, and some layers set apart, as
/// `BLUEJAY_LOG=hci=debug,att=info` says (``init(parsing:default:)``).
public struct LogLevels: Sendable, Equatable {
    /// The level of a layer not named in ``layers``.
    public var `default`: HCILogger.Level
    /// Levels set apart, by layer name (`hci`, `l2cap`, `att`, `smp`, `cache`, `bluejay`).
    public var layers: [String: HCILogger.Level]

    /// `default` for every layer but those in `layers`.
    public init(default: HCILogger.Level, layers: [String: HCILogger.Level] = [:]) {
        self.default = `default`
        self.layers = layers
    }

    /// The level of layer `name`.
    public func level(of name: String) -> HCILogger.Level { layers[name] ?? self.default }

    /// Levels from a comma-separated list of `LAYER=LEVEL` items (a lone `LEVEL` sets every
    /// layer), over `default`: `hci=debug,att=info`, `debug`, `smp=debug`.
    public init(parsing text: String, default: HCILogger.Level = .warning) throws(LogLevelsError) {
        self.init(default: `default`)
        for item in text.split(separator: ",").map({ $0.filter { $0 != " " } }) where !item.isEmpty {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard let name = parts.last, let level = HCILogger.Level(name: name) else {
                throw LogLevelsError(item: item)
            }
            if parts.count == 2 { layers[parts[0].lowercased()] = level } else { self.default = level }
        }
    }
}

/// A `BLUEJAY_LOG` item that is not `LAYER=LEVEL` or `LEVEL`.
public struct LogLevelsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The item as written.
    public let item: String
    /// The error for `item`.
    public init(item: String) { self.item = item }
    /// What was wrong and what is expected.
    public var description: String {
        "'\(item)' is not LAYER=LEVEL or LEVEL (levels: error, warning, info, debug; layers: hci, l2cap, att, smp, cache, bluejay)"
    }
}

/// A swift-log handler that gives each line, with its level, to a closure.
struct SinkLogHandler: LogHandler {
    let sink: @Sendable (HCILogger.Level, String) -> Void
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        sink(HCILogger.Level(event.level), event.message.description)
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
