// Bluejay's README: "Batch Operations", verbatim inside a view controller.
import Bluejay

@MainActor final class BatchViewController: UIViewController {
    let bluejay = Bluejay()

    func updateSensorLocationLabel(value: UInt8) {}
    func startMonitoringHeartRate() {}

    func reset() {
        let heartRateService = ServiceIdentifier(uuid: "180D")
        let heartRateMeasurement = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)
        let sensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)

        bluejay.run(backgroundTask: { (peripheral) -> UInt8 in
            // 1. Stop monitoring.
            debugPrint("Reset step 1: stop monitoring.")
            try peripheral.endListen(to: heartRateMeasurement)

            // 2. Set sensor location to 0.
            debugPrint("Reset step 2: set sensor location to 0.")
            try peripheral.write(to: sensorLocation, value: UInt8(0))

            // 3. Read sensor location.
            debugPrint("Reset step 3: read sensor location.")
            let sensorLocation = try peripheral.read(from: sensorLocation) as UInt8

            /*
             Don't use the listen from the synchronized peripheral here to start monitoring the heart rate again, as it will actually block until it is turned off. The synchronous listen is for when you want to listen to and process some expected incoming values before moving on to the next steps in your background task. It is different from the regular asynchronous listen that is more commonly used for continuous monitoring.
             */

            // 4. Return the data interested and process it in the completion block on the main thread.
            debugPrint("Reset step 4: return sensor location.")
            return sensorLocation
        }) { [weak self] (result: RunResult<UInt8>) in
            guard let weakSelf = self else {
                return
            }

            switch result {
            case .success(let sensorLocation):
                // Update the sensor location label on the main thread.
                weakSelf.updateSensorLocationLabel(value: sensorLocation)

                // Resume monitoring. Now we can use the non-blocking listen from Bluejay, not from the SynchronizedPeripheral.
                weakSelf.startMonitoringHeartRate()
            case .cancelled:
                debugPrint("Cancelled reset background task.")
            case .failure(let error):
                debugPrint("Failed to complete reset background task with error: \(error.localizedDescription)")
            }
        }
    }
}
