import ATT
import BluetoothCore
import GATT
import HCI
import Testing

/// Our own GAP/GATT server, queried by our own client over two bearers wired back to back
/// (what a peer acting as a GATT client would see).
@Suite @BluetoothActor
struct LocalServerTests {
    /// A client bearer and a server bearer whose PDUs cross over, delivered after `transmit`
    /// returns as on a real link. The closures hold the link weakly: what a bearer sends
    /// after its test is over is dropped.
    final class Link {
        var client: ATTBearer!
        var server: ATTBearer!
        /// The bearers' clock. It never moves: these tests are about what the server
        /// answers, and ATT's 30 s timeout, on the real clock, fired in them while a handler's
        /// `Task.yield()` waited for a cooperative pool that other tests kept busy.
        let clock = ManualClock()
    }

    func makeLink(_ gattServer: LocalGATTServer) -> Link {
        let link = Link()
        link.client = ATTBearer(connection: 1, clock: link.clock, logger: .silent) {
            [weak link] (pdu: [UInt8]) throws(HCIError) in
            guard let link else { return }
            Task { @BluetoothActor [link] in link.server.receive(pdu[...]) }
        }
        link.server = ATTBearer(connection: 1, clock: link.clock, logger: .silent) {
            [weak link] (pdu: [UInt8]) throws(HCIError) in
            guard let link else { return }
            Task { @BluetoothActor [link] in link.client.receive(pdu[...]) }
        }
        link.server.server = gattServer
        return link
    }

    @Test func servesGAPAndGATTWithADatabaseHash() async throws {
        let gattServer = LocalGATTServer(deviceName: "Bluejay test", appearance: 0x0340)
        let link = makeLink(gattServer)
        let client = GATTClient(bearer: link.client)
        #expect(try await client.exchangeMTU() == Int(ATTBearer.maximumMTU))
        #expect(link.server.mtu == Int(ATTBearer.maximumMTU))

        let services = try await client.discoverPrimaryServices()
        #expect(services.map(\.uuid) == [.genericAccess, .genericAttribute])
        #expect(services.map(\.handles) == [0x0001...0x0005, 0x0006...0x000D])

        let name = try await client.characteristic(.deviceName, in: .genericAccess)
        #expect(try await client.read(name.valueHandle) == Array("Bluejay test".utf8))
        let appearance = try await client.characteristic(.appearance, in: .genericAccess)
        #expect(try await client.read(appearance.valueHandle) == [0x40, 0x03])

        let hash = try await client.read(uuid: .databaseHash)
        #expect(hash == [HandleValue(handle: LocalGATTServer.databaseHashHandle, value: gattServer.databaseHashValue)])
        #expect(gattServer.databaseHashValue.count == 16)
        // The hash covers the layout, not the name: another name, the same hash.
        #expect(LocalGATTServer(deviceName: "other").databaseHashValue == gattServer.databaseHashValue)

        let serviceChanged = try await client.characteristic(.serviceChanged, in: .genericAttribute)
        #expect(serviceChanged.properties == [.indicate])
        let descriptors = try await client.descriptors(of: serviceChanged)
        #expect(descriptors.map(\.uuid) == [.clientCharacteristicConfiguration])
        #expect(try await client.subscribeToServiceChanged())
    }

    @Test func clientSupportedFeaturesBitsCannotBeCleared() async throws {
        let link = makeLink(LocalGATTServer())
        let client = GATTClient(bearer: link.client)
        let handle = LocalGATTServer.clientSupportedFeaturesHandle
        try await client.write(handle, [0x01])
        #expect(try await client.read(handle) == [0x01])
        do {
            try await client.write(handle, [0x00])
            Issue.record("clearing a feature bit must be refused")
        } catch {
            #expect(error.code == .valueNotAllowed)
        }
    }

    @Test func whatItDoesNotServeIsRefused() async throws {
        let link = makeLink(LocalGATTServer())
        let client = GATTClient(bearer: link.client)
        // Read-only attributes, unknown handles and unsupported requests.
        do { try await client.write(0x0003, [0x41]); Issue.record("expected writeNotPermitted") } catch {
            #expect(error.code == .writeNotPermitted)
        }
        do { _ = try await client.read(0x0100); Issue.record("expected invalidHandle") } catch {
            #expect(error.code == .invalidHandle)
        }
        // A long write to a read-only value is refused at its first Prepare Write.
        do { try await client.writeLong(0x0003, [0x41]); Issue.record("expected writeNotPermitted") } catch {
            #expect(error.code == .writeNotPermitted)
        }
        // Read Multiple Variable is served (Part F, 3.4.4.11): each value with its length.
        #expect(try await client.readMultipleVariable([0x0003, 0x0005]) == [Array("Bluejay".utf8), [0x00, 0x00]])
        do {
            _ = try await client.readMultipleVariable([0x0003, 0x0100]); Issue.record("expected invalidHandle")
        } catch {
            #expect(error.code == .invalidHandle)
        }
        #expect(try await client.discoverPrimaryServices(uuid: BluetoothUUID(UInt16(0x180D))).isEmpty)
    }
}
