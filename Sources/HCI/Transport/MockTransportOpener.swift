import BluetoothCore
import Synchronization

/// Opens `mock:` transports. A mock is a virtual controller serving the peers a recording
/// shows, which needs layers above this one (ATT, GATT, the trace walker), so HCI only
/// names the scheme: a program that wants it links the VirtualController module and installs
/// its opener once (`VirtualController.enableMockTransport()`), as the `bluejay` tool and
/// `bluejay-gateway` do. An app that never does carries none of that code.
public struct MockTransportOpener: Sendable {
    /// Opens the recording at `path` (only the peer at `peer`, when given), recording to
    /// `capture`.
    public typealias Open =
        @Sendable (_ path: String, _ peer: BluetoothAddress?, _ capture: BTSnoopWriter?) throws(TransportError)
        -> any HCITransport

    let open: Open

    /// An opener that calls `open`.
    public init(_ open: @escaping Open) { self.open = open }

    private static let current = Mutex<MockTransportOpener?>(nil)

    /// The opener every `mock:` transport of this process goes to; nil until one is
    /// installed.
    public static var installed: MockTransportOpener? { current.withLock { $0 } }

    /// Installs `opener` for every `mock:` transport this process opens from now on.
    public static func install(_ opener: MockTransportOpener) { current.withLock { $0 = opener } }
}
