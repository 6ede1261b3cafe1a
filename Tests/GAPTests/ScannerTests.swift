import BluetoothCore
import GAP
import HCI
import HCITestSupport
import Testing

/// The scanner's host-side logic against the scripted controller: which commands it
/// chooses, scan-response merging, duplicates, service filtering, extended fragments.
@Suite @BluetoothActor
struct ScannerTests {
    let peer = BluetoothAddress("F0:0D:B1:E7:00:01")!
    let other = BluetoothAddress("C0:00:00:00:00:02")!
    let advData: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0x0D, 0x18]
    let responseData: [UInt8] = [0x04, 0x09, 0x48, 0x52, 0x4D]

    func report(
        _ address: BluetoothAddress, response: Bool = false, scannable: Bool = true, data: [UInt8], status: UInt8 = 0
    ) -> AdvertisingReport {
        AdvertisingReport(
            connectable: !response, scannable: scannable, directed: false, isScanResponse: response,
            legacy: status == 0,
            addressType: .random, address: address, rssi: response ? -55 : -50, dataStatus: status, data: data)
    }

    func started(_ script: FakeController.Script = .init()) async throws -> (FakeController, HCIController) {
        let fake = FakeController(script)
        let controller = HCIController(transport: fake, configuration: .init(logger: .silent))
        try await controller.start()
        return (fake, controller)
    }

    /// Delivers reports and waits until the controller has handled them (a command round trip).
    func deliver(
        _ fake: FakeController, _ controller: HCIController, _ reports: [AdvertisingReport], extended: Bool = false
    ) async throws {
        fake.deliverEvent(.leMeta(AdvertisingReport.encode(reports, extended: extended)))
        try await controller.send(ReadBDADDR())
    }

    @Test func legacyActiveScanMergesTheScanResponseOnce() async throws {
        let (fake, controller) = try await started()
        let scanner = Scanner(controller: controller, logger: .silent)
        var found: [Discovery] = []
        try await scanner.start { found.append($0) }
        #expect(
            fake.sent.contains(.command(LESetScanParameters(scanType: .active, interval: 0x60, window: 0x30).packet)))
        #expect(fake.sent.contains(.command(LESetScanEnable(enable: true, filterDuplicates: true).packet)))
        try await deliver(fake, controller, [report(peer, data: advData)])
        #expect(found.isEmpty, "a scannable advertisement waits for its scan response")
        try await deliver(fake, controller, [report(peer, response: true, data: responseData)])
        try #require(found.count == 1)
        #expect(found[0].advertisement.localName == "HRM")
        #expect(found[0].advertisement.serviceUUIDs == [BluetoothUUID(UInt16(0x180D))])
        #expect(found[0].hasScanResponse)
        #expect(found[0].connectable)
        #expect(found[0].rssi == -55)
        // The same peripheral again: no second discovery.
        try await deliver(
            fake, controller, [report(peer, data: advData), report(peer, response: true, data: responseData)])
        #expect(found.count == 1)
        try await scanner.stop()
        #expect(fake.sentCommands.last == LESetScanEnable.opcode)
        #expect(controller.eventObserverCount == 0)
        controller.close()
    }

    @Test func passiveScanReportsAtOnceAndDuplicatesWhenAsked() async throws {
        let (fake, controller) = try await started()
        let scanner = Scanner(controller: controller, logger: .silent)
        var found: [Discovery] = []
        try await scanner.start(ScanOptions(active: false, allowDuplicates: true)) { found.append($0) }
        #expect(fake.sent.contains(.command(LESetScanEnable(enable: true, filterDuplicates: false).packet)))
        try await deliver(
            fake, controller,
            [report(peer, data: advData), report(peer, data: advData), report(other, scannable: false, data: [])])
        #expect(found.map(\.address) == [peer, peer, other])
        #expect(found.allSatisfy { !$0.hasScanResponse })
        try await scanner.stop()
        controller.close()
    }

    @Test func serviceFilterAndStopFlushesWaitingAdvertisements() async throws {
        let (fake, controller) = try await started()
        let scanner = Scanner(controller: controller, logger: .silent)
        var found: [Discovery] = []
        try await scanner.start(ScanOptions(services: [BluetoothUUID(UInt16(0x180D))])) { found.append($0) }
        // Not advertising 180D: never reported. Advertising it but no scan response yet: held.
        try await deliver(
            fake, controller,
            [report(other, scannable: false, data: [0x03, 0x03, 0x0F, 0x18]), report(peer, data: advData)])
        #expect(found.isEmpty)
        try await scanner.stop()
        #expect(found.map(\.address) == [peer], "stop reports what was still waiting for a scan response")
        controller.close()
    }

    @Test func extendedScanningJoinsFragmentedData() async throws {
        var script = FakeController.Script()
        script.supported += [LESetExtendedScanParameters.opcode, LESetExtendedScanEnable.opcode]
        let (fake, controller) = try await started(script)
        let scanner = Scanner(controller: controller, logger: .silent)
        var found: [Discovery] = []
        try await scanner.start(ScanOptions(active: false)) { found.append($0) }
        #expect(fake.sentCommands.contains(LESetExtendedScanParameters.opcode))
        #expect(!fake.sentCommands.contains(LESetScanParameters.opcode))
        let name = Array("A long extended name".utf8)
        let whole: [UInt8] = [UInt8(name.count + 1), 0x09] + name
        try await deliver(
            fake, controller, [report(peer, scannable: false, data: Array(whole.prefix(8)), status: 1)], extended: true)
        #expect(found.isEmpty)
        try await deliver(
            fake, controller, [report(peer, scannable: false, data: Array(whole.dropFirst(8)), status: 0)],
            extended: true)
        #expect(found.first?.advertisement.localName == "A long extended name")
        try await scanner.stop()
        #expect(fake.sentCommands.last == LESetExtendedScanEnable.opcode)
        controller.close()
    }

    @Test func malformedReportsLoseOnlyThemselves() async throws {
        let (fake, controller) = try await started()
        let scanner = Scanner(controller: controller, logger: .silent)
        var found: [Discovery] = []
        try await scanner.start(ScanOptions(active: false)) { found.append($0) }
        fake.deliverEvent(.leMeta(LEMetaEvent(subeventCode: 0x02, parameters: [0x01, 0x00, 0x01])))  // truncated
        try await deliver(
            fake, controller, [report(peer, scannable: false, data: [0x02, 0x01, 0x06, 0x09, 0x09, 0x41])])
        #expect(found.count == 1)
        #expect(found.first?.advertisement.flags == 0x06)
        #expect(found.first?.advertisement.problem == .runsPastEnd(offset: 3, length: 9, available: 2))
        try await scanner.stop()
        controller.close()
    }
}
