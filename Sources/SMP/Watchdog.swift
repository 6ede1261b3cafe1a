import BluetoothCore

/// Fires once after `timeout` unless restarted or cancelled: the SMP timer (Part H, 3.4),
/// restarted by every command of a pairing. Its deadline is kept by the Security Manager's
/// ``Deadlines``, so a restart starts no task.
@BluetoothActor
final class Watchdog {
    private let deadlines: Deadlines
    private let timeout: Duration
    private let fire: () -> Void
    private var token: Deadlines.Token?

    init(deadlines: Deadlines, timeout: Duration, fire: @escaping () -> Void) {
        self.deadlines = deadlines
        self.timeout = timeout
        self.fire = fire
        restart()
    }

    func restart() {
        cancel()
        token = deadlines.schedule(after: timeout) { [weak self] in
            self?.token = nil
            self?.fire()
        }
    }

    func cancel() {
        if let token { deadlines.cancel(token) }
        token = nil
    }
}
