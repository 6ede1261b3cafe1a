import BluetoothCore

/// What a transport hands the stack: packets from the controller, in order, or the end.
public enum TransportDelivery: Sendable {
    /// Whole packets, in the order the controller sent them (one read may hold several).
    case packets([HCIPacket])
    /// The transport stopped: the controller went away or the byte stream broke. Nothing
    /// follows.
    case failed(TransportError)
}

/// A link to a controller: user channel socket, UART, TCP/Unix socket, or a replayed
/// recording. Deliveries arrive in order, on one thread: the stack's event loop for a
/// descriptor (``FileDescriptorTransport``), the transport's own thread otherwise.
public protocol HCITransport: AnyObject, Sendable, CustomStringConvertible {
    /// Starts reading. `deliver` is called in order, on the event loop's thread or the
    /// transport's own; it must not block (the controller handles a delivery on the loop at
    /// once, and hands one from another thread over to the loop).
    func start(_ deliver: @escaping @Sendable (TransportDelivery) -> Void) throws(TransportError)
    /// Writes one packet to the controller.
    func send(_ packet: HCIPacket) throws(TransportError)
    /// Writes ACL packets to the controller, in order: those its returned credits released
    /// together. A transport that can writes them in one system call; by default each goes
    /// through ``send(_:)``.
    func send(acl packets: [ACLDataPacket]) throws(TransportError)
    /// Whether deliveries come from a watch on `EventLoop.stack` (between the actor's jobs,
    /// never from inside one of its calls): the controller then handles each in the same
    /// turn. A transport that may deliver from inside ``send(_:)`` (a fake answering at
    /// once) must say false, or the answer would arrive before the send returned.
    var deliversOnStackLoop: Bool { get }
    /// Stops reading and releases every thread and descriptor. Idempotent; no delivery
    /// follows its return.
    func close()
}

extension HCITransport {
    /// False: deliveries come from the transport's own thread, or from inside a call.
    public var deliversOnStackLoop: Bool { false }

    /// Sends the packets one by one through ``send(_:)``.
    public func send(acl packets: [ACLDataPacket]) throws(TransportError) {
        for packet in packets { try send(.acl(packet)) }
    }
}

/// Why a transport could not open, or stopped. Setup errors say how to fix them.
public enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The transport string is malformed; the text says what is expected.
    case invalidSpec(String)
    /// The adapter exists but something else holds it.
    case adapterBusy(adapter: String)
    /// The process may not open a user channel.
    case permissionDenied(adapter: String, errno: Int32)
    /// No such adapter; the ones that exist.
    case noSuchAdapter(adapter: String, present: [String])
    /// The kernel has no Bluetooth support.
    case bluetoothUnsupportedByKernel
    /// Opening failed for another reason.
    case openFailed(what: String, errno: Int32)
    /// Reading or writing failed.
    case ioFailed(what: String, errno: Int32)
    /// The other end closed the stream.
    case closedByPeer(what: String)
    /// The H4 byte stream lost framing.
    case framing(H4FramingError)
    /// A packet was impossible to decode.
    case malformedPacket(String)
    /// The transport was closed by the host.
    case closed
    /// The capture file could not be written.
    case captureFailed(path: String, errno: Int32)
    /// A replayed recording and the host disagree: the record, expected and actual bytes.
    /// Its description is the whole report on one line (logs stay one line a message);
    /// the mismatch's own description spreads it over lines.
    case replayMismatch(ReplayMismatch)

    /// A one-line message; setup errors include the command that fixes them.
    public var description: String {
        switch self {
        case let .invalidSpec(text): text
        case let .adapterBusy(adapter):
            "\(adapter) is busy (EBUSY): bluetoothd or another program holds it; stop bluetooth.service "
                + "('sudo systemctl stop bluetooth') or power the adapter down ('sudo btmgmt -i \(adapter) power off'), "
                + "and make sure no other user-channel program is running"
        case let .permissionDenied(adapter, code):
            "cannot open \(adapter) (\(errorName(code))): the HCI user channel needs CAP_NET_ADMIN; run as root "
                + "or grant it once with 'sudo setcap cap_net_admin+ep <path to bluejay>'"
        case let .noSuchAdapter(adapter, present):
            "no adapter \(adapter) (ENODEV); "
                + (present.isEmpty
                    ? "this machine has no Bluetooth adapters (/sys/class/bluetooth is empty)"
                    : "adapters present: \(present.joined(separator: ", "))")
        case .bluetoothUnsupportedByKernel:
            "this kernel has no Bluetooth support (EAFNOSUPPORT: socket(AF_BLUETOOTH) failed); load it with "
                + "'sudo modprobe bluetooth' or use a kernel with CONFIG_BT, or use a serial:, tcp: or unix: transport"
        case let .openFailed(what, code): "cannot open \(what): \(errorName(code))"
        case let .ioFailed(what, code): "\(what) failed: \(errorName(code))"
        case let .closedByPeer(what): "\(what) closed the connection"
        case let .framing(error): error.description
        case let .malformedPacket(text): "malformed packet from the controller: \(text)"
        case .closed: "the transport is closed"
        case let .captureFailed(path, code): "cannot write capture file \(path): \(errorName(code))"
        case let .replayMismatch(mismatch): mismatch.oneLine
        }
    }
}
