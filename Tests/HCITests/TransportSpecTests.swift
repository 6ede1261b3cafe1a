import Foundation
import Synchronization
import BluetoothCore
import HCI
import TestTraits
import Testing

// Transport strings: the same grammar on the command line, in BLUEJAY_TRANSPORT and in
// the API. Each form parses to its value and prints back to a string that parses to the
// same value; malformed strings give an error that says what was expected.

@Suite("Transport specs")
struct TransportSpecTests {
    static let valid: [(String, TransportSpec, String)] = [
        ("hci0", .userChannel(index: 0), "hci0"),
        ("hci:1", .userChannel(index: 1), "hci1"),
        ("hci:hci2", .userChannel(index: 2), "hci2"),
        ("hci65535", .userChannel(index: 65535), "hci65535"),
        (
            "serial:/dev/ttyACM0", .serial(path: "/dev/ttyACM0", baudRate: 115_200, flowControl: false),
            "serial:/dev/ttyACM0,baud=115200,flow=none"
        ),
        (
            "serial:/dev/ttyACM0,baud=1000000,flow=rtscts",
            .serial(path: "/dev/ttyACM0", baudRate: 1_000_000, flowControl: true),
            "serial:/dev/ttyACM0,baud=1000000,flow=rtscts"
        ),
        (
            "serial:/dev/ttyS1,flow=none,baud=3000000",
            .serial(path: "/dev/ttyS1", baudRate: 3_000_000, flowControl: false),
            "serial:/dev/ttyS1,baud=3000000,flow=none"
        ),
        ("tcp:127.0.0.1:9000", .tcp(host: "127.0.0.1", port: 9000), "tcp:127.0.0.1:9000"),
        ("tcp:localhost:1", .tcp(host: "localhost", port: 1), "tcp:localhost:1"),
        ("tcp:[::1]:9000", .tcp(host: "::1", port: 9000), "tcp:[::1]:9000"),
        ("unix:/tmp/x.sock", .unix(path: "/tmp/x.sock"), "unix:/tmp/x.sock"),
        ("replay:/tmp/f.btsnoop", .replay(path: "/tmp/f.btsnoop"), "replay:/tmp/f.btsnoop"),
        ("replay:relative/f.btsnoop", .replay(path: "relative/f.btsnoop"), "replay:relative/f.btsnoop"),
    ]

    @Test("Valid specs parse, print canonically and round-trip", arguments: valid)
    func parse(text: String, expected: TransportSpec, canonical: String) throws {
        let spec = try TransportSpec(parsing: text)
        #expect(spec == expected)
        #expect(spec.description == canonical)
        #expect(try TransportSpec(parsing: spec.description) == spec)
    }

    static let invalid: [(String, String)] = [
        ("bogus", "unknown transport 'bogus'"),
        ("", "unknown transport ''"),
        ("usb:1", "unknown transport 'usb:1'"),
        ("tcp:host", "tcp transport needs HOST:PORT"),
        ("tcp:host:0", "tcp transport needs HOST:PORT"),
        ("tcp:host:65536", "tcp transport needs HOST:PORT"),
        ("tcp:host:port", "tcp transport needs HOST:PORT"),
        ("tcp::9000", "tcp transport needs HOST:PORT"),
        ("tcp:host:+80", "tcp transport needs HOST:PORT"),
        ("serial:", "serial transport needs a device path"),
        ("serial:,baud=9600", "serial transport needs a device path"),
        ("serial:/dev/x,baud=123", "unsupported baud rate '123'"),
        ("serial:/dev/x,baud=fast", "unsupported baud rate 'fast'"),
        ("serial:/dev/x,baud=+9600", "unsupported baud rate '+9600'"),
        ("serial:/dev/x,parity=odd", "unknown serial option 'parity=odd'"),
        ("serial:/dev/x,flow=xonxoff", "unknown serial option 'flow=xonxoff'"),
        ("serial:/dev/x,", "unknown serial option ''"),
        ("unix:", "unix transport needs a socket path"),
        ("replay:", "replay transport needs a btsnoop file"),
        ("hciX", "bad adapter in 'hciX'"),
        ("hci", "bad adapter in 'hci'"),
        ("hci:", "bad adapter in 'hci:'"),
        ("hci-1", "bad adapter in 'hci-1'"),
        ("hci+1", "bad adapter in 'hci+1'"),
        ("hci65536", "bad adapter in 'hci65536'"),
    ]

