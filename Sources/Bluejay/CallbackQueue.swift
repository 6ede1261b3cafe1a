import Dispatch

/// Takes the app's `@Sendable` callbacks to the queue it chose in ``Bluejay/callbacks(on:)``.
///
/// The callbacks of Bluejay's plain API run on the main actor.
/// Through a ``BluejayOnQueue`` each callback is posted to the app's queue in the order
/// Bluejay produced it (the queue should be serial). A callback that answers (a scan's
/// `discovery`, which returns a ``ScanAction``) runs there too, and the scan awaits its
/// answer: the main actor never blocks on the app's queue, which may be the main queue
/// itself. The closures are `@Sendable` and their values `Sendable`, so the compiler
/// checks that what runs on the app's queue touches no main-actor state.
@MainActor
struct CallbackQueue {
    let queue: DispatchQueue

    /// `body`, made to run on the queue.
    func deliver<Value: Sendable>(_ body: @escaping @Sendable (Value) -> Void) -> @MainActor (Value) -> Void {
        let queue = queue
        return { value in queue.async { body(value) } }
    }

    /// `body` (which takes two values), made to run on the queue.
    func deliver<First: Sendable, Second: Sendable>(_ body: @escaping @Sendable (First, Second) -> Void)
        -> @MainActor (First, Second) -> Void
    {
        let queue = queue
        return { first, second in queue.async { body(first, second) } }
    }

    /// `body`, made to run on the queue, its answer awaited.
    func answer(_ body: @escaping @Sendable (ScanDiscovery, [ScanDiscovery]) -> ScanAction)
        -> @MainActor (ScanDiscovery, [ScanDiscovery]) async -> ScanAnswer
    {
        let queue = queue
        return { discovery, found in
            await withCheckedContinuation { (answered: CheckedContinuation<ScanAnswer, Never>) in
                queue.async { answered.resume(returning: ScanAnswer(body(discovery, found))) }
            }
        }
    }
}
