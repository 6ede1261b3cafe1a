import BluetoothCore
import Foundation
@testable import HCI
import HCITestSupport
import Testing

extension IntegrationTests {
    /// The UART transport on a real tty: a pseudo-terminal whose other side is relayed
    /// byte for byte to the Bumble controller, so termios set-up, raw mode and H4 framing
    /// over a character device all run for real.
    @Test func bringUpOverASerialPort() async throws {
        let peer = try await TestPeer(arguments: ["--acl-count-a", "5"])
        defer { peer.stop() }
        let relay = try PseudoTerminalRelay(to: peer.transport)
        defer { relay.stop() }
        let spec = try TransportSpec(parsing: "serial:\(relay.devicePath),baud=1000000,flow=none")
        let controller = HCIController(transport: try spec.open(), configuration: quiet)
        let info = try await controller.start()
        #expect(info.aclBuffers.count == 5)
        #expect(info.supportedCommands.count > 20)
        controller.close()
    }

    @Test func serialTransportNamesAMissingDevice() throws {
        #expect(throws: TransportError.openFailed(what: "/dev/nonexistent-bluejay-uart", errno: ENOENT)) {
            _ = try TransportSpec(parsing: "serial:/dev/nonexistent-bluejay-uart").open()
        }
        // A regular file is no serial port: termios refuses it and the error says so.
        #expect(throws: TransportError.openFailed(what: "\(Repository.peer.path) (not a serial port?)", errno: ENOTTY))
        {
            _ = try TransportSpec(parsing: "serial:\(Repository.peer.path)").open()
        }
    }
}

/// A pseudo-terminal pair: the test opens the device side as a serial port; the other
/// side is copied to and from a TCP connection to the emulated controller.
final class PseudoTerminalRelay: @unchecked Sendable {
    let devicePath: String
    private let master: Int32
    private let socket: Int32
    private var threads: [Thread] = []

    init(to transport: String) throws {
        guard case let .tcp(host, port) = try TransportSpec(parsing: transport) else {
            throw TestPeerError(description: "relay needs a tcp: transport")
        }
        (master, devicePath) = try openPseudoTerminal()
        socket = try StreamSocket.connectTCP(host: host, port: port)
        threads = [copier(from: master, to: socket), copier(from: socket, to: master)]
        for thread in threads { thread.start() }
    }

    private func copier(from source: Int32, to destination: Int32) -> Thread {
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                // EIO on the master once no process holds the device open: done.
                guard count > 0 else { return }
                guard writeAll(destination, buffer[0..<count]) else { return }
            }
        }
    }

    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        close(master)
        close(socket)
    }
}
