import Dispatch

/// Takes the app's callbacks to the queue it chose in ``StartOptions/callbackQueue``.
///
/// Bluejay's own state lives on the main actor. With the main queue (the default, as in
/// Bluejay) a callback runs there at once. With another queue each callback is posted to
/// it in the order Bluejay produced it (the queue should be serial); a callback that
/// answers (a scan's `discovery`, which returns a ``ScanAction``) runs there while the main
/// actor waits for the answer.
struct CallbackQueue {
    /// nil: the main actor, where Bluejay already is.
    let queue: DispatchQueue?

    init(_ queue: DispatchQueue) {
        // The main queue is the main actor's executor on Linux too: no hop needed. (Each
        // `DispatchQueue.main` is a new wrapper object on Linux, so compare labels.)
        self.queue = queue.label == DispatchQueue.main.label ? nil : queue
    }

    /// `body`, made to run on the callback queue.
    func deliver<Value>(_ body: @escaping (Value) -> Void) -> (Value) -> Void {
        guard let queue else { return body }
        // The app chose this queue for these closures (StartOptions documents the contract).
        let box = UncheckedBox(body)
        return { value in
            let value = UncheckedBox(value)
            queue.async { box.value(value.value) }
        }
    }

    /// `body`, made to run on the callback queue while the caller waits for its answer.
    func answer<First, Second, Answer>(_ body: @escaping (First, Second) -> Answer) -> (First, Second) -> Answer {
        guard let queue else { return body }
        let box = UncheckedBox(body)
        return { first, second in
            let arguments = UncheckedBox((first, second))
            return queue.sync { UncheckedBox(box.value(arguments.value.0, arguments.value.1)) }.value
        }
    }
}
