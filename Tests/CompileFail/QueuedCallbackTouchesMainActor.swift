// Must NOT compile: a callback given through `callbacks(on:)` runs on the app's queue, so it
// is @Sendable, and touching main-actor state from it is refused
// (Tests/BluejayTests/CompileFailTests.swift type-checks this file and expects the error).
import Bluejay
import Dispatch

@MainActor final class HeartRateModel {
    var rates: [Int] = []

    func start(_ bluejay: Bluejay, _ work: DispatchQueue) {
        let location = CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))
        bluejay.callbacks(on: work).read(from: location) { (result: ReadResult<UInt8>) in
            if case let .success(value) = result { self.rates.append(Int(value)) }
        }
    }
}
