import Dispatch
#if canImport(Glibc)
    import Glibc
#endif

/// Catches the signals that stop a long-running program (`bluejay serve`, `monitor`,
/// `advertise`, `bluejay-gateway`): at the first of any of `signals`, `handler` runs on a
/// global queue; a second one ends the process at once, should the shutdown hang. Keep the
/// returned sources (cancel them when done).
///
/// It returns only once every source is registered. The signals are ignored from the start
/// (their default would end the process), and libdispatch registers a source later, on its
/// own thread: a signal in between is lost. A script or systemd sends one as soon as the
/// program says it is ready, and under load 26 of 30 `bluejay` starts lost a SIGINT sent
/// right after `resume()`, none once the registration was waited for. The wait is on the
/// registration, which needs no thread of the caller's, so an actor's thread may make it.
package func catchStopSignals(_ signals: [Int32], _ handler: @escaping @Sendable () -> Void)
    -> [any DispatchSourceSignal]
{
    let registered = DispatchSemaphore(value: 0)
    let sources = signals.map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { @Sendable in
            for number in signals { signal(number, SIG_DFL) }
            handler()
        }
        source.setRegistrationHandler { @Sendable in registered.signal() }
        source.resume()
        return source
    }
    for _ in sources { registered.wait() }
    return sources
}
