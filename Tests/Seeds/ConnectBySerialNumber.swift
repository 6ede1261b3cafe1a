// Bluejay's README: "Connect by Serial Number", verbatim inside a view controller (the
// README app's `Services` and `Charactersitics` namespaces, as it spells them).
import Bluejay

enum Services {
    static let deviceInfo = ServiceIdentifier(uuid: "180A")
}

enum Charactersitics {
    static let serialNumber = CharacteristicIdentifier(uuid: "2A25", service: Services.deviceInfo)
}

@MainActor final class SerialNumberViewController: UIViewController {
    let bluejay = Bluejay()
    let statusLabel = UILabel()

    // Properties.
    private var blacklistedDiscoveries = [ScanDiscovery]()
    private var targetSerialNumber: String?

    // Scan by Serial Number function.
    private func scan(services: [ServiceIdentifier], serialNumber: String) {
        debugPrint("Looking for peripheral with serial number \(serialNumber) to connect to.")

        statusLabel.text = "Searching..."

        bluejay.scan(
            allowDuplicates: false,
            serviceIdentifiers: services,
            discovery: { [weak self] (discovery, discoveries) -> ScanAction in
                guard let weakSelf = self else {
                    return .stop
                }

                if weakSelf.blacklistedDiscoveries.contains(where: { (blacklistedDiscovery) -> Bool in
                    return blacklistedDiscovery.peripheral.identifier == discovery.peripheral.identifier
                }) {
                    return .blacklist
                } else {
                    return .connect(
                        discovery,
                        { (connectionResult) in
                            switch connectionResult {
                            case .success(let peripheral):
                                debugPrint("Connection to \(peripheral.identifier) successful.")

                                weakSelf.bluejay.read(
                                    from: Charactersitics.serialNumber,
                                    completion: { (readResult: ReadResult<String>) in
                                        switch readResult {
                                        case .success(let serialNumber):
                                            if serialNumber == weakSelf.targetSerialNumber {
                                                debugPrint("Serial number matched.")

                                                weakSelf.statusLabel.text = "Connected"
                                            } else {
                                                debugPrint("Serial number mismatch.")

                                                weakSelf.blacklistedDiscoveries.append(discovery)

                                                weakSelf.bluejay.disconnect(completion: { (result) in
                                                    switch result {
                                                    case .success:
                                                        weakSelf.scan(
                                                            services: [Services.deviceInfo],
                                                            serialNumber: weakSelf.targetSerialNumber!)
                                                    case .cancelled:
                                                        preconditionFailure("Disconnection cancelled unexpectedly.")
                                                    case .failure(let error):
                                                        preconditionFailure(
                                                            "Disconnection failed with error: \(error.localizedDescription)"
                                                        )
                                                    }
                                                })
                                            }
                                        case .cancelled:
                                            debugPrint("Read serial number cancelled.")

                                            weakSelf.statusLabel.text = "Read Cancelled"
                                        case .failure(let error):
                                            debugPrint(
                                                "Read serial number failed with error: \(error.localizedDescription).")

                                            weakSelf.statusLabel.text = "Read Error: \(error.localizedDescription)"
                                        }
                                    })
                            case .cancelled:
                                debugPrint("Connection to \(discovery.peripheral.identifier) cancelled.")

                                weakSelf.statusLabel.text = "Connection Cancelled"
                            case .failure(let error):
                                debugPrint(
                                    "Connection to \(discovery.peripheral.identifier) failed with error: \(error.localizedDescription)"
                                )

                                weakSelf.statusLabel.text = "Connection Error: \(error.localizedDescription)"
                            }
                        })
                }
            },
            expired: { [weak self] (lostDiscovery, discoveries) -> ScanAction in
                if self == nil {
                    return .stop
                }

                debugPrint("Lost discovery: \(lostDiscovery)")

                return .continue
            }
        ) { [weak self] (discoveries, error) in
            guard let weakSelf = self else {
                return
            }

            if let error = error {
                debugPrint("Scan stopped with error: \(error.localizedDescription)")

                weakSelf.statusLabel.text = "Scan Error: \(error.localizedDescription)"
            } else {
                debugPrint("Scan stopped without error.")
            }
        }
    }
}
