// Bluejay's README: "Write and Assemble" and "Flush Listen", verbatim inside a background
// task (the README app's characteristics, registers, models and settings).
import Bluejay
import Foundation

enum Characteristics {
    static let rigadoTX = CharacteristicIdentifier(
        uuid: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E",
        service: ServiceIdentifier(uuid: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
    static let rigadoRX = CharacteristicIdentifier(
        uuid: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E",
        service: ServiceIdentifier(uuid: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
}

enum Registers {
    enum system {
        static let firmwareVersion: UInt16 = 0x0001
    }
}

struct ReadRequest: BluejaySendable {
    var handle: UInt16
    func toBluetoothData() -> Data { Bluejay.combine(sendables: [handle]) }
}

struct FirmwareVersion: Receivable {
    static let length = 4
    var string: String
    init(bluetoothData: Data) throws { string = String(decoding: bluetoothData, as: UTF8.self) }
}

final class Settings: @unchecked Sendable {
    var firmware = ""
}

let settings = Settings()

@MainActor func synchronizedPeripheralSnippets(bluejay: Bluejay) {
    bluejay.run(
        backgroundTask: { peripheral in
            try peripheral.writeAndAssemble(
                writeTo: Characteristics.rigadoTX,
                value: ReadRequest(handle: Registers.system.firmwareVersion),
                listenTo: Characteristics.rigadoRX,
                expectedLength: FirmwareVersion.length,
                completion: { (firmwareVersion: FirmwareVersion) -> ListenAction in
                    settings.firmware = firmwareVersion.string
                    return .done
                })

            try peripheral.flushListen(
                to: Characteristics.rigadoRX, idleWindow: 1,
                completion: {
                    debugPrint("Flushed buffered data on RigadoRX.")
                })
        }, completionOnMainThread: { (result: RunResult<Void>) in })
}
