@testable import Bluejay
import BluetoothCore
import FoundationEssentials
import GATT
import Testing

/// The app's services carry the handles a definition gives them to the server: a service
/// added with handles keeps them (`bluejay serve`'s integration test serves them).
struct MutableServiceLayoutTests {
    @Test func aServiceMadeFromADefinitionKeepsItsHandles() {
        let characteristic = CharacteristicDefinition(
            uuid: BluetoothUUID(UInt16(0xFF01)), properties: [.read, .notify], value: [0x01],
            descriptors: [
                MutableDescriptor(
                    uuid: .clientCharacteristicConfiguration, value: [0, 0],
                    permissions: [.read, .write], handle: 0x0026)
            ],
            extendedProperties: [.reliableWrite], handle: 0x0022, valueHandle: 0x0024,
            automaticCCCD: false)
        let definition = ServiceDefinition(
            uuid: BluetoothUUID(UInt16(0x180D)), characteristics: [characteristic],
            includes: [IncludeDefinition(uuid: BluetoothUUID(UInt16(0x180F)), handle: 0x0021)],
            handle: 0x0020, endHandle: 0x002F)
        let service = MutableService(definition)
        #expect(service.definition == definition)
        #expect(service.includedServices == [BluetoothUUID(UInt16(0x180F))])
        // The value is the app's from now on: the definition carries the current one.
        service.characteristics[0].value = Data([0x02])
        #expect(
            service.definition.characteristics[0].value == [0x02]
                && service.definition.characteristics[0].handle == 0x0022)
        let plain = MutableService(
            uuid: BluetoothUUID(UInt16(0x180D)),
            characteristics: [
                MutableCharacteristic(uuid: BluetoothUUID(UInt16(0xFF01)), properties: [.read, .notify])
            ])
        #expect(
            plain.definition.handle == nil && plain.definition.characteristics[0].hasCCCD,
            "without a definition, as before")
    }
}
