import Foundation
import Gateway
import HCITestSupport
#if canImport(Glibc)
    import Glibc
#endif

/// Debian's `mosquitto` broker (installed by `make deps`) as a child process on a free
/// loopback port, for the gateway's tests. With `persistent`, it keeps sessions and queued
/// QoS 1 messages on disk across ``restart()`` (a subscriber then misses nothing while it is
/// down); `anonymous: false` refuses every client (CONNACK 5, not authorised).
final class MosquittoBroker: @unchecked Sendable {
    let port: Int
    private let directory: String
    private var pid: pid_t?

    /// The broker's path, or nil when `mosquitto` is not installed.
    static let executable: String? = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    /// The certificate authority of a TLS broker (`tls: true`): a PEM file for `ca_file`.
    var caFile: String { "\(directory)/ca.pem" }

    /// A broker; with `tls`, its one listener speaks TLS only, with a certificate for
    /// 127.0.0.1 and `localhost` signed by an authority made for it (``caFile``).
    init(persistent: Bool = false, anonymous: Bool = true, tls: Bool = false) async throws {
        guard Self.executable != nil else {
            throw TestPeerError(description: "no mosquitto: run 'make deps', which installs it")
        }
        port = try Self.freePort()
        directory = NSTemporaryDirectory() + "bluejay-mosquitto-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var lines = [
            "listener \(port) 127.0.0.1", "allow_anonymous \(anonymous)", "log_dest file \(directory)/mosquitto.log",
            "log_type all", "max_queued_messages 100000",
        ]
        if tls {
            try await Self.makeCertificates(in: directory)
            lines += ["certfile \(directory)/server.pem", "keyfile \(directory)/server.key"]
        }
        // As root, mosquitto would drop to its own user, who cannot write here.
        if getuid() == 0 { lines.append("user root") }
        if persistent { lines += ["persistence true", "persistence_location \(directory)/", "autosave_interval 3600"] }
        try (lines.joined(separator: "\n") + "\n").write(
            toFile: "\(directory)/mosquitto.conf", atomically: true, encoding: .utf8)
        try await start()
    }

    /// An authority and a server certificate signed by it (P-256 keys, two days), made by the
    /// `openssl` tool (`make deps` installs it).
    private static func makeCertificates(in directory: String) async throws {
        let script = """
            set -e
            cd '\(directory)'
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \\
                -subj /CN=bluejay-test-authority -keyout ca.key -out ca.pem
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \\
                -subj /CN=localhost -keyout server.key -out server.csr
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > server.ext
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \\
                -extfile server.ext -out server.pem
            """
        let result = try await run(URL(fileURLWithPath: "/bin/sh"), ["-c", script])
        guard result.status == 0 else {
            throw TestPeerError(description: "cannot make the broker's certificates: \(result.stderr)")
        }
    }

    /// Starts it and waits until it accepts TCP connections. posix_spawn and waitpid, not
    /// Foundation's Process: its waitUntilExit spun forever here on a broker already gone.
    func start() async throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_RDWR, 0)
        }
        let argv = [Self.executable!, "-c", "\(directory)/mosquitto.conf"]
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        // The child would inherit this thread's blocked signals (SIGTERM among them, under
        // the test runner) and never stop: an empty mask and default actions.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), terminating = sigset_t()
        sigemptyset(&none)
        sigemptyset(&terminating)
        for signal in [SIGTERM, SIGINT, SIGPIPE, SIGHUP] { sigaddset(&terminating, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &terminating)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, Self.executable!, &actions, &attributes, &cArguments, environ)
        guard rc == 0 else {
            throw TestPeerError(description: "cannot start mosquitto: \(String(cString: strerror(rc)))")
        }
        self.pid = pid
        let port = port, child = pid
        let up = await eventually { await blocking { Self.accepts(port) || !Self.isRunning(child) } }
        guard up, Self.isRunning(child) else {
            throw TestPeerError(description: "mosquitto did not start on port \(port); its log:\n\(log.suffix(2000))")
        }
    }

    /// SIGTERM (a persistent broker saves its sessions), and waits for the exit.
    func stop() async {
        guard let pid else { return }
        self.pid = nil
        kill(pid, SIGTERM)
        await blocking { Self.reap(pid) }
    }

    /// Stops the broker where it is (SIGSTOP): its connections stay open and nothing answers.
    func pause() { if let pid { kill(pid, SIGSTOP) } }

    /// Lets a paused broker go on (SIGCONT).
    func resume() { if let pid { kill(pid, SIGCONT) } }

    /// Stopped and started again on the same port, with the same state directory.
    func restart() async throws {
        await stop()
        try await start()
    }

    private static func isRunning(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    private static func reap(_ pid: pid_t) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    }

    var log: String { (try? String(contentsOfFile: "\(directory)/mosquitto.log", encoding: .utf8)) ?? "" }

    deinit {
        if let pid {
            kill(pid, SIGTERM)
            Self.reap(pid)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// A port the kernel just gave out and took back.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw TestPeerError(description: "no free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A subscriber on the broker that keeps every message it is sent, for the tests to look at.
actor MQTTRecorder {
    let client: MQTTClient
    private(set) var messages: [MQTTMessage] = []
    /// When each of ``messages`` arrived here.
    private(set) var arrivals: [ContinuousClock.Instant] = []
    /// How many messages each topic was sent, kept as they arrive: cheap to poll.
    private(set) var countByTopic: [String: Int] = [:]
    private var reader: Task<Void, Never>?

    /// Subscribed to `filter`; `persistent` keeps its broker session across reconnections.
    init(
        broker: MosquittoBroker, filter: String, clientID: String = "recorder-\(UUID().uuidString.prefix(8))",
        persistent: Bool = false
    ) async throws {
        var options = MQTTClient.Options(
            broker: try BrokerAddress(broker.url), clientID: clientID, backoff: .milliseconds(50),
            backoffLimit: .milliseconds(200))
        options.cleanSession = !persistent
        client = MQTTClient(options: options, logger: .init(label: "recorder"))
        await start(filter)
    }

    /// Subscribes and starts reading. Its own method: Swift 6.0.3's SILGen fails an
    /// assertion on an actor initializer that awaits another actor.
    private func start(_ filter: String) async {
        await client.subscribe(filter)
        await client.start()
        let messages = client.messages
        reader = Task { for await message in messages { self.record(message) } }
    }

    private func record(_ message: MQTTMessage) {
        messages.append(message)
        arrivals.append(.now)
        countByTopic[message.topic, default: 0] += 1
    }

    /// How many messages arrived.
    var count: Int { messages.count }

    /// The payloads (as text) published to `topic`, in order.
    func payloads(_ topic: String) -> [String] {
        messages.filter { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    func close() async {
        await client.close()
        reader?.cancel()
    }
}
