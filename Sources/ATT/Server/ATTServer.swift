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
}
