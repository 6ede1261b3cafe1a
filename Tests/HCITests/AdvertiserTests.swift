import BluetoothCore
import HCI
import HCITestSupport
import Testing

/// The advertiser against the scripted controller: the command set chosen from the
/// supported-commands mask, the commands and their order, data limits, fragments, and
/// advertising resumed after a central's link.
@Suite @BluetoothActor
struct AdvertiserTests {
    static let legacyCommands: [HCIOpcode] = [LESetRandomAddress.opcode, LESetAdvertisingParameters.opcode, LESetAdvertisingData.opcode,
                                              LESetScanResponseData.opcode, LESetAdvertisingEnable.opcode]
    static let extendedCommands: [HCIOpcode] = [LESetAdvertisingSetRandomAddress.opcode, LESetExtendedAdvertisingParameters.opcode,
                                                LESetExtendedAdvertisingData.opcode, LESetExtendedScanResponseData.opcode,
                                                LESetExtendedAdvertisingEnable.opcode, LEReadMaximumAdvertisingDataLength.opcode]
    let data = AdvertisingData(structures: [ADStructure(type: ADType.flags, data: [0x06]), ADStructure(type: ADType.completeServiceUUIDs16, data: [0x0D, 0x18])])
    let response = AdvertisingData(structures: [ADStructure(type: ADType.completeLocalName, data: Array("Bluejay".utf8))])

    func started(extended: Bool) async throws -> (FakeController, HCIController, Advertiser) {
        var script = FakeController.Script()
        script.supported += Self.legacyCommands + (extended ? Self.extendedCommands : [])
        script.leFeatures = extended ? [.encryption, .extendedAdvertising] : [.encryption]
        let fake = FakeController(script)
        let controller = HCIController(transport: fake, configuration: .init(logger: .silent))
        try await controller.start()
        return (fake, controller, Advertiser(controller: controller, logger: .silent))
    }

    /// The commands sent after bring-up.
    func advertisingCommands(_ fake: FakeController) -> [HCICommandPacket] {
        fake.sent.compactMap { if case let .command(command) = $0, command.opcode.rawValue >= 0x2005, command.opcode.rawValue <= 0x203D,
                                  command.opcode != LESetEventMask.opcode { command } else { nil } }
    }

    @Test func aLegacyControllerGetsTheLegacyCommandsInOrder() async throws {
        let (fake, _, advertiser) = try await started(extended: false)
        #expect(advertiser.commands == .legacy)
        try await advertiser.start(data: data, scanResponse: response)
        #expect(advertisingCommands(fake) == [
            LESetAdvertisingParameters().packet, LESetAdvertisingData(data: data.encoded()).packet,
            LESetScanResponseData(data: response.encoded()).packet, LESetAdvertisingEnable(enable: true).packet,
        ])
        #expect(advertiser.isAdvertising)
        try await advertiser.stop()
        #expect(advertisingCommands(fake).last == LESetAdvertisingEnable(enable: false).packet)
        #expect(!advertiser.isAdvertising)
    }

    @Test func anExtendedControllerGetsOneSetWithLegacyPDUs() async throws {
        let (fake, _, advertiser) = try await started(extended: true)
        #expect(advertiser.commands == .extended)
        let address = BluetoothAddress("C1:00:00:00:00:01")!
        try await advertiser.start(data: data, scanResponse: response, parameters: AdvertisingParameters(ownAddress: .staticRandom(address), txPower: -4))
        #expect(advertisingCommands(fake) == [
            LESetExtendedAdvertisingParameters(advertisingHandle: 0, eventProperties: [.connectable, .scannable, .legacy], ownAddressType: 1, txPower: -4).packet,
            LESetAdvertisingSetRandomAddress(advertisingHandle: 0, address: address).packet,
            LESetExtendedAdvertisingData(advertisingHandle: 0, data: data.encoded()[...]).packet,
            LESetExtendedScanResponseData(advertisingHandle: 0, data: response.encoded()[...]).packet,
            LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 0)]).packet,
        ])
    }

    @Test func dataPastThePDUIsRefusedBeforeAnyCommand() async throws {
        let (fake, _, advertiser) = try await started(extended: false)
        let long = AdvertisingData(structures: [ADStructure(type: ADType.manufacturerSpecificData, data: Array(repeating: 1, count: 30))])
        await #expect(throws: AdvertisingError.dataTooLong(what: "advertising data", length: 32, maximum: 31)) {
            try await advertiser.start(data: long)
        }
        await #expect(throws: AdvertisingError.notSupported("extended advertising PDUs and PHYs (the controller has legacy advertising only)")) {
            try await advertiser.start(data: data, parameters: AdvertisingParameters(legacyPDUs: false))
        }
        #expect(advertisingCommands(fake).isEmpty)
    }

    @Test func extendedPDUsCarryLongDataInFragments() async throws {
        let (fake, _, advertiser) = try await started(extended: true)
        let long = AdvertisingData(structures: (0..<3).map { _ in ADStructure(type: ADType.manufacturerSpecificData, data: Array(repeating: 7, count: 99)) })
        try await advertiser.start(data: long, parameters: AdvertisingParameters(kind: .nonConnectable, legacyPDUs: false, secondaryPHY: 2))
        let bytes = long.encoded()
        #expect(bytes.count == 303)
        let fragments = advertisingCommands(fake).filter { $0.opcode == LESetExtendedAdvertisingData.opcode }
        #expect(fragments == [LESetExtendedAdvertisingData(advertisingHandle: 0, operation: .firstFragment, data: bytes[0..<251]).packet,
                              LESetExtendedAdvertisingData(advertisingHandle: 0, operation: .lastFragment, data: bytes[251...]).packet])
        #expect(!advertisingCommands(fake).contains { $0.opcode == LESetExtendedScanResponseData.opcode }, "a non-scannable set has no scan response")
    }

    @Test func advertisingResumesWhenTheCentralsLinkEnds() async throws {
        let (fake, controller, advertiser) = try await started(extended: false)
        var connected: [ConnectionHandle] = []
        advertiser.onConnection = { handle, _ in connected.append(handle) }
        try await advertiser.start(data: data, scanResponse: response)
        let central = BluetoothAddress("F0:00:00:00:00:02")!
        fake.deliverEvent(LEConnectionEvent.connectionComplete(status: .success, handle: 0x0040, role: 0x01, peerAddressType: 1, peerAddress: central,
                                                               parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        try await controller.send(ReadBDADDR())
        #expect(connected == [0x0040])
        guard case .stoppedByConnection = advertiser.state else { Issue.record("expected stoppedByConnection, got \(advertiser.state)"); return }
        let enablesBefore = advertisingCommands(fake).filter { $0 == LESetAdvertisingEnable(enable: true).packet }.count
        fake.deliverEvent(.disconnectionComplete(DisconnectionComplete(status: .success, handle: 0x0040, reason: .remoteUserTerminatedConnection)))
        try await controller.send(ReadBDADDR())
        #expect(advertiser.isAdvertising)
        #expect(await eventually { self.advertisingCommands(fake).filter { $0 == LESetAdvertisingEnable(enable: true).packet }.count == enablesBefore + 1 })
        // A link we made as central is not ours to resume for.
        fake.deliverEvent(LEConnectionEvent.connectionComplete(status: .success, handle: 0x0041, role: 0x00, peerAddressType: 1, peerAddress: central,
                                                               parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        try await controller.send(ReadBDADDR())
        #expect(connected == [0x0040])
        #expect(advertiser.isAdvertising)
    }
}
