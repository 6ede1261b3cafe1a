import Logging
import Testing
@testable import Gateway

/// `log_level:` and `--verbose`: the level names, the default, and a bad one by line and field.
struct LogLevelTests {
    static let base = "gateway: gw1\ntransport: hci0\nbroker: mqtt://h\nperipherals:\n  - address: C0:FF:EE:00:00:11\n"

    @Test func namesAndDefault() throws {
        #expect(try GatewayConfiguration(yaml: Self.base).logLevel == .info)
        let levels: [(String, Logger.Level)] = [
            ("debug", .debug), ("info", .info), ("notice", .notice), ("warning", .warning), ("error", .error),
            ("Warning", .warning),
        ]
        for (name, level) in levels {
            #expect(try GatewayConfiguration(yaml: Self.base + "log_level: \(name)\n").logLevel == level, "\(name)")
        }
    }

    @Test func verboseMeansDebug() throws {
        let quiet = try GatewayConfiguration(yaml: Self.base + "log_level: error\n")
        #expect(quiet.logLevel(verbose: false) == .error)
        #expect(quiet.logLevel(verbose: true) == .debug)
        #expect(try GatewayConfiguration(yaml: Self.base).logLevel(verbose: false) == .info)
    }

    @Test func aBadLevelNamesItsLineAndField() {
        do {
            _ = try GatewayConfiguration(yaml: Self.base + "log_level: loud\n")
            Issue.record("accepted")
        } catch {
            #expect(
                error.description == "line 6: log_level: 'loud' is not debug, info, notice, warning or error",
                "\(error)")
        }
    }
}
