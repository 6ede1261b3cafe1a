import BluetoothCore

/// Fires once after `timeout` unless restarted or cancelled (the SMP timer).
@BluetoothActor
final class Watchdog {
    private let clock: any Clock<Duration>
    private let timeout: Duration
    private let fire: () -> Void
    private var task: Task<Void, Never>?

    init(clock: any Clock<Duration>, timeout: Duration, fire: @escaping () -> Void) {
        self.clock = clock
        self.timeout = timeout
        self.fire = fire
        restart()
    }

    func restart() {
        task?.cancel()
        let clock = clock, timeout = timeout
        task = Task { @BluetoothActor [weak self] in
            do { try await clock.sleep(for: timeout) } catch { return }
            self?.fire()
        }
    }

    func cancel() { task?.cancel() }
}
