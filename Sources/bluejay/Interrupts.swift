import Dispatch
#if canImport(Glibc)
    import Glibc
#endif

/// Catches Ctrl-C (SIGINT) for a command that runs until it is stopped: `handler` runs, on a
/// dispatch queue, at the first one; a second one ends the process at once, should the
/// shutdown hang. Cancel the returned source when done.
///
/// It returns only once the signal source is registered: libdispatch registers a source on
/// its own thread after `resume()`, and SIGINT is ignored meanwhile, so a SIGINT sent on
/// seeing the lines printed next (as scripts and the tests do) was lost under load, and the
/// process ran on (26 of 30 starts lost a SIGINT sent right after `resume()`; none once the
/// registration was waited for).
///
/// It runs on the caller's actor, so the source (not Sendable) stays with the caller.
func catchInterrupts(
    isolation: isolated (any Actor)? = #isolation, _ handler: @escaping @Sendable () -> Void
) async -> any DispatchSourceSignal {
    // Ignored from here: the source takes it over, and the default would end the process.
    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT)
    source.setEventHandler {
        signal(SIGINT, SIG_DFL)
        handler()
    }
    await withCheckedContinuation { (registered: CheckedContinuation<Void, Never>) in
        source.setRegistrationHandler { registered.resume() }
        source.resume()
    }
    return source
}
