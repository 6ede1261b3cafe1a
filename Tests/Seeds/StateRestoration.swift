// Bluejay's README: "State Restoration" and "Listen Restoration", verbatim inside a view
// controller (`log` is the README app's logger).
import Bluejay

@MainActor struct AppLog {
    func debug(_ message: String) {}
}

@MainActor let log = AppLog()

@MainActor final class ViewController: UIViewController {
    let bluejay = Bluejay()
    let heartRate = CharacteristicIdentifier(uuid: "2A37", service: ServiceIdentifier(uuid: "180D"))

    func start(yourRestoreIdentifier: String, yourListenRestorer: any ListenRestorer) {
        bluejay.start(backgroundRestore: .enable(yourRestoreIdentifier))

        bluejay.start(backgroundRestore: .enable(yourRestoreIdentifier, yourListenRestorer))
    }
}

extension ViewController: ListenRestorer {

    func willRestoreListen(on characteristic: CharacteristicIdentifier) -> Bool {
        if characteristic == heartRate {
            bluejay.restoreListen(
                to: heartRate,
                completion: { (result: ReadResult<UInt8>) in
                    switch result {
                    case .success(let value):
                        log.debug("Listen succeeded with value: \(value)")
                    case .failure(let error):
                        log.debug("Listen failed with error: \(error.localizedDescription)")
                    // Not in the README: its switch leaves out `.cancelled`, which `ReadResult`
                    // has in the README's own read snippet, so it compiled nowhere as printed.
                    case .cancelled:
                        break
                    }
                })

            return true
        }

        return false
    }

}
