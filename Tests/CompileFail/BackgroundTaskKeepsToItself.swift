// Must compile: the task of BackgroundTaskTouchesMainActor.swift done right: it returns
// its result, and the completion, on the main actor, keeps it.
import Bluejay

@MainActor final class HeartRateModel {
    var rates: [Int] = []

    func start(_ bluejay: Bluejay) {
        bluejay.run(
            backgroundTask: { peripheral -> Int in
                1
            },
            completionOnMainThread: { result in
                if case let .success(rate) = result { self.rates.append(rate) }
            })
    }
}
