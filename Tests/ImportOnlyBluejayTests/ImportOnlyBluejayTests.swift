// This target imports Bluejay and nothing else of the package, with MemberImportVisibility
// on (Package.swift): if it builds, `import Bluejay` is all an app needs for the types the
// README's walk-through and Bluejay's public API name.
import Bluejay
import Testing

@MainActor
struct ImportOnlyBluejayTests {
    @Test func aPeripheralFromTheTextAUserHas() throws {
        let random = try PeripheralIdentifier("C0:FF:EE:00:00:01/random")
        #expect(random.address == BluetoothAddress("C0:FF:EE:00:00:01"))
        #expect(random.addressType == AddressType.random)
        #expect(try PeripheralIdentifier("C0:FF:EE:00:00:01/public").addressType == .public)
        #expect(try PeripheralIdentifier("C0:FF:EE:00:00:01").addressType == .public, "no suffix: public")
        #expect(try PeripheralIdentifier(random.description) == random, "description round-trips")
        #expect(try PeripheralIdentifier("c0:ff:ee:00:00:01/Random") == random, "either case")
        for bad in [
            "", "C0:FF:EE:00:00", "C0:FF:EE:00:00:01/", "C0:FF:EE:00:00:01/static", "C0:FF:EE:00:00:01/random/x",
            "C0:FF:EE:00:00:0G",
        ] {
            #expect(throws: PeripheralIdentifier.ParseError.self, "'\(bad)'") { try PeripheralIdentifier(bad) }
        }
        do {
            _ = try PeripheralIdentifier("C0:FF:EE:00:00:01/static")
        } catch {
            #expect(
                error.description
                    == "'C0:FF:EE:00:00:01/static' is not a peripheral: 'static' is not an address type: expected random or public"
            )
        }
    }

    /// The peripheral role's types, reached through `import Bluejay` alone; an
    /// advertisement shared out between the advertising data and the scan response.
    @Test func thePeripheralRolesTypesComeWithBluejay() throws {
        let uuid = BluetoothUUID("B1E70A00-9D3B-4C7A-8A5E-6F2D0C1B0A00")!
        let service = MutableService(
            uuid: uuid,
            characteristics: [
                MutableCharacteristic(
                    uuid: BluetoothUUID(UInt16(0x2A6E)), properties: [CharacteristicProperties.read, .notify],
                    permissions: [AttributePermissions.read, .readEncrypted], value: [0, 0],
                    descriptors: [MutableDescriptor.userDescription("Temperature")])
            ])
        #expect(service.characteristics[0].canNotify)
        let parameters = AdvertisingParameters(kind: AdvertisingKind.connectable, ownAddress: OwnAddress.public)
        #expect(parameters.legacyPDUs)
        let advertisement = Advertisement(
            localName: "A rather long peripheral name", serviceUUIDs: [uuid],
            manufacturerData: ManufacturerData(companyIdentifier: 0xFFFF, data: [1]))
        let (data, scanResponse) = try advertisement.split(kind: .connectable)
        // Flags (3) and the 128-bit UUID (18) fit the advertising data; the name (31) goes to
        // the scan response; the manufacturer data (5) back to the advertising data.
        #expect(data.flags == 0x06 && data.serviceUUIDs == [uuid] && data.manufacturerData.count == 1)
        #expect(scanResponse.localName == "A rather long peripheral name" && !scanResponse.isLocalNameShortened)
        #expect(data.encoded().count <= 31 && scanResponse.encoded().count <= 31)
        // Broadcast only: no scan response, so the name is shortened into what is left.
        let (beacon, none) = try Advertisement(localName: "A rather long peripheral name", serviceUUIDs: [uuid]).split(
            kind: .nonConnectable)
        #expect(none.structures.isEmpty && beacon.isLocalNameShortened && beacon.encoded().count == 31)
        let resumption: AdvertisingResumption = .afterDisconnection
        #expect(resumption.rawValue == "afterDisconnection")
        let error: PeripheralManagerError = .advertising(AdvertisingError.notAdvertising)
        #expect(error.description == "advertising: not advertising")
    }

    /// The types an app names, reached through `import Bluejay` alone.
    @Test func theTypesAnAppNamesComeWithBluejay() {
        let service = ServiceIdentifier(uuid: "180D")
        let characteristic = CharacteristicIdentifier(uuid: BluetoothUUID("2A37")!, service: service)
        #expect(characteristic.service.uuid == BluetoothUUID("180D"))
        let options = StartOptions(
            transport: "tcp:127.0.0.1:9000", store: StoreDirectory(path: "/tmp/bluejay-import-test"),
            logger: HCILogger.silent)
        #expect(options.store.path == "/tmp/bluejay-import-test")
        let pairing = StartOptions(
            transport: "hci0", pairingPolicy: PairingPolicy(ioCapability: IOCapability.displayYesNo),
            pairingDelegate: Confirmer())
        #expect(pairing.pairingPolicy.ioCapability == .displayYesNo && pairing.pairingDelegate != nil)
        let failed: BluejayError = .gatt(GATTError.att(ATTError.timeout))
        if case .gatt(.att(.timeout)) = failed {} else { Issue.record("\(failed)") }
        #expect(ATTErrorCode.readNotPermitted.description.hasSuffix("readNotPermitted"))
        let handles: (ConnectionHandle, AttributeHandle) = (0x0040, 0x002B)
        #expect(handles.0.rawValue == 0x40 && handles.1.rawValue == 0x2B)
        #expect(HCIStatus.success.isSuccess)
        #expect(AdvertisingData(parsing: [0x02, 0x01, 0x06]).flags == 0x06)
        let refused = CreditBasedChannelError.refused(CreditBasedConnectionResult(rawValue: 0x0002, enhanced: false))
        #expect(refused.description == "connection refused: SPSM not supported (0x0002)")
        #expect(
            CreditBasedChannelParameters(mtu: 512).problem(enhanced: false) == nil
                && PSM(rawValue: 0x80).rawValue == 0x80)
    }

    /// An L2CAP channel as an app uses it, with `import Bluejay` alone (compiled, not run:
    /// nothing is connected here).
    func useAChannel(_ bluejay: Bluejay) async throws {
        let channel: L2CAPChannel = try await bluejay.openL2CAPChannel(psm: 0x0080)
        try await channel.send([1, 2, 3])
        for try await sdu in channel.sdus { _ = sdu }
        _ = await (channel.remoteMTU, channel.statistics.framesSent, channel.localCID)
        await channel.disconnect()
    }
}

/// A pairing delegate an app writes, with the types `import Bluejay` brings.
final class Confirmer: PairingDelegate {
    func confirm(numericValue value: UInt32) async -> Bool { true }
    func display(passkey: UInt32) async {}
    func enterPasskey() async -> UInt32? { nil }
}