    @Test("Malformed specs are errors that say what is wrong", arguments: invalid)
    func reject(text: String, message: String) {
        do {
            let spec = try TransportSpec(parsing: text)
            Issue.record("'\(text)' parsed as \(spec)")
        } catch {
            guard case .invalidSpec(let why) = error else {
                Issue.record("'\(text)' gave \(error), not invalidSpec")
                return
            }
            #expect(why.contains(message), "'\(text)': \(why)")
        }
    }

    @Test("The usage text lists every form")
    func usage() throws {
        let error = expectError(TransportError.self) { _ = try TransportSpec(parsing: "bogus") }
        guard case .invalidSpec(let why)? = error else { return }
        for form in ["hci0", "hci:N", "serial:/dev/ttyX", "tcp:HOST:PORT", "unix:PATH", "replay:FILE"] {
            #expect(why.contains(form))
        }
    }

    @Test("An unsupported baud rate lists the supported ones")
    func baudRates() throws {
        let error = expectError(TransportError.self) { _ = try TransportSpec(parsing: "serial:/dev/x,baud=123") }
        guard case .invalidSpec(let why)? = error else { return }
        #expect(why.contains("115200"))
        #expect(why.contains("1000000"))
    }
}

extension TransportSpecTests {
    /// Every `serial:` transport the README, the pages in docs/ and the DocC articles show
    /// parses to the device it names and to the speed and flow control it writes (an
    /// `@115200` once slipped into the device's path).
    @Test func serialTransportsInTheDocumentationParseAsWritten() throws {
        let root = DocumentationTests.packageRoot
        func markdown(in folder: String) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: root.path + "/" + folder)
                .filter { $0.hasSuffix(".md") }.sorted().map { folder + "/" + $0 }
        }
        var checked = 0
        for file in try ["README.md"] + markdown(in: "docs") + markdown(in: "Sources/Bluejay/Bluejay.docc") {
            let text = try String(contentsOfFile: root.path + "/" + file, encoding: .utf8)
            let pattern = /serial:[^\s`"'\]\[|)]+/
            for match in text.matches(of: pattern) {
                let written = String(match.output)
                let spec = try TransportSpec(parsing: written)
                guard case let .serial(path, baud, flow) = spec else {
                    Issue.record("\(file): \(written) is not a serial transport"); continue
                }
                let device = String(written.dropFirst("serial:".count).prefix { $0 != "," })
                #expect(path == device && path.allSatisfy { $0 != "@" }, "\(file): \(written) names the device \(path)")
                let baudWritten = written.firstMatch(of: /baud=(\d+)/).flatMap { Int($0.output.1) } ?? 115_200
                #expect(baud == baudWritten, "\(file): \(written)")
                #expect(flow == written.contains("flow=rtscts"), "\(file): \(written)")
                checked += 1
            }
        }
        #expect(checked >= 3, "the documentation shows serial transports: found \(checked)")
    }

    /// `mock:` is opened by whichever opener the program installed (VirtualController's, in
    /// the tools); with none, the error names the call that installs it.
    @Test("A mock transport goes to the installed opener, and without one names it")
    func mockTransportsGoToTheirOpener() throws {
        let spec = try TransportSpec(parsing: "mock:/tmp/phone.btsnoop,peer=C0:11:22:33:44:55")
        #expect {
            try spec.open(capture: nil, mock: nil)
        } throws: { error in
            "\(error)".contains("VirtualController.enableMockTransport()")
        }
        let asked = OpenedWith()
        let opener = MockTransportOpener { path, peer, _ throws(TransportError) in
            asked.record("\(path) \(peer.map(\.description) ?? "any")")
            throw .openFailed(what: "stand-in", errno: 0)
        }
        #expect(throws: TransportError.self) { try spec.open(capture: nil, mock: opener) }
        #expect(asked.calls == ["/tmp/phone.btsnoop C0:11:22:33:44:55"])
    }
}

/// What a stand-in opener was asked for.
private final class OpenedWith: Sendable {
    private let state = Mutex<[String]>([])
    func record(_ call: String) { state.withLock { $0.append(call) } }
    var calls: [String] { state.withLock { $0 } }
}
