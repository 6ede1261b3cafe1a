import BluetoothCore
import Dispatch
import DiscoveryCache
import FoundationEssentials
import HCI
import SMP

/// How ``Bluejay/start(mode:)`` gets its host.
public enum StartMode {
    /// A new host on a transport.
    case new(StartOptions)
    /// A host other code brought up (e.g. one from ``Bluejay/stopAndExtractBluetoothState()``).
    case use(BluetoothHost)
}

/// How a new host is made (iOS took `CBCentralManager` options here).
public struct StartOptions: Sendable {
    /// The controller: `hci0`, `serial:/dev/ttyACM0,baud=1000000`, `tcp:HOST:PORT`, `unix:PATH`.
    public var transport: String
    /// A btsnoop file to record every HCI packet to (nil: none).
    public var capture: String?
    /// Whether ``capture`` is written with every key, nonce and passkey zeroed in place
    /// (`--capture-redacted`): a capture that can be shared. It then no longer replays a
    /// pairing.
    public var redactCapture: Bool
    /// Where the GATT cache (and later the bonds) live.
    public var store: StoreDirectory
    /// Whether discovered databases are remembered across connections.
    public var cacheEnabled: Bool
    /// The name our GAP service gives peers.
    public var deviceName: String
    /// Where every layer's diagnostics and Bluejay's own log lines go: swift-log, one
    /// `Logger` per layer (`bluejay.hci`, `bluejay.att`, …, `bluejay.bluejay`), each at its
    /// level. `HCILogger.standardError` by default; `HCILogger.system(levels:)`
    /// for the app's own `LoggingSystem`. Secrets in them print as `<redacted 16 octets>`.
    public var logger: HCILogger
    /// Whether ``logger`` prints keys, nonces and passkeys in clear (`--log-secrets`), for
    /// debugging a pairing: it warns once when it first does. Never share such a log.
    public var logSecrets: Bool
    /// Whether the connection and listens are recorded and restored after a restart.
    public var backgroundRestore: BackgroundRestoreMode
    /// How pairing is done when a peripheral asks for security (on demand, as iOS does):
    /// IO capability, bonding, Secure Connections only, whether pairing is allowed at all.
    public var pairingPolicy: PairingPolicy
    /// Answers Numeric Comparison and Passkey Entry (nil: only Just Works can complete).
    public var pairingDelegate: (any PairingDelegate)?
    /// Opens the controller's transport instead of parsing ``transport`` (a transport of
    /// your own, or a wrapper around one such as a test's fault injector); ``transport``
    /// then only names it in logs. Called again each time a lost controller is reopened.
    public var openTransport: TransportOpener?
    /// How many values of one listen may wait for the app, received but with the callback
    /// not yet run (the app, or the queue it chose, is slower than the peer). One more and
    /// the listen ends with `BluejayError.listenOverflow(_:limit:)` and its notifications
    /// are turned off: memory stays bounded, nothing is dropped silently, and the link and
    /// every other listen go on. The values before the overflow are all delivered.
    public var listenBufferLimit: Int
    /// The default ``listenBufferLimit``: 4096 values (about 1 MB of 244-byte values).
    public static let defaultListenBufferLimit = 4096
    /// The longest characteristic value a read follows: the specification caps values at
    /// 512 octets, some peripherals serve longer ones, and a read follows them (logging a
    /// warning) up to this many octets; past it the read fails with
    /// `GATTError.valueLengthLimitExceeded`, so a peer cannot grow memory without end.
    public var maxValueLength: Int
    /// The default ``maxValueLength``: 65536 octets.
    public static let defaultMaxValueLength = 65536
    /// How a controller that was lost (its transport closed or failed, or a Hardware
    /// Error) is brought back: ``ControllerRecovery/standard`` by default.
    public var controllerRecovery: ControllerRecovery
    /// What Bluejay's own timers wait on: a scan's `duration`, ``Bluejay/scanExpiry``, the
    /// delays of ``controllerRecovery``, and the retries of a user channel that is busy or
    /// not there yet. `ContinuousClock()` by default; a test gives a clock it moves itself.
    /// (The stack's protocol timeouts run on the host's own clock.)
    public var clock: any Clock<Duration> = ContinuousClock()

    /// Options as given.
    public init(
        transport: String, capture: String? = nil, store: StoreDirectory = .standard, cacheEnabled: Bool = true,
        deviceName: String = "Bluejay", logger: HCILogger = .standardError,
        backgroundRestore: BackgroundRestoreMode = .disable,
        pairingPolicy: PairingPolicy = PairingPolicy(), pairingDelegate: (any PairingDelegate)? = nil,
        openTransport: TransportOpener? = nil, controllerRecovery: ControllerRecovery = .standard,
        listenBufferLimit: Int = StartOptions.defaultListenBufferLimit,
        maxValueLength: Int = StartOptions.defaultMaxValueLength,
        logSecrets: Bool = false, redactCapture: Bool = false
    ) {
        self.logSecrets = logSecrets
        self.redactCapture = redactCapture
        self.listenBufferLimit = max(1, listenBufferLimit)
        self.maxValueLength = max(512, maxValueLength)
        self.openTransport = openTransport
        self.controllerRecovery = controllerRecovery
        self.pairingPolicy = pairingPolicy
        self.pairingDelegate = pairingDelegate
        self.backgroundRestore = backgroundRestore
        self.transport = transport
        self.capture = capture
        self.store = store
        self.cacheEnabled = cacheEnabled
        self.deviceName = deviceName
        self.logger = logger
    }

    /// ``logger``, showing secrets when ``logSecrets`` asks it to.
    var effectiveLogger: HCILogger {
        var logger = logger
        if logSecrets { logger.showsSecrets = true }
        return logger
    }

    /// The transport from `$BLUEJAY_TRANSPORT` (else `hci0`), everything else default.
    public static var `default`: StartOptions {
        StartOptions(transport: ProcessInfo.processInfo.environment["BLUEJAY_TRANSPORT"] ?? "hci0")
    }
}

/// How Bluejay brings back a controller it lost: the transport closed or failed (a USB
/// adapter unplugged, an emulator restarted) or the controller reported a Hardware Error
/// (Core Vol 4, Part E, 7.7.16), after which only a reset helps. Bluejay closes the
/// transport and, after each delay in turn, opens it again and brings a controller up
/// (HCI Reset first) until one comes up. Operations asked for meanwhile wait; if no
/// attempt succeeds they fail with the last attempt's error, and Bluejay stays down.
public struct ControllerRecovery: Sendable, Equatable {
    /// The wait before each attempt.
    public var delays: [Duration]

    /// One attempt after each of `delays`.
    public init(delays: [Duration]) { self.delays = delays }

    /// Six attempts over about 16 s (0.1, 0.5, 1, 2, 4 and 8 s apart).
    public static let standard = ControllerRecovery(delays: [
        .milliseconds(100), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8),
    ])
    /// Never reopen: a lost controller leaves Bluejay down.
    public static let disabled = ControllerRecovery(delays: [])
}

extension StartOptions {
    /// Gone: a queue chosen at run time could not tell the compiler which closures run off
    /// the main actor. Callbacks of Bluejay's API run on the main actor; for a queue of
    /// your own, call through ``Bluejay/callbacks(on:)``, whose closures are `@Sendable`.
    @available(
        *, unavailable,
        message:
            "callbacks run on the main actor; use bluejay.callbacks(on: queue) for @Sendable callbacks on a queue of yours"
    )
    public var callbackQueue: DispatchQueue {
        get { fatalError("unavailable") }
        set {}
    }
}
