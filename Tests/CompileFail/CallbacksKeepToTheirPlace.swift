// Must compile: the callbacks of QueuedCallbackTouchesMainActor.swift done right. The plain
// API calls back on the main actor, where main-actor state is the callback's to touch; a
// callback on the app's queue hops back to the main actor for it.
import Bluejay
import Dispatch

@MainActor final class HeartRateModel {
    var rates: [Int] = []

    func start(_ bluejay: Bluejay, _ work: DispatchQueue) {
        let location = CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))
        bluejay.read(from: location) { (result: ReadResult<UInt8>) in
            if case let .success(value) = result { self.rates.append(Int(value)) }
        }
        bluejay.callbacks(on: work).read(from: location) { (result: ReadResult<UInt8>) in
            guard case let .success(value) = result else { return }
            Task { @MainActor in self.rates.append(Int(value)) }
        }
    }
}
