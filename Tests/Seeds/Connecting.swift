// Bluejay's README: "Connecting" and "Connection States", verbatim inside a view
// controller, with the peripheral it connects to at hand (`peripheralIdentifier`, and
// `peripheral` as the connect snippet's cancelled and failed cases name it).
import Bluejay

@MainActor final class ConnectingViewController: UIViewController {
    let bluejay = Bluejay()
    func connect(_ peripheralIdentifier: PeripheralIdentifier) {
        let peripheral = peripheralIdentifier
        bluejay.connect(peripheralIdentifier) { [weak self] (result) in
            switch result {
            case .success(let peripheral):
                debugPrint("Connection to \(peripheral.identifier) successful.")

                guard let weakSelf = self else {
                    return
                }

                weakSelf.performSegue(withIdentifier: "showHeartSensor", sender: self)
            case .cancelled:
                debugPrint("Connection to \(peripheral.identifier) cancelled.")
            case .failure(let error):
                debugPrint("Connection to \(peripheral.identifier) failed with error: \(error.localizedDescription)")
            }
        }
    }

    func disconnect(_ peripheralIdentifier: PeripheralIdentifier) {
        bluejay.disconnect()

        bluejay.disconnect { (result) in
            switch result {
            case .success(let peripheral):
                debugPrint("Disconnection from \(peripheral.identifier) successful.")
            case .cancelled:
                debugPrint("Disconnection from \(peripheralIdentifier.uuid.uuidString) cancelled.")
            case .failure(let error):
                debugPrint(
                    "Disconnection from \(peripheralIdentifier.uuid.uuidString) failed with error: \(error.localizedDescription)"
                )
            }
        }
    }

    func states() -> [Bool] {
        [
            bluejay.isBluetoothAvailable, bluejay.isConnecting, bluejay.isConnected, bluejay.isDisconnecting,
            bluejay.isScanning,
        ]
    }
}
