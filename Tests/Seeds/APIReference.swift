// Bluejay's API reference (`bluejay-api-reference.txt`, the newer API): every member of the
// `Bluejay` class it declares, called as its declaration shows (Core Bluetooth's delegate
// methods aside: there is no CBCentralManager here).
import Bluejay
import Foundation

@MainActor
final class APIReferenceCalls: ConnectionObserver, RSSIObserver, ServiceObserver, LogObserver, DisconnectHandler {
    func didReadRSSI(from peripheral: PeripheralIdentifier, RSSI: Int, error: (any Error)?) {}
    func didModifyServices(from peripheral: PeripheralIdentifier, invalidatedServices: [ServiceIdentifier]) {}
    func logFileUpdated(logs: String) {}
    func didDisconnect(
        from peripheral: PeripheralIdentifier, with error: (any Error)?, willReconnect autoReconnect: Bool
    ) -> AutoReconnectMode { .noChange }

    func calls(_ bluejay: Bluejay, _ peripheral: PeripheralIdentifier, _ characteristic: CharacteristicIdentifier)
        throws
    {
        let flags: [Bool] = [
            bluejay.isBluetoothAvailable, bluejay.isBluetoothStateUpdateImminent, bluejay.isConnecting,
            bluejay.isConnected,
            bluejay.isDisconnecting, bluejay.shouldAutoReconnect, bluejay.isScanning, bluejay.hasStarted,
            bluejay.isBackgroundRestorationEnabled,
        ]
        _ = (flags, bluejay.defaultWarningOptions, bluejay.uuid)
        bluejay.log("a line")
        _ = bluejay.getLogs()
        bluejay.clearLogs()
        bluejay.start(mode: .new(.default))
        bluejay.start()
        let (host, connected) = bluejay.stopAndExtractBluetoothState()
        _ = (host, connected)
        bluejay.cancelEverything(error: BluejayError.cancelled, shouldDisconnect: true)
        bluejay.cancelEverything()
        bluejay.register(connectionObserver: self)
        bluejay.unregister(connectionObserver: self)
        bluejay.register(rssiObserver: self)
        bluejay.unregister(rssiObserver: self)
        bluejay.register(serviceObserver: self)
        bluejay.unregister(serviceObserver: self)
        bluejay.register(logObserver: self)
        bluejay.unregister(logObserver: self)
        bluejay.registerDisconnectHandler(handler: self)
        bluejay.unregisterDisconnectHandler()
        bluejay.scan(
            duration: 5, allowDuplicates: false, throttleRSSIDelta: 5, serviceIdentifiers: nil,
            discovery: { _, _ in .continue }, expired: { _, _ in .continue }, stopped: { _, _ in })
        bluejay.stopScanning()
        bluejay.connect(peripheral, timeout: .none, warningOptions: nil) { (_: ConnectionResult) in }
        bluejay.connect(peripheral, timeout: .seconds(15)) { _ in }
        bluejay.disconnect(immediate: false, completion: nil)
        bluejay.read(from: characteristic) { (_: ReadResult<UInt8>) in }
        bluejay.write(to: characteristic, value: UInt8(1), type: .withResponse) { (_: WriteResult) in }
        bluejay.listen(to: characteristic, multipleListenOption: .trap) { (_: ReadResult<Data>) in }
        bluejay.endListen(to: characteristic, completion: nil)
        _ = try bluejay.isListening(to: characteristic)
        try bluejay.readRSSI()
        bluejay.run(backgroundTask: { _ in }, completionOnMainThread: { (_: RunResult<Void>) in })
        bluejay.run(backgroundTask: { _ -> UInt8 in 0 }, completionOnMainThread: { (_: RunResult<UInt8>) in })
        bluejay.run(
            userData: UInt8(1), backgroundTask: { _, data -> UInt8 in data },
            completionOnMainThread: { (_: RunResult<UInt8>) in })
        _ = Bluejay.combine(sendables: [UInt8(1), UInt16(2)])
    }
}
