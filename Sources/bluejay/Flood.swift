import Bluejay
import BluetoothCore
import Dispatch
import FoundationEssentials
import GATT
import HCI

/// `"flood": true` on a characteristic of `bluejay serve`: while a central has its
/// notifications on, values go out back to back, as fast as the link takes them (the
/// benchmark's notification source, `make vmbench`). Each value is a running counter (four
/// octets, little-endian) followed by the characteristic's value, so a client can tell a
/// lost notification from a slow one.
@BluetoothActor
final class Flooder {
    /// Notifications handed to the stack before waiting for the controller to have taken
    /// them all: enough to keep every controller buffer busy, few enough that a central's
    /// request (its CCCD write to stop) is not queued behind seconds of values.
    static let batch = 64

    private let manager: PeripheralManager
    private let uuid: BluetoothUUID
    /// The flood on each link, kept on the link: it stops when the link closes.
    private let floods: PerLink<Task<Void, Never>>

    init(manager: PeripheralManager, uuid: BluetoothUUID) {
        self.manager = manager
        self.uuid = uuid
        floods = PerLink(controller: manager.host.controller, layer: .host)
        floods.onClose = { _, flood, _ in flood.cancel() }
    }

    /// Follows the manager's events: a subscription to the characteristic starts a flood on
    /// that link, unsubscribing stops it (leaving closes the link, which stops it).
    func run() {
        let events = manager.events()
        Task { @BluetoothActor [self] in
            for await event in events {
                switch event {
                case let .subscriptionChanged(subscription) where subscription.uuid == uuid:
                    if subscription.notifications {
                        start(subscription)
                    } else {
                        floods.removeValue(forKey: subscription.connection)?.cancel()
                    }
                default:
                    break
                }
            }
        }
    }

    private func start(_ subscription: GATTSubscription) {
        floods[subscription.connection]?.cancel()
        let manager = manager, link = subscription.connection, handle = subscription.handle, uuid = uuid
        floods[link] = Task { @BluetoothActor in
            let tail = (try? manager.value(of: uuid)) ?? []
            var sent: UInt32 = 0
            let start = DispatchTime.now().uptimeNanoseconds
            flooding: while !Task.isCancelled {
                for _ in 0..<Self.batch {
                    let counter = withUnsafeBytes(of: sent.littleEndian) { Array($0) }
                    // Empty when the central unsubscribed or its link went.
                    guard !manager.server.notify(handle, value: counter + tail, to: [link]).isEmpty else {
                        break flooding
                    }
                    sent &+= 1
                }
                // The pace is the controller's: the next batch once it completed this one.
                guard await manager.host.controller.waitUntilDelivered(handle: link, timeout: .seconds(5)) else {
                    break
                }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            print(
                "flood \(uuid) to handle \(hex(link, digits: 4)): \(sent) notifications in \(Double(Int(seconds * 1000)) / 1000) s"
            )
            flushStandardOutput()
        }
    }
}
