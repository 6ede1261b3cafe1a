// Must NOT compile: a background task, written in a main-actor context, touches main-actor
// state. Bluejay's background tasks are @Sendable, so the compiler refuses it
// (Tests/BluejayTests/CompileFailTests.swift type-checks this file and expects the error).
import Bluejay

@MainActor final class HeartRateModel {
    var rates: [Int] = []

    func start(_ bluejay: Bluejay) {
        bluejay.run(
            backgroundTask: { peripheral in
                self.rates.append(1)
            }, completionOnMainThread: { _ in })
    }
}
