import BluetoothCore
import HCI

/// Answers the peer's ATT requests and commands on a bearer.
///
/// The bearer owns the channel: it handles Exchange MTU itself, routes responses,
/// notifications, indications and confirmations to the client side, and hands every
/// request and command here.
@BluetoothActor
public protocol ATTServer: AnyObject {
    /// Answers one request or command PDU (opcode first) received on connection `connection`,
    /// where `mtu` is the bearer's ATT_MTU now; returns the response PDU (an Error Response when
    /// it fails), or nil for a command (no response is sent).
    func respond(to pdu: ArraySlice<UInt8>, connection: ConnectionHandle, mtu: Int) -> [UInt8]?

    /// Answers one request or command PDU received on `bearer`: what the bearer calls. A
    /// server whose answer takes time returns nil for a request and sends its response
    /// later with ``ATTBearer/sendResponse(_:)``. By default, ``respond(to:connection:mtu:)``.
    func respond(to pdu: ArraySlice<UInt8>, on bearer: ATTBearer) -> [UInt8]?

    /// Forgets what the server kept for link `connection`, which ended (its prepare queue,
    /// its CCCDs unless bonded). By default, nothing.
    func linkEnded(_ connection: ConnectionHandle)
}

extension ATTServer {
    /// Answers at once, with ``respond(to:connection:mtu:)``.
    public func respond(to pdu: ArraySlice<UInt8>, on bearer: ATTBearer) -> [UInt8]? {
        respond(to: pdu, connection: bearer.connection, mtu: bearer.mtu)
    }

    /// Keeps nothing per link.
    public func linkEnded(_ connection: ConnectionHandle) {}
}

/// The one place a host's ATT server is kept: ``ATTBearers`` holds it, and each of its
/// bearers asks it, so setting the server once reaches every link, present and future.
@BluetoothActor
final class ATTServerSlot {
    /// The server, if any.
    var server: (any ATTServer)?
}
