// BlueCap's CentralManager guide (`../shared/reference/bluecap-central-manager.txt`): each
// app snippet as an app writes it on `Central`, under the differences the DocC article "A
// gateway" documents (Sources/Bluejay/Bluejay.docc/Gateway.md):
// - async/await where BlueCap has futures: `onSuccess`/`onFailure` become `do`/`catch` (or
//   `for await` over a stream), and a `flatMap` chain the lines in order;
// - services and characteristics are named (`ServiceIdentifier`, `CharacteristicIdentifier`),
//   not objects, and values are octets (no profiles or `Deserializable`s);
// - `CBUUID(string:)` is `BluetoothUUID(_:)`; option dictionaries are not here;
// - the guide's own mistakes (`Var`, `[peripheral weak]`, `let let`, closures with no
//   `return`) are not kept.
// The TISensorTag profile's UUIDs are the app's constants.
import Bluejay
import Foundation

enum AppError: Error {
    case unauthorized, unknown, unsupported, resetting, poweredOff, poweredOn, unlikely, invalidState, serviceNotFound
}

enum TISensorTag {
    enum AccelerometerService {
        static let uuid = "F000AA10-0451-4000-B000-000000000000"
        static let name = "TI Accelerometer"
        enum Data { static let uuid = "F000AA11-0451-4000-B000-000000000000" }
        enum Enabled { static let uuid = "F000AA12-0451-4000-B000-000000000000" }
    }
}

@BluetoothActor
struct CentralGuide {
    let manager: CentralManager

    /// "To process ManagerState change events use" (the manager made as on Linux: it opens
    /// its controller).
    static func make() async throws -> CentralGuide {
        let manager = try await CentralManager(transport: "hci0")
        return CentralGuide(manager: manager)
    }

    func stateChanges() async {
        for await state in manager.whenStateChanges() {
            switch state {
            case .poweredOn:
                break
            case .poweredOff, .unauthorized:
                break
            case .resetting:
                break
            case .unknown:
                break
            case .unsupported:
                break
            }
        }
    }

    /// Scanning after power on: the guide's `flatMap` on the state stream, and its
    /// `onFailure` handling (`reset()` on resetting).
    func scan() async throws -> Peripheral? {
        let serviceUUID = BluetoothUUID(TISensorTag.AccelerometerService.uuid)!
        var discoveredPeripheral: Peripheral?
        do {
            for await state in manager.whenStateChanges() {
                switch state {
                case .poweredOn:
                    for try await discovery in manager.startScanning(forServiceUUIDs: [serviceUUID], capacity: 10) {
                        discoveredPeripheral = manager.peripheral(discovery.peripheral)
                        break
                    }
                case .poweredOff:
                    throw AppError.poweredOff
                case .unauthorized, .unsupported:
                    throw AppError.invalidState
                case .resetting:
                    throw AppError.resetting
                case .unknown:
                    throw AppError.unknown
                }
                if discoveredPeripheral != nil { break }
            }
        } catch {
            switch error {
            case AppError.invalidState:
                await manager.stopScanning()
            case AppError.resetting:
                await manager.stopScanning()
                try await manager.reset()
            case AppError.poweredOff:
                await manager.stopScanning()
            case AppError.unknown:
                await manager.stopScanning()
            default:
                break
            }
        }
        return discoveredPeripheral
    }

    /// Connecting, and the guide's failure cases.
    func connect(_ peripheral: Peripheral) async throws {
        await manager.stopScanning()
        do {
            try await peripheral.connect(timeoutRetries: 5, disconnectRetries: 5, connectionTimeout: 10.0)
            // handle successful connection
        } catch {
            switch error {
            case .disconnected:
                try await peripheral.reconnect()
            case .connectionTimedOut:
                break
            default:
                break
            }
        }
        try await peripheral.reconnect(withDelay: 1.5)
        await peripheral.disconnect()
        await peripheral.terminate()
    }

    /// Discovering the service and its characteristic; then every service's characteristics.
    func discover(_ peripheral: Peripheral) async throws -> CharacteristicIdentifier {
        let serviceUUID = BluetoothUUID(TISensorTag.AccelerometerService.uuid)!
        let dataUUID = BluetoothUUID(TISensorTag.AccelerometerService.Data.uuid)!
        _ = try await peripheral.discoverServices([serviceUUID], timeout: 10.0)
        guard let service = peripheral.services.first(where: { $0.uuid == serviceUUID }) else {
            throw AppError.serviceNotFound
        }
        _ = try await peripheral.discoverCharacteristics([dataUUID], of: service, timeout: 10.0)
        for service in peripheral.services { _ = try await peripheral.discoverAllCharacteristics(of: service) }
        guard let characteristic = peripheral.characteristics(of: service).first(where: { $0.uuid == dataUUID }) else {
            throw AppError.unlikely
        }
        _ = try await peripheral.discoverAllServices(timeout: TimeInterval.infinity)
        return characteristic
    }

    /// Writing, reading, and notifications.
    func messaging(_ peripheral: Peripheral, _ characteristic: CharacteristicIdentifier) async throws {
        try await peripheral.write(to: characteristic, bytes: [0x01], timeout: 5.0)
        let value = try await peripheral.read(from: characteristic, timeout: 5.0)
        _ = value
        for try await update in try await peripheral.values(of: characteristic, capacity: 10) {
            _ = update
            break
        }
        try await peripheral.endListen(to: characteristic)
    }

    /// Retrieving peripherals, RSSI, and the statistics.
    func retrieving(_ peripheral: Peripheral) async throws {
        let serviceUUID = BluetoothUUID(TISensorTag.AccelerometerService.uuid)!
        let peripherals = manager.retrieveConnectedPeripherals(withServices: [serviceUUID])
        _ = manager.retrievePeripherals(withIdentifiers: peripherals.map(\.identifier.uuid))
        _ = manager.retrievePeripherals()
        _ = try await peripheral.readRSSI()
        for await rssi in peripheral.startPollingRSSI(period: 10.0, capacity: 10) {
            _ = rssi
            break
        }
        peripheral.stopPollingRSSI()
        let statistics: [Any?] = [
            peripheral.discoveredAt, peripheral.connectedAt, peripheral.disconnectedAt,
            peripheral.timeoutCount, peripheral.disconnectionCount, peripheral.connectionCount,
            peripheral.secondsConnected, peripheral.totalSecondsConnected,
            peripheral.cumlativeSecondsConnected, peripheral.cumlativeSecondsDisconnected,
        ]
        _ = statistics
        _ = manager.isScanning
    }
}
