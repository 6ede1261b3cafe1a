import BluetoothCore
import GAP
import HCI
import HCITestSupport
import Testing

/// The advertiser against the scripted controller: the command set chosen from the
/// supported-commands mask, the commands and their order, data limits, fragments, and
/// advertising resumed after a central's link.
@Suite @BluetoothActor
struct AdvertiserTests {
    static let legacyCommands: [HCIOpcode] = [
        LESetRandomAddress.opcode, LESetAdvertisingParameters.opcode, LESetAdvertisingData.opcode,
        LESetScanResponseData.opcode, LESetAdvertisingEnable.opcode,
    ]
    static let extendedCommands: [HCIOpcode] = [
        LESetAdvertisingSetRandomAddress.opcode, LESetExtendedAdvertisingParameters.opcode,
        LESetExtendedAdvertisingData.opcode, LESetExtendedScanResponseData.opcode,
        LESetExtendedAdvertisingEnable.opcode, LEReadMaximumAdvertisingDataLength.opcode,
    ]
    let data = AdvertisingData(structures: [
        ADStructure(type: ADType.flags, data: [0x06]),
        ADStructure(type: ADType.completeServiceUUIDs16, data: [0x0D, 0x18]),
    ])
    let response = AdvertisingData(structures: [
        ADStructure(type: ADType.completeLocalName, data: Array("Bluejay".utf8))
    ])

    func started(extended: Bool, clock: any Clock<Duration> = ContinuousClock(), address: BluetoothAddress? = nil)
        async throws -> (FakeController, HCIController, Advertiser)
    {
        var script = FakeController.Script()
        if let address { script.address = address }
        script.supported += Self.legacyCommands + (extended ? Self.extendedCommands : [])
        script.leFeatures = extended ? [.encryption, .extendedAdvertising] : [.encryption]
        let fake = FakeController(script)
        let controller = HCIController(transport: fake, clock: clock, configuration: .init(logger: .silent))
        try await controller.start()
        return (fake, controller, Advertiser(controller: controller, logger: .silent))
    }

    /// The commands sent after bring-up.
    func advertisingCommands(_ fake: FakeController) -> [HCICommandPacket] {
        fake.sent.compactMap {
            if case let .command(command) = $0, command.opcode.rawValue >= 0x2005, command.opcode.rawValue <= 0x203D,
                command.opcode != LESetEventMask.opcode
            {
                command
            } else {
                nil
            }
        }
    }

