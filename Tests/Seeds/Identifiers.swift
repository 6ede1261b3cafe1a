// Bluejay's README: "Services and Characteristics", verbatim.
import Bluejay

func identifiers() {
    let heartRateService = ServiceIdentifier(uuid: "180D")
    let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)
    let heartRate = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)
    _ = (bodySensorLocation, heartRate)
}
