// Bluejay's README: "Basic Scanning" and "Monitoring", verbatim inside a view controller.
import Bluejay

@MainActor final class ScanningViewController: UIViewController {
    let bluejay = Bluejay()
    let heartRateService = ServiceIdentifier(uuid: "180D")
    var peripherals: [ScanDiscovery] = []
    let tableView = UITableView()

    func basicScanning() {
        bluejay.scan(
            serviceIdentifiers: [heartRateService],
            discovery: { [weak self] (discovery, discoveries) -> ScanAction in
                guard let weakSelf = self else {
                    return .stop
                }

                weakSelf.peripherals = discoveries
                weakSelf.tableView.reloadData()

                return .continue
            },
            stopped: { (discoveries, error) in
                if let error = error {
                    debugPrint("Scan stopped with error: \(error.localizedDescription)")
                } else {
                    debugPrint("Scan stopped without error.")
                }
            })
    }

    func monitoring() {
        bluejay.scan(
            allowDuplicates: true,
            serviceIdentifiers: nil,
            discovery: { [weak self] (discovery, discoveries) -> ScanAction in
                guard let weakSelf = self else {
                    return .stop
                }

                weakSelf.peripherals = discoveries
                weakSelf.tableView.reloadData()

                return .continue
            },
            expired: { [weak self] (lostDiscovery, discoveries) -> ScanAction in
                guard let weakSelf = self else {
                    return .stop
                }

                debugPrint("Lost discovery: \(lostDiscovery)")

                weakSelf.peripherals = discoveries
                weakSelf.tableView.reloadData()

                return .continue
            }
        ) { (discoveries, error) in
            if let error = error {
                debugPrint("Scan stopped with error: \(error.localizedDescription)")
            } else {
                debugPrint("Scan stopped without error.")
            }
        }
    }
}
