import Bluejay
import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import Testing

extension IntegrationTests {
    static let blueCapService = "B1E70B00-9D3B-4C7A-8A5E-6F2D0C1B0A00"

    /// BlueCap's peripheral flow, name for name with async/await, against a Bumble central:
    /// the state stream, a `MutableService` of `MutableCharacteristic`s made from text UUIDs,
    /// `add`, `startAdvertising(_:uuids:)` (a second start fails with `isAdvertising`), a read
    /// of the value set on the characteristic, writes the app answers (accepted: the value;
    /// refused: its code and the value unchanged), a write with nobody answering (stored),
    /// `update(withData:)` kept until the central subscribes, `removeAllServices()` (the
    /// service's handles are gone) and `stopAdvertising(timeout:)`.
    @Test(.hangGuard) func blueCapsPeripheralFlow() async throws {
        let rig = try await PeripheralRig(name: "Bluejay BlueCap")
        defer { rig.close() }
        let central = rig.central, manager = rig.manager
        var states = manager.whenStateChanges().makeAsyncIterator()
        #expect(await states.next() == .poweredOn)
        #expect(manager.poweredOn)

        let service = MutableService(uuid: Self.blueCapService)
        let period = MutableCharacteristic(
            UUID: "B1E70B01-9D3B-4C7A-8A5E-6F2D0C1B0A00", properties: [.read, .write],
            permissions: [.readable, .writeable], value: Data([10]))
        let enabled = MutableCharacteristic(
            UUID: "B1E70B02-9D3B-4C7A-8A5E-6F2D0C1B0A00", properties: [.read, .write],
            permissions: [.readable, .writeable], value: Data([0]))
        let data = MutableCharacteristic(
            UUID: "B1E70B03-9D3B-4C7A-8A5E-6F2D0C1B0A00", properties: [.read, .notify],
            permissions: [.readable], value: nil)
        service.characteristics = [period, enabled, data]
        #expect(period.service === service && data.canNotify && !period.canNotify)
        #expect(throws: MutableCharacteristicError.unconfigured) { try data.update(withData: Data([1])) }
        #expect(throws: MutableCharacteristicError.notifyNotSupported) { try period.update(withData: Data([1])) }

        manager.removeAllServices()
        let served = try manager.add(service)
        #expect(manager.services.map(\.uuid) == [service.uuid])
        #expect(manager.service(withUUID: service.uuid)?.first === service)
        #expect(manager.characteristics(withUUID: enabled.uuid)?.first === enabled)
        #expect(manager.characteristics(withUUID: BluetoothUUID(UInt16(0x2A37))) == nil)
        try await manager.startAdvertising("Bluejay BlueCap", uuids: [service.uuid])
        await #expect(throws: PeripheralManagerError.isAdvertising) {
            try await manager.startAdvertising("Bluejay BlueCap")
        }

        // Updates before any central subscribed wait for the first.
        try data.update(withData: Data([1]))
        try data.update(withData: Data([2]))
        #expect(data.pendingUpdates == [Data([1]), Data([2])] && !data.isUpdating)

        let found = try await central.send(["op": "scan", "name": "Bluejay BlueCap"])
        try await central.send([
            "op": "connect", "address": found["address"] as Any, "address_type": found["address_type"] as Any,
        ])
        _ = try await central.send(["op": "discover"])
        let periodHandle = Int(served.characteristics[0].valueHandle.rawValue)
        let enabledHandle = Int(served.characteristics[1].valueHandle.rawValue)
        let dataHandle = Int(served.characteristics[2].valueHandle.rawValue)

        // A read gives the value set on the characteristic, from any actor.
        await Task.detached { period.value = Data([20]) }.value
        let read: [String: Any] = try await central.send(["op": "read", "handle": periodHandle])
        #expect(hexBytes(read["value"]) == [20])

        // Writes the app answers: one octet accepted, more refused.
        let requests = enabled.startRespondingToWriteRequests(capacity: 2)
        let answering = Task.detached { () -> [Data?] in
            var seen: [Data?] = []
            for try await (request, writer) in requests {
                seen.append(request.value)
                #expect(writer.maximumUpdateValueLength >= 20)
                if request.value?.count == 1 {
                    enabled.respondToRequest(request, withResult: .success)
                } else {
                    await manager.respondToRequest(request, withResult: .invalidAttributeValueLength)
                }
            }
            return seen
        }
        try await central.send(["op": "write", "handle": enabledHandle, "value": "01"])
        #expect(enabled.value == Data([1]))
        do {
            try await central.send(["op": "write", "handle": enabledHandle, "value": "0102"])
            Issue.record("the app's refusal did not reach the central")
        } catch let error as CentralError {
            #expect(error.attError == Int(ATTErrorCode.invalidAttributeValueLength.rawValue))
        }
        #expect(enabled.value == Data([1]), "a refused write changed the value")
        enabled.stopRespondingToWriteRequests()
        #expect(try await answering.value == [Data([1]), Data([1, 2])])
        // Nobody answering: a permitted write is stored.
        try await central.send(["op": "write", "handle": periodHandle, "value": "1e"])
        #expect(period.value == Data([30]))
        #expect(try manager.value(of: period.uuid) == [30])

        // The first subscriber gets what waited, then what comes.
        try await central.send(["op": "subscribe", "handle": dataHandle])
        #expect(await eventually { data.isUpdating })
        #expect(data.subscribers.count == 1 && data.pendingUpdates.isEmpty)
        try data.update(withData: Data([3]))
        #expect(manager.updateValue(Data([4]), forCharacteristic: data))
        let values: [String: Any] = try await central.send(["op": "values", "handle": dataHandle, "count": 4])
        #expect(values["values"] as? [String] == ["01", "02", "03", "04"])

        // Removed: its handles are gone from the database.
        manager.removeAllServices()
        #expect(manager.services.isEmpty && manager.characteristics.isEmpty)
        #expect(throws: MutableCharacteristicError.unconfigured) { try data.update(withData: Data([5])) }
        #expect(!manager.updateValue(Data([5]), forCharacteristic: data))
        do {
            try await central.send(["op": "read", "handle": periodHandle])
            Issue.record("a removed characteristic was read")
        } catch let error as CentralError {
            #expect(error.attError == Int(ATTErrorCode.invalidHandle.rawValue))
        }

        try await manager.stopAdvertising(timeout: 10)
        #expect(!manager.isAdvertising)
    }
}
