import BluetoothCore

/// A transport named by a string, the same everywhere (CLI `--transport`, the
/// `BLUEJAY_TRANSPORT` variable, the API):
///
/// - `hci0`, `hci:0` — the kernel's HCI user channel on adapter hci0
/// - `serial:/dev/ttyACM0[,baud=1000000][,flow=rtscts|none]` — H4 over a UART
/// - `tcp:HOST:PORT` — H4 over TCP (emulators, the test peer)
/// - `unix:PATH` — H4 over a Unix stream socket
/// - `replay:FILE` — the controller side of a btsnoop recording
/// - `mock:FILE[,peer=ADDRESS]` — a virtual controller offering the peers a btsnoop
///   recording shows (or only the one at ADDRESS), rebuilt from it; opened by the
///   VirtualController module once a program installs it (``MockTransportOpener``)
public enum TransportSpec: Equatable, Sendable, CustomStringConvertible {
    /// The kernel's HCI user channel on adapter `hci<index>`.
    case userChannel(index: UInt16)
    /// H4 over a UART at `baudRate`, with RTS/CTS flow control when `flowControl`.
    case serial(path: String, baudRate: Int, flowControl: Bool)
    /// H4 over a TCP connection to `host`:`port`.
    case tcp(host: String, port: UInt16)
    /// H4 over a Unix stream socket at `path`.
    case unix(path: String)
    /// The controller side of the btsnoop recording at `path`.
    case replay(path: String)
    /// A virtual controller with the peers of the recording at `path` (only `peer`, when
    /// given) as virtual peripherals.
    case mock(path: String, peer: BluetoothAddress?)

    /// The baud rate used when a serial spec names none.
    public static let defaultBaudRate = 115_200

