import BluetoothCore
import HCI

/// Passes everything through, but appends octets to every event the controller sends, after
/// its last parameter: past the event's own format, its LE subevent's, or its Command
/// Complete's return parameters. A controller of a newer specification (or a sloppy one)
/// does this; the host must ignore the extra octets and carry on (the tolerance rule).
package final class EventPaddingTransport: HCITransport {
    private let inner: any HCITransport
    private let padding: [UInt8]

    /// Wraps `inner`, appending `padding` to every event (as far as the one-octet parameter
    /// length allows).
    package init(wrapping inner: any HCITransport, padding: [UInt8] = [0xEE, 0xEE, 0xEE]) {
        self.inner = inner
        self.padding = padding
    }

    /// The transport underneath.
    package var description: String { inner.description }

    /// Starts the transport underneath, padding the events it delivers.
    package func start(_ deliver: @escaping @Sendable (TransportDelivery) -> Void) throws(TransportError) {
        let padding = padding
        try inner.start { delivery in
            guard case let .packets(packets) = delivery else { return deliver(delivery) }
            deliver(
                .packets(
                    packets.map { packet in
                        guard case let .event(event) = packet else { return packet }
                        let room = 255 - event.parameters.count
                        return .event(
                            HCIEventPacket(
                                code: event.code, parameters: (Array(event.parameters) + padding.prefix(room))[...]))
                    }))
        }
    }

    /// Sends the host's packet unchanged.
    package func send(_ packet: HCIPacket) throws(TransportError) { try inner.send(packet) }

    /// Closes the transport underneath.
    package func close() { inner.close() }
}
