import Bluejay
import BluetoothCore
import GAP
import HCI
import VirtualController

extension Serve {
    /// `bluejay serve --from-trace FILE [--peer ADDRESS]`: the recorded peripheral's own
    /// ATT server (``RecordedATTServer``) in place of the GATT server, its recorded
    /// advertising data and scan response advertised (its name when the recording shows no
    /// advertisement), connectable.
    @BluetoothActor
    static func serve(trace: String, peer: String?, common: CommonOptions, duration: Double?) async throws {
        let reconstruction: TraceReconstruction
        do { reconstruction = try TraceReconstruction(path: trace) } catch { throw CLIError("\(error)") }
        let record: RecordedPeripheral
        if let peer {
            guard let address = BluetoothAddress(peer) else { throw CLIError("--peer '\(peer)' is not an address") }
            guard let found = reconstruction.peripherals.first(where: { $0.address == address }) else {
                throw CLIError(
                    "\(trace): no connected peer \(address); the recording shows "
                        + (reconstruction.peripherals.map(\.address.description).joined(separator: ", ").nilIfEmpty
                            ?? "none"))
            }
            record = found
        } else {
            record = try defaultPeer(of: reconstruction, trace: trace)
        }
        let name = record.name ?? "Bluejay"
        try await PeripheralSession.run(
            transport: try common.transportText(), name: name, capture: common.capture, logger: common.logger,
            duration: duration
        ) { manager in
            // As `mock:` does: the recorded database is served as recorded, so pairing is
            // refused (Pairing Not Supported) rather than unlocking values it refused.
            manager.pairingPolicy.allowPairing = false
            let server = RecordedATTServer(record)
            let host = manager.host
            server.isEncrypted = { [weak host] handle in host?.security.isEncrypted(handle) ?? false }
            host.bearers.preferredMTU = server.preferredMTU
            host.bearers.server = server
            let data =
                record.advertisingData.map { AdvertisingData(parsing: $0) }
                ?? AdvertisingData(structures: [
                    ADStructure(type: 0x01, data: [0x06]),
                    ADStructure(type: ADType.completeLocalName, data: Array(name.utf8)),
                ])
            let scanResponse = record.scanResponseData.map { AdvertisingData(parsing: $0) } ?? AdvertisingData()
            // At the recorded address when it is static random (a public address is the
            // controller's own, which no host can choose).
            var parameters = AdvertisingParameters()
            if record.addressType == .random || record.addressType == .randomIdentity,
                record.address.randomKind == .static
            {
                parameters.ownAddress = .staticRandom(record.address)
            }
            do {
                try await manager.advertiser.start(data: data, scanResponse: scanResponse, parameters: parameters)
            } catch {
                throw CLIError("advertising: \(error)")
            }
        }
    }
}

extension Serve {
    /// The recorded peripheral `serve --from-trace` serves when `--peer` does not say: the
    /// one with the largest GATT database the recording shows. A recording may hold several
    /// peers (a phone both central and peripheral, a central reaching several devices, an
    /// excerpt that starts mid-connection), and the first is often not the device. A
    /// recording of several peers where none shows a database, or two tie for the largest,
    /// is refused with the candidates listed.
    static func defaultPeer(of reconstruction: TraceReconstruction, trace: String) throws -> RecordedPeripheral {
        let peers = reconstruction.peripherals
        guard let only = peers.first else { throw CLIError("\(trace): the recording shows no connected peer") }
        guard peers.count > 1 else { return only }
        let most = peers.map(\.attributes.count).max() ?? 0
        let largest = peers.filter { $0.attributes.count == most }
        if most > 0, largest.count == 1 {
            let chosen = largest[0]
            printError(
                "serving \(chosen.address) (\(most) attributes), the largest of \(peers.count) recorded peers; "
                    + "--peer chooses another")
            return chosen
        }
        let why =
            most == 0
            ? "none of its \(peers.count) recorded peers shows a GATT database"
            : "\(largest.count) of its recorded peers tie with \(most) attributes"
        throw CLIError(
            "\(trace): \(why); choose one with --peer:\n"
                + peers.map { peer in
                    "  \(peer.address) (\(peer.addressType)): \(peer.attributes.count) attributes"
                        + (peer.name.map { ", \"\($0)\"" } ?? "")
                }.joined(separator: "\n"))
    }
}

extension String {
    /// nil for the empty string.
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
