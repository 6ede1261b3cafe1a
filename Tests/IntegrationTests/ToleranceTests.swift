import ATT
import BluetoothCore
import Foundation
import GAP
import GATT
@testable import HCI
import HCITestSupport
import L2CAP
import Synchronization
import Testing

// The tolerance rule against the Bumble peer: strict in what we send, liberal in what we
// accept. A controller that appends octets to every event (past the event's format, its LE
// subevent's or its Command Complete's return parameters) must not cost the host anything.

/// Log lines as a logger writes them, from any thread.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    /// A logger at `level` that keeps its lines here.
    func logger(_ level: HCILogger.Level = .debug) -> HCILogger {
        HCILogger(level: level) { [self] _, line in lines.withLock { $0.append(line) } }
    }

    /// Every line so far.
    var all: [String] { lines.withLock { $0 } }
}

extension IntegrationTests {
    @Test func eventsWithExtraOctetsServeBringUpScanConnectAndARead() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let log = LogLines()
        let logger = log.logger()
        let transport = EventPaddingTransport(wrapping: try TransportSpec(parsing: peer.transport).open())
        let controller = HCIController(transport: transport, configuration: .init(logger: logger))
        defer { controller.close() }

        // Bring-up: every Command Complete carries three octets past its return parameters.
        let info = try await controller.start()
        #expect(info.leFeatures.contains(.encryption))
        #expect(info.aclBuffers.count > 0)

        // Scan: advertising reports with three octets after the last report.
        let scanner = Scanner(controller: controller, logger: logger)
        let found = Arrivals<Discovery>()
        let address = try #require(BluetoothAddress(peer.address))
        try await scanner.start { if $0.address == address { found.append($0) } }
        #expect(await found.waitFor(1), "the peer was not discovered")
        try await scanner.stop()
        #expect(found.values.first?.advertisement.localName == "Bluejay HRM")

        // Connect and read: LE Connection Complete, Number Of Completed Packets and the rest
        // all padded.
        let manager = ConnectionManager(controller: controller, logger: logger)
        let l2cap = L2CAPChannels(controller: controller, logger: logger)
        let bearers = ATTBearers(controller: controller, channels: l2cap, logger: logger)
        bearers.server = LocalGATTServer()
        defer { bearers.close(); l2cap.close(); manager.close() }
        let connection = try await manager.connect(to: address, type: .random, timeout: .seconds(10))
        let client = GATTClient(bearer: try bearers.bearer(for: connection.handle))
        try await client.exchangeMTU()
        let manufacturer = try await client.characteristic(
            BluetoothUUID(UInt16(0x2A29)), in: BluetoothUUID(UInt16(0x180A)))
        #expect(try await client.read(manufacturer.valueHandle) == Array("Bluejay".utf8))
        try await manager.disconnect(connection.handle)

        // Nothing was dropped as malformed, and the debug log says what was ignored, by name.
        let lines = log.all
        #expect(!lines.contains { $0.contains("malformed") }, "\(lines.filter { $0.contains("malformed") })")
        for name in [
            "Command_Complete", "Command_Status", "Number_Of_Completed_Packets", "Disconnection_Complete", "LE_Meta",
        ] {
            #expect(
                lines.contains { $0.hasPrefix("\(name) event") && $0.contains("3 octet(s) past its format, ignored") },
                "no debug line for \(name)")
        }
    }
}
