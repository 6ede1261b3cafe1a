// The peripheral's send path (issue 35): notifications sent per second.
//
//   bluejay-bench peripheral-notify --payload 244 --count 200000 [--runs 5]
//     in memory (BenchSupport's NotifyPath): GATT server → ATT → L2CAP → ACL queue, the
//     scripted controller returning buffers as they fill; per wall and per CPU second.
//   bluejay-bench peripheral-peer --transport T --count N [--payload 244]
//     against the Bumble central (`peer.py --central`, driven by bench.py): a PeripheralManager
//     advertises "Bluejay Bench", waits until a central subscribes, then sends N notifications
//     through updateValue; timed from the first until the controller has completed every ACL
//     packet of the link.
import Bluejay
import BenchSupport
import CBluetooth
import BluetoothCore
import Foundation
import HCI

/// One in-memory run of `count` notifications.
@BluetoothActor
func peripheralNotifyRun(count: Int, payload: Int) async throws -> RunFigures {
    let path = try await NotifyPath(count: count, payload: payload)
    defer { path.close() }
    return try await timed(count: count) { _ = try path.run() }
}

/// Our peripheral on `transport`, notifying a subscribed central `count` times.
@BluetoothActor
func peripheralPeerRun(transport: String, count: Int, payload: Int) async throws -> String {
    let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-bench-periph-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(atPath: store.path) }
    let manager = try await PeripheralManager(
        transport: transport, name: "Bluejay Bench", store: store, logger: .silent)
    defer { manager.close() }
    let service = BluetoothUUID(UInt16(0x181A)), stream = BluetoothUUID(UInt16(0x2A6E))
    let events = manager.events()
    try manager.add(
        MutableService(uuid: service, characteristics: [MutableCharacteristic(uuid: stream, properties: [.notify])]))
    try await manager.startAdvertising("Bluejay Bench", uuids: [service])
    print("{\"mode\": \"peripheral-peer\", \"ready\": true}")
    bluejay_flush_stdout()  // bench.py reads each line as it comes
    var link: ConnectionHandle?
    for await event in events {
        if case let .subscriptionChanged(subscription) = event, subscription.notifications {
            link = subscription.connection
            break
        }
    }
    guard let link else { return "{\"mode\": \"peripheral-peer\", \"error\": \"no subscription\"}" }
    var value = [UInt8](repeating: 0x5A, count: payload)
    let cpuBefore = processCPUSeconds()
    let start = ContinuousClock.now
    for sequence in 0..<UInt32(count) {
        withUnsafeBytes(of: sequence.littleEndian) { for index in 0..<4 { value[index] = $0[index] } }
        try await manager.updateValue(value, for: stream)
    }
    let delivered = await manager.host.controller.waitUntilDelivered(handle: link, timeout: .seconds(60))
    let figures = RunFigures(count: count, elapsed: ContinuousClock.now - start, cpu: processCPUSeconds() - cpuBefore)
    return
        "{\"mode\": \"peripheral-peer\", \"payload\": \(payload), \"notifications\": \(count), \"delivered\": \(delivered), "
        + "\"notifications_per_s\": \(figures.perWallSecond), \"notifications_per_cpu_s\": \(figures.perCPUSecond)}"
}
