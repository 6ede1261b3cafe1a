import ATT
import BluetoothCore
import HCI

/// A recorded peer's database served over a real controller (`bluejay serve --from-trace`):
/// the `RecordedServer` a `mock:` virtual peripheral answers from, behind the host's own
/// ATT bearers. Requests get the recorded answers (handles as recorded, refusals as
/// recorded, values needing security refused until ``isEncrypted`` says the link is); the
/// notifications and indications the recording shows after a write follow its response,
/// indications one at a time, each confirmed.
@BluetoothActor
public final class RecordedATTServer: ATTServer {
    /// The peer being served.
    public let record: RecordedPeripheral
    /// Whether a link is encrypted now (the host's Security Manager knows).
    public var isEncrypted: (ConnectionHandle) -> Bool = { _ in false }
    private let server: RecordedServer

    /// What the recording's server keeps for one client, on its bearer.
    private final class LinkState {
        var link = RecordedServer.Link()
    }

    /// Serves `record`.
    public init(_ record: RecordedPeripheral) {
        self.record = record
        server = RecordedServer(record)
    }

    /// The receive MTU the peer offered in the recording (23 when it shows none, at most 517).
    public var preferredMTU: UInt16 { UInt16(min(max(record.mtu ?? 23, 23), 517)) }

    /// Answers, then sends the recorded reaction on `bearer`.
    public func respond(to request: ATTRequest, on bearer: ATTBearer) -> [UInt8]? {
        let (response, pushes) = answer(request, on: bearer)
        if !pushes.isEmpty {
            Task { @BluetoothActor in
                for push in pushes {
                    if push.isIndication {
                        try? await bearer.indicate(handle: push.handle, value: push.value[...])
                    } else {
                        try? bearer.notify(handle: push.handle, value: push.value[...])
                    }
                }
            }
        }
        return response
    }

    /// The answer from the recording for the client on `bearer`, whose CCCDs and prepare
    /// queue are kept on the bearer.
    private func answer(_ request: ATTRequest, on bearer: ATTBearer) -> (
        response: [UInt8]?, pushes: [RecordedNotification]
    ) {
        let state = bearer.serverState as? LinkState ?? LinkState()
        bearer.serverState = state
        state.link.encrypted = isEncrypted(bearer.connection)
        return server.respond(to: request, link: &state.link, mtu: bearer.mtu)
    }
}
