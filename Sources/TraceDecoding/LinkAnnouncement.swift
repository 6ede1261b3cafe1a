import BluetoothCore
import HCI

/// The kind of an ACL link, which decides what its L2CAP channels mean.
package enum LinkType: Sendable, Equatable {
    /// BR/EDR (ACL-U): signaling on CID 0x0001, channels opened by Connection Request.
    case bredr
    /// LE (LE-U): ATT, LE signaling and SMP on 0x0004–0x0006, credit based channels.
    case le
}

/// A link a connection event announces: a successful BR/EDR Connection Complete (0x03) for
/// an ACL link, or a successful LE Connection Complete or LE Enhanced Connection Complete
/// v1/v2. The one place all three trace tools read them, so they agree on which handles are
/// links and of which kind.
package struct LinkAnnouncement: Sendable, Equatable {
    /// The link's connection handle.
    package var handle: ConnectionHandle
    /// BR/EDR or LE; nil for a Connection Complete of a SCO link (whose handle is announced
    /// but carries no L2CAP) or one too short to say.
    package var type: LinkType?

    /// The announcement `packet` makes, if any.
    package init?(_ packet: HCIEventPacket) {
        switch packet.code {
        case 0x03:
            // Status, Connection_Handle, BD_ADDR, Link_Type (0x01 ACL), Encryption_Enabled.
            let parameters = packet.parameters
            guard parameters.count >= 3, parameters.first == 0 else { return nil }
            let index = parameters.startIndex
            handle = ConnectionHandle(rawValue: UInt16(parameters[index + 1]) | UInt16(parameters[index + 2]) << 8)
            // A short event still announces its handle (as it always did here); its link
            // type is then unknown, and inferred from the channels it uses.
            type = parameters.count >= 10 && parameters[index + 9] == 0x01 ? .bredr : nil
        case LEMetaEvent.code:
            guard case let .leMeta(meta)? = try? HCIEvent(packet),
                case let .connectionComplete(status, handle, _, _, _, _)? = try? LEConnectionEvent.decode(meta),
                status.isSuccess
            else { return nil }
            self.handle = handle
            type = .le
        default:
            return nil
        }
    }
}
