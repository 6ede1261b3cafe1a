import BluetoothCore

extension AttributeServer {
    /// What the table keeps for one client between its requests: its queue of Prepare Write
    /// parts (3.4.6). The table holds no client's state itself; the owner keeps one value
    /// per link, on the link's bearer (``ATTBearer/serverState``), and hands it to every
    /// answer for that link, so it ends with the link.
    public struct Client: Sendable, Equatable {
        /// The parts queued by Prepare Write Requests, in order, until Execute Write.
        public internal(set) var prepared: [PreparedWrite] = []

        /// A client with nothing queued.
        public init() {}

        /// Drops the queued parts for attributes in `handles` (a service taken out of the
        /// database).
        public mutating func forget(_ handles: ClosedRange<AttributeHandle>) {
            prepared.removeAll { handles.contains($0.handle) }
        }
    }
}

/// The table's state for one client, kept on its bearer by a server with nothing else to
/// keep per link.
@BluetoothActor
private final class TableClient {
    var client: AttributeServer.Client

    init(_ client: AttributeServer.Client) { self.client = client }
}

extension ATTBearer {
    /// The table's state for this bearer's client (``AttributeServer/Client``), kept in
    /// ``serverState``: for a server that keeps nothing else per link.
    public var tableClient: AttributeServer.Client {
        get { (serverState as? TableClient)?.client ?? AttributeServer.Client() }
        set {
            if let box = serverState as? TableClient {
                box.client = newValue
            } else {
                serverState = TableClient(newValue)
            }
        }
    }
}

/// A bare table can serve a bearer too, its client's queue kept on the bearer.
extension AttributeServer: ATTServer {
    /// Answers from the table for the client on `bearer`.
    public func respond(to request: ATTRequest, on bearer: ATTBearer) -> [UInt8]? {
        respond(to: request, connection: bearer.connection, mtu: bearer.mtu, client: &bearer.tableClient)
    }
}
