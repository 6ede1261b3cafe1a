import BluetoothCore
import HCI

/// Answers the peer's ATT requests and commands on a bearer.
///
/// The bearer owns the channel: it handles Exchange MTU itself, routes responses,
/// notifications, indications and confirmations to the client side, and hands every
/// request and command here, decoded once (``ATTRequest``). A malformed request it answers
/// itself with Invalid PDU, an opcode no case names with Request Not Supported. What a server keeps for one client (its prepare queue, its
/// CCCDs) it keeps on the client's bearer (``ATTBearer/serverState``), so it goes with the
/// link.
@BluetoothActor
public protocol ATTServer: AnyObject {
    /// Answers one request or command received on `bearer`; returns the response PDU (an
    /// Error Response when it fails), or nil for a command (no response is sent). A server
    /// whose answer takes time returns nil for a request and sends its response later with
    /// ``ATTBearer/sendResponse(_:)``.
    func respond(to request: ATTRequest, on bearer: ATTBearer) -> [UInt8]?

    /// `bearer`'s link ended (the bearer closed): whatever the server holds of it beside
    /// the bearer's own state goes. By default, nothing.
    func bearerClosed(_ bearer: ATTBearer)
}

extension ATTServer {
    /// Keeps nothing of a link beside the bearer's state.
    public func bearerClosed(_ bearer: ATTBearer) {}
}

/// The one place a host's ATT server is kept: ``ATTBearers`` holds it, and each of its
/// bearers asks it, so setting the server once reaches every link, present and future.
@BluetoothActor
final class ATTServerSlot {
    /// The server, if any.
    var server: (any ATTServer)?
}
