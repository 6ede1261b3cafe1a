import BluetoothCore
import Logging
import Synchronization
import Testing

/// One logging route: every layer's lines go through swift-log, labelled `bluejay.LAYER`,
/// each layer at its own level (`BLUEJAY_LOG=hci=debug,att=info`).
@Suite("Logging")
struct LoggingTests {
    @Test func levelsParseFromTheEnvironmentsSpelling() throws {
        let levels = try LogLevels(parsing: "hci=debug, att=info")
        #expect(levels == LogLevels(default: .warning, layers: ["hci": .debug, "att": .info]))
        #expect(levels.level(of: "hci") == .debug && levels.level(of: "smp") == .warning)
        #expect(try LogLevels(parsing: "debug,smp=error") == LogLevels(default: .debug, layers: ["smp": .error]))
        #expect(try LogLevels(parsing: "", default: .debug) == LogLevels(default: .debug))
        #expect(try LogLevels(parsing: "HCI=Trace") == LogLevels(default: .warning, layers: ["hci": .debug]))
        #expect(throws: LogLevelsError(item: "hci=loud")) { try LogLevels(parsing: "hci=loud") }
        #expect(throws: LogLevelsError(item: "verbose")) { try LogLevels(parsing: "att=info,verbose") }
    }

    /// Each layer's logger is a swift-log `Logger` labelled `bluejay.LAYER`, at its layer's
    /// level: a handler of the app's sees the label, and a quiet layer writes nothing.
    @Test func eachLayerLogsThroughSwiftLogUnderItsOwnLabelAndLevel() {
        let lines = Lines()
        let logger = HCILogger(levels: LogLevels(default: .warning, layers: ["hci": .debug])) { label in
            RecordingHandler(label: label, lines: lines)
        }
        let hci = logger.layer("hci"), att = logger.layer("att")
        #expect(hci.logger.label == "bluejay.hci" && att.logger.label == "bluejay.att")
        #expect(hci.level == .debug && att.level == .warning)
        hci.log(.debug, "< 01 03 0c 00")
        att.log(.debug, "never built")
        att.log(.warning, "a stray PDU")
        #expect(lines.all == ["bluejay.hci debug < 01 03 0c 00", "bluejay.att warning a stray PDU"])
    }

    /// The secrets warning goes the same route, once for a logger and all its layers.
    @Test func theSecretsWarningComesOnceAcrossLayers() {
        let lines = Lines()
        let logger = HCILogger(levels: LogLevels(default: .debug), showsSecrets: true) { label in
            RecordingHandler(label: label, lines: lines)
        }
        logger.layer("hci").noteSecretsShown()
        logger.layer("smp").noteSecretsShown()
        #expect(lines.all == ["bluejay.hci warning " + HCILogger.secretsWarningText])
    }
}

/// A swift-log handler that records `LABEL LEVEL MESSAGE` lines.
struct RecordingHandler: LogHandler {
    let label: String
    let lines: Lines
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append("\(label) \(event.level) \(event.message)")
    }
}

/// Lines recorded from any thread.
final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