    @Test func aLegacyControllerGetsTheLegacyCommandsInOrder() async throws {
        let (fake, _, advertiser) = try await started(extended: false)
        #expect(advertiser.commands == .legacy)
        try await advertiser.start(data: data, scanResponse: response)
        #expect(
            advertisingCommands(fake) == [
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
        try await advertiser.start(
            data: data, scanResponse: response,
            parameters: AdvertisingParameters(ownAddress: .staticRandom(address), txPower: -4))
        #expect(
            advertisingCommands(fake) == [
                LESetExtendedAdvertisingParameters(
                    advertisingHandle: 0, eventProperties: [.connectable, .scannable, .legacy], ownAddressType: 1,
                    txPower: -4
                ).packet,
                LESetAdvertisingSetRandomAddress(advertisingHandle: 0, address: address).packet,
                LESetExtendedAdvertisingData(advertisingHandle: 0, data: data.encoded()[...]).packet,
                LESetExtendedScanResponseData(advertisingHandle: 0, data: response.encoded()[...]).packet,
                LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 0)]).packet,
            ])
    }

    @Test func dataPastThePDUIsRefusedBeforeAnyCommand() async throws {
        let (fake, _, advertiser) = try await started(extended: false)
        let long = AdvertisingData(structures: [
            ADStructure(type: ADType.manufacturerSpecificData, data: Array(repeating: 1, count: 30))
        ])
        await #expect(throws: AdvertisingError.dataTooLong(what: "advertising data", length: 32, maximum: 31)) {
            try await advertiser.start(data: long)
        }
        await #expect(
            throws: AdvertisingError.notSupported(
                "extended advertising PDUs and PHYs (the controller has legacy advertising only)")
        ) {
            try await advertiser.start(data: data, parameters: AdvertisingParameters(legacyPDUs: false))
        }
        #expect(advertisingCommands(fake).isEmpty)
    }

    @Test func extendedPDUsCarryLongDataInFragments() async throws {
        let (fake, _, advertiser) = try await started(extended: true)
        let long = AdvertisingData(
            structures: (0..<3).map { _ in
                ADStructure(type: ADType.manufacturerSpecificData, data: Array(repeating: 7, count: 99))
            })
        try await advertiser.start(
            data: long, parameters: AdvertisingParameters(kind: .nonConnectable, legacyPDUs: false, secondaryPHY: 2))
        let bytes = long.encoded()
        #expect(bytes.count == 303)
        let fragments = advertisingCommands(fake).filter { $0.opcode == LESetExtendedAdvertisingData.opcode }
        #expect(
            fragments == [
                LESetExtendedAdvertisingData(advertisingHandle: 0, operation: .firstFragment, data: bytes[0..<251])
                    .packet,
                LESetExtendedAdvertisingData(advertisingHandle: 0, operation: .lastFragment, data: bytes[251...])
                    .packet,
            ])
        #expect(
            !advertisingCommands(fake).contains { $0.opcode == LESetExtendedScanResponseData.opcode },
            "a non-scannable set has no scan response")
    }

    @Test func advertisingResumesWhenTheCentralsLinkEnds() async throws {
        let (fake, controller, advertiser) = try await started(extended: false)
        var connected: [ConnectionHandle] = []
        advertiser.onConnection = { handle, _ in connected.append(handle) }
        try await advertiser.start(data: data, scanResponse: response)
        let central = BluetoothAddress("F0:00:00:00:00:02")!
        fake.deliverEvent(
            LEConnectionEvent.connectionComplete(
                status: .success, handle: 0x0040, role: 0x01, peerAddressType: 1, peerAddress: central,
                parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        try await controller.send(ReadBDADDR())
        #expect(connected == [0x0040])
        guard case .stoppedByConnection = advertiser.state else {
            Issue.record("expected stoppedByConnection, got \(advertiser.state)"); return
        }
        let enablesBefore = advertisingCommands(fake).filter { $0 == LESetAdvertisingEnable(enable: true).packet }.count
        fake.deliverEvent(
            .disconnectionComplete(
                DisconnectionComplete(status: .success, handle: 0x0040, reason: .remoteUserTerminatedConnection)))
        try await controller.send(ReadBDADDR())
        #expect(advertiser.isAdvertising)
        #expect(
            await eventually {
                self.advertisingCommands(fake).filter { $0 == LESetAdvertisingEnable(enable: true).packet }.count
                    == enablesBefore + 1
            })
        // A link we made as central is not ours to resume for.
        fake.deliverEvent(
            LEConnectionEvent.connectionComplete(
                status: .success, handle: 0x0041, role: 0x00, peerAddressType: 1, peerAddress: central,
                parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        try await controller.send(ReadBDADDR())
        #expect(connected == [0x0040])
        #expect(advertiser.isAdvertising)
    }

    // MARK: - Random addresses

    /// Stand-in resolvable private addresses (top bits 0b01), numbered; the SMP tests check
    /// real ones against ah.
    static func privateAddress(_ number: UInt8) -> BluetoothAddress {
        BluetoothAddress(littleEndianBytes: [number, 0, 0, 0x11, 0x22, 0x40 | number])
    }

    /// Advertising from a resolvable private address: it is set before the set runs (LE Set
    /// Random Address for legacy commands, LE Set Advertising Set Random Address for a set)
    /// with Own_Address_Type 0x01. When the renewal time comes on the controller's clock,
    /// and not before, the set pauses for a new address and runs on with the same data; a
    /// central's link keeps the address it connected to; while the link stopped
    /// advertising a renewal only sets the address, and advertising resumes from it.
    @Test(arguments: [false, true])
    func aResolvablePrivateAddressIsRenewedOnTheTimer(extended: Bool) async throws {
        let clock = ManualClock()
        let (fake, controller, advertiser) = try await started(extended: extended, clock: clock)
        var made: UInt8 = 0, renewed: [BluetoothAddress] = []
        advertiser.privateAddressSource = {
            made += 1
            return Self.privateAddress(made)
        }
        advertiser.onAddressRenewed = { renewed.append($0) }
        func setAddress(_ address: BluetoothAddress) -> HCICommandPacket {
            extended
                ? LESetAdvertisingSetRandomAddress(advertisingHandle: 0, address: address).packet
                : LESetRandomAddress(address: address).packet
        }
        let enable =
            extended
            ? LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 0)]).packet
            : LESetAdvertisingEnable(enable: true).packet
        let disable =
            extended
            ? LESetExtendedAdvertisingEnable(enable: false, sets: [.init(advertisingHandle: 0)]).packet
            : LESetAdvertisingEnable(enable: false).packet

        try await advertiser.start(
            data: data, scanResponse: response,
            parameters: AdvertisingParameters(ownAddress: .resolvablePrivate(renewal: .seconds(60))))
        let first = Self.privateAddress(1)
        #expect(advertiser.randomAddress == first)
        let startCommands = advertisingCommands(fake)
        #expect(startCommands.contains(setAddress(first)))
        if extended {
            #expect(
                startCommands.first
                    == LESetExtendedAdvertisingParameters(
                        advertisingHandle: 0, eventProperties: [.connectable, .scannable, .legacy],
                        ownAddressType: 1
                    ).packet)
        } else {
            let addressThenParameters: ArraySlice<HCICommandPacket> = [
                setAddress(first), LESetAdvertisingParameters(ownAddressType: 1).packet,
            ]
            #expect(startCommands.prefix(2) == addressThenParameters, "the address before the parameters")
        }
        #expect(startCommands.last == enable)

        // Not before its time.
        _ = await eventually { clock.sleeperCount > 0 }
        clock.advance(by: .seconds(59))
        try await controller.send(ReadBDADDR())
        #expect(advertisingCommands(fake).count == startCommands.count && renewed.isEmpty)
        clock.advance(by: .seconds(1))
        let second = Self.privateAddress(2)
        #expect(await eventually { renewed == [second] })
        let renewal: [HCICommandPacket] = [disable, setAddress(second), enable]
        #expect(Array(advertisingCommands(fake).dropFirst(startCommands.count)) == renewal)
        #expect(advertiser.randomAddress == second && advertiser.isAdvertising)

        // A central connects to the address in use.
        let central = BluetoothAddress("F0:00:00:00:00:02")!
        fake.deliverEvent(
            LEConnectionEvent.connectionComplete(
                status: .success, handle: 0x0040, role: 0x01, peerAddressType: 1, peerAddress: central,
                parameters: LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)))
        try await controller.send(ReadBDADDR())
        let local: [Bool]? = advertiser.localAddress(of: 0x0040).map {
            (local: (type: AddressType, address: BluetoothAddress)) -> [Bool] in
            [local.type == .random, local.address == second]
        }
        #expect(local == [true, true])
        let beforeRenewal = advertisingCommands(fake).count
        try await advertiser.renewPrivateAddress()
        let third = Self.privateAddress(3)
        let addressOnly: [HCICommandPacket] = [setAddress(third)]
        #expect(
            Array(advertisingCommands(fake).dropFirst(beforeRenewal)) == addressOnly,
            "stopped by the link: the address only")
        #expect(
            advertiser.localAddress(of: 0x0040)?.address == second,
            "the link keeps the address the central connected to")
        guard case .stoppedByConnection = advertiser.state else {
            Issue.record("expected stoppedByConnection, got \(advertiser.state)"); return
        }
        fake.deliverEvent(
            .disconnectionComplete(
                DisconnectionComplete(status: .success, handle: 0x0040, reason: .remoteUserTerminatedConnection)))
        #expect(await eventually { self.advertisingCommands(fake).last == enable })
        #expect(
            advertiser.randomAddress == third && advertiser.isAdvertising && advertiser.localAddress(of: 0x0040) == nil)

        // Stopped: the timer stops with it.
        try await advertiser.stop()
        let afterStop = advertisingCommands(fake).count
        clock.advance(by: .seconds(600))
        try await controller.send(ReadBDADDR())
        #expect(advertisingCommands(fake).count == afterStop && made == 3)
    }

    /// A controller that made our resolvable private address itself reports it in LE
    /// Enhanced Connection Complete (Local_Resolvable_Private_Address): that is our address
    /// on the link. Without one, a public advertiser's links are at the public address.
    @Test func theControllersLocalPrivateAddressNamesOurEndOfTheLink() async throws {
        let (fake, controller, advertiser) = try await started(extended: true)
        try await advertiser.start(data: data)
        let central = BluetoothAddress("F0:00:00:00:00:02")!, local = Self.privateAddress(9)
        let parameters = LEConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 400)
        fake.deliverEvent(
            .leMeta(
                LEEnhancedConnectionComplete(
                    status: .success, handle: 0x0041, role: 0x01, peerAddressType: 1, peerAddress: central,
                    localResolvablePrivateAddress: local,
                    peerResolvablePrivateAddress: BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]),
                    parameters: parameters, centralClockAccuracy: 0
                ).meta))
        try await controller.send(ReadBDADDR())
        #expect(advertiser.localAddress(of: 0x0041).map { [$0.type == .random, $0.address == local] } == [true, true])
        fake.deliverEvent(
            LEConnectionEvent.connectionComplete(
                status: .success, handle: 0x0042, role: 0x01, peerAddressType: 1, peerAddress: central,
                parameters: parameters))
        try await controller.send(ReadBDADDR())
        #expect(
            advertiser.localAddress(of: 0x0042).map { [$0.type == .public, $0.address == controller.info?.address] }
                == [true, true])
    }

    /// What cannot be advertised from is refused before any command: a resolvable private
    /// address with no IRK to make it, a "static" address whose bits are not a static
    /// address's; and a public advertiser has no private address to renew.
    @Test func unusableAddressesAreRefused() async throws {
        let (fake, _, advertiser) = try await started(extended: false)
        await #expect(
            throws: AdvertisingError.invalidParameters(
                "a resolvable private address needs an IRK (no privateAddressSource)")
        ) {
            try await advertiser.start(data: data, parameters: AdvertisingParameters(ownAddress: .resolvablePrivate()))
        }
        let notStatic = BluetoothAddress("40:00:00:00:00:01")!
        await #expect(
            throws: AdvertisingError.invalidParameters(
                "40:00:00:00:00:01 is not a static random address (top bits 0b11, the rest neither all 0 nor all 1)")
        ) {
            try await advertiser.start(
                data: data, parameters: AdvertisingParameters(ownAddress: .staticRandom(notStatic)))
        }
        #expect(advertisingCommands(fake).isEmpty)
        try await advertiser.start(data: data)
        await #expect(throws: AdvertisingError.invalidParameters("not advertising from a resolvable private address")) {
            try await advertiser.renewPrivateAddress()
        }
    }

    /// A controller with no public address (Read BD_ADDR gives all zeros) cannot advertise
    /// from it: refused before any command; a static random address works.
    @Test func noPublicAddressToAdvertiseFrom() async throws {
        let (fake, _, advertiser) = try await started(
            extended: false, address: BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]))
        await #expect(throws: AdvertisingError.self) { try await advertiser.start(data: data) }
        #expect(advertisingCommands(fake).isEmpty)
        try await advertiser.start(
            data: data,
            parameters: AdvertisingParameters(ownAddress: .staticRandom(BluetoothAddress("C1:23:45:67:89:AB")!)))
        #expect(!advertisingCommands(fake).isEmpty)
    }
}