    /// Parses a transport string; the error says what forms exist.
    public init(parsing text: String) throws(TransportError) {
        let usage =
            "expected hci0, hci:N, serial:/dev/ttyX[,baud=N][,flow=rtscts|none], tcp:HOST:PORT, unix:PATH, replay:FILE or mock:FILE[,peer=ADDRESS]"
        if text.hasPrefix("hci") {
            var rest = text.dropFirst(3)
            if rest.first == ":" { rest = rest.dropFirst() }
            if rest.hasPrefix("hci") { rest = rest.dropFirst(3) }
            guard let index = decimal(rest, as: UInt16.self) else {
                throw .invalidSpec("bad adapter in '\(text)': \(usage)")
            }
            self = .userChannel(index: index)
            return
        }
        guard let colon = text.firstIndex(of: ":") else { throw .invalidSpec("unknown transport '\(text)': \(usage)") }
        let scheme = text[..<colon]
        let value = String(text[text.index(after: colon)...])
        switch scheme {
        case "serial":
            var parts = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let path = parts.removeFirst()
            guard !path.isEmpty else { throw .invalidSpec("serial transport needs a device path: \(usage)") }
            var baud = Self.defaultBaudRate
            var flow = false
            for option in parts {
                let pair = option.split(separator: "=", maxSplits: 1).map(String.init)
                switch (pair.first, pair.count == 2 ? pair[1] : nil) {
                case ("baud", let number?):
                    guard let rate = decimal(number, as: Int.self), SerialPort.speedConstant(rate) != nil else {
                        throw .invalidSpec(
                            "unsupported baud rate '\(number)' (supported: \(SerialPort.supportedRates.map(String.init).joined(separator: ", ")))"
                        )
                    }
                    baud = rate
                case ("flow", "rtscts"): flow = true
                case ("flow", "none"): flow = false
                default: throw .invalidSpec("unknown serial option '\(option)': expected baud=N or flow=rtscts|none")
                }
            }
            self = .serial(path: path, baudRate: baud, flowControl: flow)
        case "tcp":
            guard let portColon = value.lastIndex(of: ":"),
                let port = decimal(value[value.index(after: portColon)...], as: UInt16.self),
                port != 0
            else { throw .invalidSpec("tcp transport needs HOST:PORT, got '\(value)'") }
            var host = String(value[..<portColon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { throw .invalidSpec("tcp transport needs HOST:PORT, got '\(value)'") }
            self = .tcp(host: host, port: port)
        case "unix":
            guard !value.isEmpty else { throw .invalidSpec("unix transport needs a socket path") }
            self = .unix(path: value)
        case "replay":
            guard !value.isEmpty else { throw .invalidSpec("replay transport needs a btsnoop file") }
            self = .replay(path: value)
        case "mock":
            // The option is looked for at the end, so a path may hold commas.
            var path = value
            var peer: BluetoothAddress?
            let marker = ",peer="
            if let start = value.indices.last(where: { value[$0...].hasPrefix(marker) }) {
                let text = String(value[value.index(start, offsetBy: marker.count)...])
                guard let address = BluetoothAddress(text) else {
                    throw .invalidSpec("mock transport: '\(text)' is not an address (expected peer=AA:BB:CC:DD:EE:FF)")
                }
                peer = address
                path = String(value[..<start])
            }
            guard !path.isEmpty else {
                throw .invalidSpec("mock transport needs a btsnoop file: mock:FILE[,peer=ADDRESS]")
            }
            self = .mock(path: path, peer: peer)
        default:
            throw .invalidSpec("unknown transport '\(text)': \(usage)")
        }
    }

    /// The canonical string for this transport.
    public var description: String {
        switch self {
        case let .userChannel(index): "hci\(index)"
        case let .serial(path, baud, flow): "serial:\(path),baud=\(baud),flow=\(flow ? "rtscts" : "none")"
        case let .tcp(host, port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        case let .unix(path): "unix:\(path)"
        case let .replay(path): "replay:\(path)"
        case let .mock(path, peer): peer.map { "mock:\(path),peer=\($0)" } ?? "mock:\(path)"
        }
    }

    /// Opens the transport. With `capture`, every packet in both directions is also
    /// written to that btsnoop file. A user channel whose adapter is busy or not there yet
    /// (the kernel's own init) is retried for a while, waiting on `clock`: the caller's
    /// actor is not blocked meanwhile.
    public func open(capture: BTSnoopWriter? = nil, clock: any Clock<Duration>) async throws(TransportError)
        -> any HCITransport
    {
        guard case let .userChannel(index) = self else { return try open(capture: capture) }
        return try userChannel(try await UserChannel.open(index: index, clock: clock), capture: capture)
    }

    /// Opens the transport, blocking the calling thread while a user channel is retried
    /// (see ``open(capture:clock:)``, which does not). With `capture`, every packet in both
    /// directions is also written to that btsnoop file. A `mock:` one goes to `mock`, by
    /// default the opener this process installed (``MockTransportOpener/installed``).
    public func open(capture: BTSnoopWriter? = nil, mock: MockTransportOpener? = MockTransportOpener.installed)
        throws(TransportError) -> any HCITransport
    {
        switch self {
        case let .userChannel(index):
            return try userChannel(try UserChannel.open(index: index), capture: capture)
        case let .serial(path, baud, flow):
            return FileDescriptorTransport(
                descriptor: try SerialPort.open(path: path, baudRate: baud, flowControl: flow),
                name: description, capture: capture)
        case let .tcp(host, port):
            return FileDescriptorTransport(
                descriptor: try StreamSocket.connectTCP(host: host, port: port),
                name: description, capture: capture)
        case let .unix(path):
            return FileDescriptorTransport(
                descriptor: try StreamSocket.connectUnix(path: path),
                name: description, capture: capture)
        case let .replay(path):
            return try ReplayTransport(path: path, capture: capture)
        case let .mock(path, peer):
            // The virtual controller serves ATT and GATT, layers above this module.
            guard let mock else {
                throw .invalidSpec(
                    "\(description): mock transports are opened by the VirtualController module: "
                        + "call VirtualController.enableMockTransport() once before opening one (bluejay and bluejay-gateway do)"
                )
            }
            return try mock.open(path, peer, capture)
        }
    }

    /// The transport on a bound user-channel socket.
    private func userChannel(_ descriptor: Int32, capture: BTSnoopWriter?) throws(TransportError) -> any HCITransport {
        FileDescriptorTransport(descriptor: descriptor, name: description, capture: capture, framerLimit: 65535)
    }
}

/// A number written as decimal digits only: the integer initialisers alone also accept a
/// sign, so `hci+1` or `baud=+9600` would parse as if written canonically.
private func decimal<T: FixedWidthInteger>(_ text: some StringProtocol, as _: T.Type) -> T? {
    guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
        return nil
    }
    return T(text)
}
