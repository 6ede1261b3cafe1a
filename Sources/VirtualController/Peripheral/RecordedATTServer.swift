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
    private var links: [ConnectionHandle: RecordedServer.Link] = [:]

    /// Serves `record`.
    public init(_ record: RecordedPeripheral) {
        self.record = record
        server = RecordedServer(record)
    }

    /// The receive MTU the peer offered in the recording (23 when it shows none, at most 517).
    public var preferredMTU: UInt16 { UInt16(min(max(record.mtu ?? 23, 23), 517)) }

    /// Answers without sending what the recording shows next (no bearer to send it on).
    public func respond(to pdu: ArraySlice<UInt8>, connection: ConnectionHandle, mtu: Int) -> [UInt8]? {
        answer(pdu, connection: connection, mtu: mtu).response
    }

    /// Answers, then sends the recorded reaction on `bearer`.
    public func respond(to pdu: ArraySlice<UInt8>, on bearer: ATTBearer) -> [UInt8]? {
        let (response, pushes) = answer(pdu, connection: bearer.connection, mtu: bearer.mtu)
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

    /// Forgets the link's CCCDs and prepare queue.
    public func linkEnded(_ connection: ConnectionHandle) { links[connection] = nil }

    private func answer(_ pdu: ArraySlice<UInt8>, connection: ConnectionHandle, mtu: Int) -> (response: [UInt8]?, pushes: [RecordedNotification]) {
        var link = links[connection] ?? RecordedServer.Link()
        link.encrypted = isEncrypted(connection)
        defer { links[connection] = link }
        return server.respond(to: pdu, link: &link, mtu: mtu)
    }
}
