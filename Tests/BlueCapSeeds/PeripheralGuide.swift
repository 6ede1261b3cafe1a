// BlueCap's PeripheralManager guide (Documentation/PeripheralManager.md, and its README's
// "PeripheralManager"; notes in ../shared/notes/bluecap-peripheral-manager.md): each app
// snippet as an app writes it on `PeripheralManager`, under the differences the DocC article
// "Being the peripheral" documents:
// - async/await where BlueCap has futures, a `for await` over the write stream where it has
//   `onSuccess`;
// - values are octets (`Data`), with no profiles or `SerDe`: a characteristic is made with
//   `MutableCharacteristic(UUID:properties:permissions:value:)`;
// - `CBATTError.success` is `ATTErrorCode.success`, and the other codes by their names;
// - iBeacon regions, state restoration and option dictionaries are not here;
// - the guide's own mistakes (`request.value.length`, `Return`, `stopProcessingWriteRequests`,
//   a `guard` with no `else`, closures with no `return`) are not kept.
import Bluejay
import Foundation

@BluetoothActor
struct PeripheralGuide {
    let manager: PeripheralManager
    let accelerometerService = MutableService(uuid: TISensorTag.AccelerometerService.uuid)
    let accelerometerDataCharacteristic = MutableCharacteristic(
        UUID: TISensorTag.AccelerometerService.Data.uuid,
        properties: [.read, .notify], permissions: [.readable], value: nil)
    let accelerometerEnabledCharacteristic = MutableCharacteristic(
        UUID: TISensorTag.AccelerometerService.Enabled.uuid,
        properties: [.read, .write], permissions: [.readable, .writeable],
        value: Data([0]))
    let accelerometerUpdatePeriodCharacteristic = MutableCharacteristic(UUID: "F000AA13-0451-4000-B000-000000000000")

    static func make() async throws -> PeripheralGuide {
        PeripheralGuide(manager: try await PeripheralManager(transport: "hci0"))
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

    /// Adding the service on power on, then advertising it (README R1, R2).
    func start() async throws {
        accelerometerService.characteristics = [
            accelerometerDataCharacteristic, accelerometerEnabledCharacteristic,
            accelerometerUpdatePeriodCharacteristic,
        ]
        do {
            for await state in manager.whenStateChanges() {
                switch state {
                case .poweredOn:
                    manager.removeAllServices()
                    try manager.add(accelerometerService)
                case .poweredOff:
                    throw AppError.poweredOff
                case .unauthorized, .unknown:
                    throw AppError.invalidState
                case .unsupported:
                    throw AppError.unsupported
                case .resetting:
                    throw AppError.resetting
                }
                try await manager.startAdvertising(
                    TISensorTag.AccelerometerService.name,
                    uuids: [BluetoothUUID(TISensorTag.AccelerometerService.uuid)!])
                break
            }
        } catch {
            try await manager.stopAdvertising()
        }
    }

    /// Setting and reading a value; updating subscribers.
    func values() throws {
        accelerometerEnabledCharacteristic.value = Data([1])
        guard let value = accelerometerEnabledCharacteristic.value else {
            return
        }
        _ = value
        try accelerometerDataCharacteristic.update(withData: Data([0x01, 0x02, 0x03]))
        _ = manager.updateValue(Data([0x04]), forCharacteristic: accelerometerDataCharacteristic)
        if accelerometerDataCharacteristic.isUpdating {
            _ = accelerometerDataCharacteristic.subscribers.map(\.maximumUpdateValueLength)
        }
        _ = accelerometerDataCharacteristic.pendingUpdates
    }

    /// Responding to writes (README R3, guide "Respond to Characteristic Write").
    func respondToWrites() async throws {
        for try await (request, _) in accelerometerUpdatePeriodCharacteristic.startRespondingToWriteRequests() {
            guard let value = request.value, value.count > 0 && value.count <= 8 else {
                accelerometerUpdatePeriodCharacteristic.respondToRequest(
                    request, withResult: .invalidAttributeValueLength)
                continue
            }
            accelerometerUpdatePeriodCharacteristic.value = value
            accelerometerUpdatePeriodCharacteristic.respondToRequest(request, withResult: .success)
        }
        for try await (request, _) in accelerometerEnabledCharacteristic.startRespondingToWriteRequests(capacity: 2) {
            guard let value = request.value, value.count == 1 else {
                manager.respondToRequest(request, withResult: .invalidAttributeValueLength)
                continue
            }
            accelerometerEnabledCharacteristic.value = request.value
            accelerometerEnabledCharacteristic.respondToRequest(request, withResult: .success)
        }
        accelerometerEnabledCharacteristic.stopRespondingToWriteRequests()
    }

    /// Stopping, and the lookups.
    func stop() async throws {
        if manager.isAdvertising {
            accelerometerUpdatePeriodCharacteristic.stopRespondingToWriteRequests()
            try await manager.stopAdvertising(timeout: 10.0)
        }
        _ = manager.services
        _ = manager.characteristics
        _ = manager.service(withUUID: accelerometerService.uuid)
        _ = manager.characteristics(withUUID: accelerometerDataCharacteristic.uuid)
        manager.remove(accelerometerService)
        _ = "PeripheralManager state \"\(manager.state)\", powered on: \(manager.poweredOn)"
    }
}
