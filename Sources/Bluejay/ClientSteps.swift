import BluetoothCore
import GATT

/// The GATT steps both the queued API and the synchronized peripheral take, written once.
extension GATTClient {
    /// The characteristic, discovered on first use.
    func characteristic(_ identifier: CharacteristicIdentifier) async throws(GATTError) -> Characteristic {
        try await characteristic(identifier.uuid, in: identifier.service.uuid)
    }

    /// Writes `bytes` as Bluejay does: a Write Command, or a Write Request (Prepare/Execute
    /// when longer than one request carries).
    func write(_ bytes: [UInt8], to identifier: CharacteristicIdentifier, type: WriteType) async throws(GATTError) {
        let characteristic = try await characteristic(identifier)
        switch type {
        case .withoutResponse: try writeWithoutResponse(characteristic.valueHandle, bytes)
        case .withResponse where bytes.count > maximumWriteLength:
            try await writeLong(characteristic.valueHandle, bytes)
        case .withResponse: try await write(characteristic.valueHandle, bytes)
        }
    }

    /// Reads the whole value.
    func readValue(_ identifier: CharacteristicIdentifier) async throws(GATTError) -> [UInt8] {
        try await readLong(characteristic(identifier).valueHandle)
    }

    /// Sends each value of the characteristic to `handler` and turns notifications (or
    /// indications, when it has no notify) on; returns the value handle and the listener
    /// token to remove later.
    func subscribe(_ identifier: CharacteristicIdentifier, _ handler: @escaping (ArraySlice<UInt8>) -> Void)
        async throws(GATTError) -> (valueHandle: AttributeHandle, token: Int)
    {
        let characteristic = try await characteristic(identifier)
        let token = addValueListener(characteristic.valueHandle, handler)
        do throws(GATTError) {
            try await setNotifications(
                characteristic.properties.contains(.notify) ? .notify : .indicate, for: characteristic)
        } catch {
            removeValueListener(token)
            throw error
        }
        return (characteristic.valueHandle, token)
    }

    /// Removes the listener `token` (if any) and turns the characteristic's CCCD off.
    func unsubscribe(_ identifier: CharacteristicIdentifier, token: Int?) async throws(GATTError) {
        if let token { removeValueListener(token) }
        try await setNotifications(.none, for: characteristic(identifier))
    }
}
