import Foundation

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

/// Runs a program and returns its exit status, standard output and standard error. Shared
/// by the test targets that drive the `bluejay` tool (integration and replay tests). The
/// waiting happens off Swift's cooperative pool (``blocking(_:)``), so tests running beside
/// it go on while the program runs.
/// `input` is written to its standard input, then closed; `idleInput` instead keeps it open
/// and silent; with neither it reads /dev/null. `interrupt` sees its output as it comes and
/// ends it when the test says (``ProgramInterrupt``).
package func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], input: String? = nil,
                 idleInput: IdleInput? = nil, interrupt: ProgramInterrupt? = nil) async throws -> ProgramResult {
    try await blocking {
        try runBlocking(executable, arguments, environment: environment, input: input, idleInput: idleInput, interrupt: interrupt)
    }
}

private func runBlocking(_ executable: URL, _ arguments: [String], environment: [String: String], input: String?,
                         idleInput: IdleInput?, interrupt: ProgramInterrupt?) throws -> ProgramResult {
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
    interrupt?.started(process.processIdentifier)
    if let terminal { close(terminal.slave) }
    if let input {
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
    }
    // Read both pipes to the end before waiting, so a chatty child never blocks.
    let group = DispatchGroup()
    nonisolated(unsafe) var errData = Data()
    group.enter()
    DispatchQueue.global().async {
        errData = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    var outData = Data()
    while true {
        let more = out.fileHandleForReading.availableData
        if more.isEmpty { break }
        outData.append(more)
        interrupt?.printed(more)
    }
    group.wait()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}


