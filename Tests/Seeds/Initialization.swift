// Bluejay's README: "Initialization" and "Bluetooth Events", verbatim inside a view controller.
import Bluejay

@MainActor final class BatteryLabel: UILabel, ConnectionObserver {}

@MainActor final class InitializationViewController: UIViewController, ConnectionObserver {
    let batteryLabel = BatteryLabel()
    let rssiLabel = BatteryLabel()

    func snippets() {
        let bluejay = Bluejay()

        bluejay.start()

        bluejay.start(connectionObserver: self)

        bluejay.register(observer: batteryLabel)

        bluejay.unregister(observer: rssiLabel)
    }
}
