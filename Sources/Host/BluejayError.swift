import ATT
import BluetoothCore
import GATT
import HCI

/// Why a Bluejay operation failed: Bluejay's own cases, and the lower layers' errors with
/// their protocol codes.
public enum BluejayError: Error, Sendable, CustomStringConvertible {
    /// Bluejay has not been started, or the controller is gone: lost, or coming back after
    /// a loss (the log names what the controller failed with).
    case bluetoothUnavailable
    /// `Bluejay.start(mode:)` was called twice.
    case alreadyStarted
    /// Not connected to a peripheral.
    case notConnected
    /// Already connected (Bluejay talks to one peripheral).
    case alreadyConnected
    /// A connection attempt is in progress.
    case alreadyConnecting
    /// A scan is in progress.
    case alreadyScanning
    /// A background task is running, and it alone talks to the peripheral until it ends
    /// (`Bluejay.readRSSI()->()` throws this, as Bluejay's reference says).
    case backgroundTaskRunning
    /// Cancelled (by `Bluejay.cancelEverything(error:shouldDisconnect:)` or a disconnect).
    case cancelled
    /// The connection attempt timed out and was cancelled.
    case connectionTimedOut
    /// The peripheral has no such service.
    case missingService(ServiceIdentifier)
    /// The service has no such characteristic.
    case missingCharacteristic(CharacteristicIdentifier)
    /// A second listen on a characteristic whose listen was made with `.trap`.
    case multipleListenTrapped
    /// A synchronous listen waited longer than its timeout.
    case listenTimedOut
    /// The app fell more than `limit` values behind a listen (`StartOptions.listenBufferLimit`):
    /// the listen ended and its notifications were turned off.
    case listenOverflow(CharacteristicIdentifier, limit: Int)
    /// The data is shorter than what was to be read from it.
    case notEnoughData(expected: Int, actual: Int)
    /// More data arrived than was expected (`SynchronizedPeripheral.writeAndAssemble(writeTo:value:listenTo:expectedLength:timeoutInSeconds:completion:)`).
    case tooMuchData(expected: Int, actual: Int)
    /// `extract(start:length:)` was asked for more bytes than the type holds, or a negative range.
    case invalidExtraction(start: Int, length: Int, type: String)
    /// The link went down: the reason.
    case disconnected(HCIStatus)
    /// A GATT procedure failed (ATT errors by name: `0x0F insufficientEncryption`).
    case gatt(GATTError)
    /// Connecting failed at the link layer.
    case connection(ConnectionError)
    /// The controller or transport failed.
    case hci(HCIError)
    /// The transport could not be opened or the controller not brought up.
    case startFailed(String)
    /// An operation given a timeout (a `Peripheral`'s read, write or discovery: BlueCap's
    /// per-operation timeouts) did not finish in it; what it was. The request itself may
    /// still be answered later: ATT has one request at a time and no way to take one back.
    case operationTimedOut(String)

    /// Readable, with protocol codes by name.
    public var description: String {
        switch self {
        case .bluetoothUnavailable: "Bluetooth is unavailable: Bluejay is not started or the controller is gone"
        case .alreadyStarted: "Bluejay is already started"
        case .notConnected: "not connected"
        case .alreadyConnected: "already connected"
        case .alreadyConnecting: "already connecting"
        case .alreadyScanning: "already scanning"
        case .backgroundTaskRunning: "a background task is running"
        case .cancelled: "cancelled"
        case .connectionTimedOut: "connection timed out"
        case let .missingService(service): "missing service \(service)"
        case let .missingCharacteristic(characteristic): "missing characteristic \(characteristic)"
        case .multipleListenTrapped: "already listening to this characteristic (the listen was trapped)"
        case .listenTimedOut: "listen timed out"
        case let .listenOverflow(characteristic, limit):
            "the app fell more than \(limit) values behind on \(characteristic): the listen ended and its notifications were turned off"
        case let .notEnoughData(expected, actual): "not enough data: needed \(expected) bytes, got \(actual)"
        case let .tooMuchData(expected, actual): "more data than expected: wanted \(expected) bytes, got \(actual)"
        case let .invalidExtraction(start, length, type): "cannot extract \(length) bytes at \(start) as \(type)"
        case let .disconnected(reason): "disconnected: \(reason)"
        case let .gatt(error): error.description
        case let .connection(error): error.description
        case let .hci(error): error.description
        case let .startFailed(why): "could not start: \(why)"
        case let .operationTimedOut(what): "\(what) timed out"
        }
    }

    /// Whether `error` is Bluejay's own ``cancelled``, which a completion reports as its
    /// `.cancelled` case; any other error, an app's own handed to
    /// `Bluejay.cancelEverything(error:shouldDisconnect:)` included, is a `.failure`.
    package static func isCancellation(_ error: any Error) -> Bool {
        if case .cancelled? = error as? BluejayError { true } else { false }
    }

    /// Maps a lower layer's GATT error, naming the missing service or characteristic.
    package static func from(_ error: GATTError, _ characteristic: CharacteristicIdentifier? = nil) -> BluejayError {
        switch error {
        case let .serviceNotFound(uuid): .missingService(characteristic?.service ?? ServiceIdentifier(uuid: uuid))
        case let .characteristicNotFound(uuid, service):
            .missingCharacteristic(
                characteristic ?? CharacteristicIdentifier(uuid: uuid, service: ServiceIdentifier(uuid: service)))
        case let .att(.disconnected(reason)): .disconnected(reason)
        default: .gatt(error)
        }
    }
}
