import BluetoothCore
import HCI

extension VirtualController {
    /// A virtual controller offering the peers the btsnoop recording at `path` shows (only
    /// the one at `peer`, when given), rebuilt by ``TraceReconstruction``; its transport
    /// string is `mock:PATH[,peer=ADDRESS]`. A file that cannot be read, or a peer it does not
    /// show, is an error naming what it has.
    public convenience init(recording path: String, peer: BluetoothAddress? = nil, capture: BTSnoopWriter? = nil)
        throws(TransportError)
    {
        let spec = TransportSpec.mock(path: path, peer: peer).description
        let reconstruction: TraceReconstruction
        do { reconstruction = try TraceReconstruction(path: path) } catch {
            throw .openFailed(what: "\(spec): \(error)", errno: 0)
        }
        var peripherals = reconstruction.peripherals
        if let peer {
            peripherals = peripherals.filter { $0.address == peer }
            guard !peripherals.isEmpty else {
                let known = reconstruction.peripherals.map(\.address.description)
                throw .invalidSpec(
                    "\(spec): the recording shows no peer \(peer)"
                        + (known.isEmpty ? " (it shows none)" : "; it shows \(known.joined(separator: ", "))"))
            }
        }
        try self.init(peripherals: peripherals, name: spec, capture: capture)
    }
}

extension VirtualController {
    /// Lets this process open `mock:` transports (`TransportSpec.mock(path:peer:)`), through
    /// any API that takes a transport string: each opens a virtual controller over the
    /// recording. Call it once, before the first; the `bluejay` tool and `bluejay-gateway` do.
    public static func enableMockTransport() {
        MockTransportOpener.install(
            MockTransportOpener { path, peer, capture throws(TransportError) in
                try VirtualController(recording: path, peer: peer, capture: capture)
            })
    }
}
