import Foundation
import Synchronization

/// What a program run by ``run(_:_:environment:input:idleInput:interrupt:)`` ended with.
package typealias ProgramResult = (status: Int32, stdout: String, stderr: String)

/// A standard input that stays open and silent for the whole run: how a person or a script
/// drives a tool that reads lines (`sleep 40 | bluejay serve`, or a shell nobody types in).
package enum IdleInput: Sendable {
    /// A pipe whose writer stays open until the program ends.
    case openPipe
    /// A pseudo-terminal whose master stays open until the program ends.
    case terminal
}

/// How long a program may run before ``run(_:_:environment:input:idleInput:interrupt:)``
/// kills it: a hang guard (the suites' own time limit), never a speed check.
package let programHangGuard: Duration = .seconds(600)

/// Runs a program and returns its exit status, standard output and standard error. Shared
/// by the test targets that drive the `bluejay` tool (integration and replay tests). The
/// waiting happens off Swift's cooperative pool (``blocking(_:)``), so tests running beside
/// it go on while the program runs.
/// `input` is written to its standard input, then closed; `idleInput` instead keeps it open
/// and silent; with neither it reads /dev/null. `interrupt` sees its output as it comes and
/// ends it when the test says (``ProgramInterrupt``).
///
/// The program never outlives the test: when the calling task is cancelled (its time limit,
/// or a failure thrown beside an `async let` of this run) it is killed. A tool that serves
/// until interrupted would otherwise keep the test waiting for ever, and with it whatever
/// the test's `defer` was to stop.
package func run(
    _ executable: URL, _ arguments: [String], environment: [String: String] = [:], input: String? = nil,
    idleInput: IdleInput? = nil, interrupt: ProgramInterrupt? = nil
) async throws -> ProgramResult {
    let child = ChildProcess()
    return try await withTaskCancellationHandler {
        try await blocking {
            try runBlocking(
                executable, arguments, environment: environment, input: input, idleInput: idleInput,
                interrupt: interrupt, child: child)
        }
    } onCancel: {
        child.kill(because: "the test was cancelled")
    }
}

/// The process a run started, killed once from whichever side ends it first: the test's
/// cancellation, or the hang guard. A kill asked for before the process exists happens as it
/// starts.
private final class ChildProcess: Sendable {
    private struct State {
        var pid: pid_t?
        var killed: String?
    }
    private let state = Mutex(State())

    func started(_ pid: pid_t) {
        let early = state.withLock { state in
            state.pid = pid
            return state.killed != nil
        }
        if early { _ = Foundation.kill(pid, SIGKILL) }
    }

    func kill(because reason: String) {
        let pid = state.withLock { state -> pid_t? in
            guard state.killed == nil else { return nil }
            state.killed = reason
            return state.pid
        }
        if let pid { _ = Foundation.kill(pid, SIGKILL) }
    }

    /// Why it was killed, if it was.
    var killed: String? { state.withLock { $0.killed } }
}

private func runBlocking(
    _ executable: URL, _ arguments: [String], environment: [String: String], input: String?,
    idleInput: IdleInput?, interrupt: ProgramInterrupt?, child: ChildProcess
) throws -> ProgramResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env.removeValue(forKey: "BLUEJAY_TRANSPORT")
    env.removeValue(forKey: "BLUEJAY_BTSNOOP")
    // Each run gets a store of its own unless the test names one: bonds and cached
    // databases must not leak between tests, nor into the user's own store.
    var ownStore: String?
    if environment["BLUEJAY_STORE"] == nil {
        ownStore = NSTemporaryDirectory() + "bluejay-run-\(UUID().uuidString)"
        env["BLUEJAY_STORE"] = ownStore
    }
    defer { if let ownStore { try? FileManager.default.removeItem(atPath: ownStore) } }
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let stdin = Pipe()
    // The terminal's master end, kept open (and closed) here for the whole run.
    var terminal: (master: Int32, slave: Int32)?
    switch idleInput {
    case .openPipe?:
        process.standardInput = stdin
    case .terminal?:
        let opened = try openPseudoTerminal()
        let slave = open(opened.devicePath, O_RDWR | O_NOCTTY)
        guard slave >= 0 else {
            close(opened.master)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        terminal = (opened.master, slave)
        process.standardInput = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
    case nil:
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
    }
    defer {
        if let terminal { close(terminal.master) }
        if idleInput == .openPipe { try? stdin.fileHandleForWriting.close() }
    }
    try process.run()
    child.started(process.processIdentifier)
    interrupt?.started(process.processIdentifier)
    if let terminal { close(terminal.slave) }
    if let input {
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
    }
    let output = readToEnd(
        out.fileHandleForReading.fileDescriptor, err.fileHandleForReading.fileDescriptor,
        of: process, child: child, printed: { interrupt?.printed($0) })
    process.waitUntilExit()
    var stderr = String(decoding: output.err, as: UTF8.self)
    if let reason = child.killed { stderr += "\n[killed with SIGKILL: \(reason)]" }
    return (process.terminationStatus, String(decoding: output.out, as: UTF8.self), stderr)
}

/// Reads the program's standard output and error as they come, both at once so a chatty
/// child never blocks, until both end or the program has ended with nothing more to read.
/// Past ``programHangGuard`` the program is killed.
private func readToEnd(
    _ outFD: Int32, _ errFD: Int32, of process: Process, child: ChildProcess,
    printed: (Data) -> Void
) -> (out: Data, err: Data) {
    var out = Data(), err = Data()
    var open: [Int32] = [outFD, errFD]
    let deadline = ContinuousClock.now + programHangGuard
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while !open.isEmpty {
        var polled = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&polled, nfds_t(polled.count), 100)
        if ready < 0 && errno != EINTR { break }
        var readAny = false
        for entry in polled where entry.revents != 0 {
            let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
            if count > 0 {
                readAny = true
                let data = Data(buffer[0..<count])
                if entry.fd == outFD {
                    out.append(data)
                    printed(data)
                } else {
                    err.append(data)
                }
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                open.removeAll { $0 == entry.fd }
            }
        }
        if !readAny && !process.isRunning { break }
        if ContinuousClock.now > deadline {
            child.kill(because: "still running after \(programHangGuard) (the hang guard)")
        }
    }
    return (out, err)
}
