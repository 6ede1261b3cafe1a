import ArgumentParser
import Bluejay
import BluetoothCore
import Dispatch
import HCI
import L2CAP
import SMP
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `bluejay l2cap ADDRESS PSM`: an L2CAP credit-based channel between standard input and
/// standard output.
struct L2CAPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "l2cap",
        abstract:
            "Open an L2CAP credit-based channel: standard input (or --send-file) to the channel, the channel to standard output.",
        discussion: """
            Connects to ADDRESS, opens an LE credit based channel (--enhanced: an enhanced credit based one) to PSM \
            (decimal or 0x-hex, e.g. 0x0080), and then at once: sends what it reads, each read of up to the peer's MTU \
            as one SDU, and writes every SDU it receives to standard output as raw octets, nothing added. \
            Without --count it runs until the peer closes the channel or the link ends (input that ends just stops the \
            sending). --count N: it closes the channel and exits once N octets were received (input not sent \
            by then is not sent); --count 0: once the input is all sent, without waiting to receive. A refused PSM is reported by \
            result name (SPSM not supported (0x0002)) with exit status 1; a refusal for want of security pairs (Just \
            Works: standard input carries data, not passkeys) and asks again, unless --no-pair. A summary line goes \
            to standard error at the end.
            """)

    @OptionGroup var common: CommonOptions

    @Argument(help: "The peripheral: AA:BB:CC:DD:EE:FF[/random|/public].")
    var address: String

    @Argument(help: "The SPSM: 0x0001–0x00FF (LE_PSM), decimal or 0x-hex.")
    var psm: String

    @Option(name: .long, help: "The largest SDU we receive (23–65535; 64 at least with --enhanced).")
    var mtu: Int = 2048

    @Option(name: .long, help: "The largest K-frame payload we receive (23–65533; 64 at least with --enhanced).")
    var mps: Int = 247

    @Option(name: .long, help: "The K-frames the peer may send before we grant more (0–65535; topped up as we read).")
    var credits: Int = 64

    @Option(name: .long, help: "Send this file's contents instead of standard input.")
    var sendFile: String?

    @Option(
        name: .long,
        help: "Close the channel and exit once this many octets were received (0: once the input is all sent).")
    var count: Int?

    @Flag(
        name: .long,
        help: "Open an enhanced credit based channel (L2CAP_CREDIT_BASED_CONNECTION_REQ) instead of an LE one.")
    var enhanced = false

    @Option(name: .long, help: "Give up connecting (and cancel the attempt) after this many seconds.")
    var timeout: Double = 10

    @Flag(name: .long, help: "Never pair when the peer refuses the channel for want of security.")
    var noPair = false

    func validate() throws {
        guard Connect.parse(address) != nil else {
            throw ValidationError(
                "'\(address)' is not an address: expected AA:BB:CC:DD:EE:FF, optionally with /random or /public")
        }
        guard parsedPSM != nil else {
            throw ValidationError("'\(psm)' is not an LE PSM: expected 0x0001–0x00FF, decimal or 0x-hex")
        }
        guard timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout must be between 0 and 3600 seconds")
        }
        guard (0...0xFFFF).contains(credits) else { throw ValidationError("--credits must be between 0 and 65535") }
        guard (0...0xFFFF).contains(mtu), (0...0xFFFF).contains(mps) else {
            throw ValidationError("--mtu and --mps must be between 0 and 65535")
        }
        if let problem = parameters.problem(enhanced: enhanced) { throw ValidationError("--mtu/--mps: \(problem)") }
        if let count, count < 0 { throw ValidationError("--count must be 0 or more") }
    }

    var parsedPSM: PSM? {
        let value = psm.lowercased().hasPrefix("0x") ? UInt16(psm.dropFirst(2), radix: 16) : UInt16(psm)
        return value.flatMap { (0x0001...0x00FF).contains($0) ? PSM(rawValue: $0) : nil }
    }

    var parameters: CreditBasedChannelParameters {
        CreditBasedChannelParameters(
            mtu: UInt16(clamping: mtu), mps: UInt16(clamping: mps), initialCredits: UInt16(clamping: credits))
    }

    func run() async throws {
        let input: Int32
        if let sendFile {
            input = open(sendFile, O_RDONLY)
            guard input >= 0 else { throw CLIError("--send-file \(sendFile): \(String(cString: strerror(errno)))") }
        } else {
            input = STDIN_FILENO
        }
        defer { if input != STDIN_FILENO { close(input) } }
        let (address, givenType) = Connect.parse(address)!
        let psm = parsedPSM!
        let (timeout, parameters, enhanced, count, noPair) = (timeout, parameters, enhanced, count, noPair)
        let summary: String = try await common.withHost { host in
            let logger = common.logger
            let type: AddressType
            if let givenType {
                type = givenType
            } else {
                type = try await Connect.typeFromScan(address, controller: host.controller, logger: logger)
            }
            let (manager, l2cap, security) = (host.connections, host.channels, host.security)
            security.policy = PairingPolicy(
                ioCapability: .noInputNoOutput, secureConnectionsOnly: false, allowPairing: !noPair)
            let connection: LEConnection
            do {
                connection = try await manager.connect(
                    to: address, type: type, timeout: .milliseconds(Int(timeout * 1000)))
            } catch {
                throw CLIError("connect \(address)/\(type): \(error)")
            }
            defer {
                if manager.connections[connection.handle] != nil {
                    Task { @BluetoothActor in _ = try? await manager.disconnect(connection.handle) }
                }
            }
            _ = await security.encryptIfBonded(connection.handle)
            let channels = l2cap.creditBased
            channels.onSecurityRequired = { handle, result in await security.securityRequired(handle, for: result) }
            let channel: CreditBasedChannel
            do {
                channel =
                    enhanced
                    ? try await channels.openEnhanced(
                        psm: psm, count: 1, on: connection.handle, parameters: parameters)[0]
                    : try await channels.open(psm: psm, on: connection.handle, parameters: parameters)
            } catch {
                throw CLIError("L2CAP \(psm): \(error)")
            }
            printToStandardError(
                "bluejay: L2CAP \(psm) open: CID \(hex(channel.localCID, digits: 4)) ↔ \(hex(channel.remoteCID, digits: 4)), "
                    + "MTU \(channel.local.mtu)/\(channel.remoteMTU), MPS \(channel.local.mps)/\(channel.remoteMPS), "
                    + "credits \(channel.local.initialCredits)/\(channel.sendCredits)")
            let outcome = try await Self.pipe(input: input, channel: channel, count: count)
            let reason = try? await manager.disconnect(connection.handle)
            let stats = channel.statistics
            return
                "bluejay: L2CAP \(psm): sent \(outcome.sent) octets (\(stats.sdusSent) SDUs, \(stats.framesSent) K-frames against "
                + "\(stats.creditsReceived) credits), received \(outcome.received) octets (\(stats.sdusReceived) SDUs, "
                + "\(stats.framesReceived) K-frames against \(stats.creditsGranted) credits); \(outcome.end)"
                + (reason.map { "; disconnected: \($0)" } ?? "")
        }
        printToStandardError(summary)
    }

    /// Sends the input and writes what arrives until `count` says to stop or the channel
    /// ends; returns the octets each way and how it ended. Never waits on an input that
    /// stays open once the channel is done with.
    @BluetoothActor
    static func pipe(input: Int32, channel: CreditBasedChannel, count: Int?) async throws -> (
        sent: Int, received: Int, end: String
    ) {
        let reader = ChunkReader(fd: input, chunk: Int(channel.remoteMTU))
        let sent = OctetCount()
        let sender = Task { @BluetoothActor () async throws -> Void in
            while let chunk = await reader.next() {
                try await channel.send(chunk)
                sent.octets += chunk.count
            }
        }
        defer {
            reader.stop()
            sender.cancel()
        }
        if count == 0 {
            do { try await sender.value } catch { throw CLIError("L2CAP: \(error)") }
            await channel.disconnect()
            return (sent.octets, 0, "input all sent, channel closed")
        }
        var received = 0
        var end = "the peer closed the channel"
        do {
            while let sdu = try await channel.receive() {
                guard writeAll(STDOUT_FILENO, sdu[...]) else {
                    throw CLIError("writing standard output: \(String(cString: strerror(errno)))")
                }
                received += sdu.count
                if let count, received >= count {
                    end = "\(count) octets received, channel closed"
                    break
                }
            }
        } catch let error as CreditBasedChannelError {
            throw CLIError("L2CAP: \(error)")
        }
        await channel.disconnect()  // nothing to do when the peer closed it
        return (sent.octets, received, end)
    }
}

/// Octets sent so far, counted where they are sent.
@BluetoothActor
final class OctetCount {
    var octets = 0
}

/// Reads a file descriptor on a thread of its own, one chunk at a time and only as fast as
/// the chunks are taken, so a blocking read never holds up the stack's actor.
final class ChunkReader: Sendable {
    private let queue = DispatchQueue(label: "bluejay-l2cap-input")
    private let fd: Int32
    private let chunk: Int
    private let stopped = Mutex(false)

    init(fd: Int32, chunk: Int) { (self.fd, self.chunk) = (fd, chunk) }

    /// The next chunk, or nil at the end of the input (or once stopped).
    func next() async -> [UInt8]? {
        await withCheckedContinuation { (done: CheckedContinuation<[UInt8]?, Never>) in
            queue.async { [self] in
                if stopped.withLock({ $0 }) { return done.resume(returning: nil) }
                var buffer = [UInt8](repeating: 0, count: chunk)
                var got: Int
                repeat {
                    got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, chunk) }
                } while got < 0 && errno == EINTR
                done.resume(returning: got > 0 ? Array(buffer[..<got]) : nil)
            }
        }
    }

    /// Makes the next read return nil (a read already blocked finishes first).
    func stop() { stopped.withLock { $0 = true } }
}
