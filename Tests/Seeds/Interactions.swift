// Bluejay's README: "Reading", "Writing" and "Listening", verbatim inside a view controller
// (the table's cells and the selected row as the README's app has them).
import Bluejay
import Foundation

@MainActor final class InteractionsViewController: UIViewController {
    let bluejay = Bluejay()
    let sensorLocationCell = UITableViewCell()
    var sensorLocation: UInt8 = 0
    var selectedCell: UITableViewCell?
    let heartRateMeasurement = CharacteristicIdentifier(uuid: "2A37", service: ServiceIdentifier(uuid: "180D"))

    func reading() {
        let heartRateService = ServiceIdentifier(uuid: "180D")
        let sensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)

        bluejay.read(from: sensorLocation) { [weak self] (result: ReadResult<UInt8>) in
            guard let weakSelf = self else {
                return
            }

            switch result {
            case .success(let location):
                debugPrint("Read from sensor location is successful: \(location)")

                var locationString = "Unknown"

                switch location {
                case 0:
                    locationString = "Other"
                case 1:
                    locationString = "Chest"
                case 2:
                    locationString = "Wrist"
                case 3:
                    locationString = "Finger"
                case 4:
                    locationString = "Hand"
                case 5:
                    locationString = "Ear Lobe"
                case 6:
                    locationString = "Foot"
                default:
                    locationString = "Unknown"
                }

                weakSelf.sensorLocationCell.detailTextLabel?.text = locationString
                weakSelf.sensorLocation = location
            case .cancelled:
                debugPrint("Cancelled read from sensor location.")
            case .failure(let error):
                debugPrint("Failed to read from sensor location with error: \(error.localizedDescription)")
            }
        }
    }

    func writing(sensorLocation: CharacteristicIdentifier, indexPath: IndexPath, cell: UITableViewCell) {
        bluejay.write(
            to: sensorLocation, value: UInt8(indexPath.row),
            completion: { [weak self] (result) in
                guard let weakSelf = self else {
                    return
                }

                switch result {
                case .success:
                    debugPrint("Write to sensor location is successful.")

                    if let selectedCell = weakSelf.selectedCell {
                        selectedCell.accessoryType = .none
                    }
                    cell.accessoryType = .checkmark

                    weakSelf.navigationController?.popViewController(animated: true)
                case .cancelled:
                    debugPrint("Cancelled write to sensor location.")
                case .failure(let error):
                    debugPrint("Failed to write to sensor location with error: \(error.localizedDescription)")
                }
            })
    }

    func listening() {
        bluejay.listen(to: heartRateMeasurement) { [weak self] (result: ReadResult<HeartRateMeasurement>) in
            guard let weakSelf = self else {
                return
            }

            switch result {
            case .success(let heartRateMeasurement):
                debugPrint(heartRateMeasurement.measurement)
            case .cancelled:
                debugPrint("Listen to heart rate measurement cancelled.")
            case .failure(let error):
                debugPrint("Failed to listen to heart rate measurement with error: \(error.localizedDescription)")
            }
        }
    }
}
