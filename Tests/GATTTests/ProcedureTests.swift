import ATT
import BluetoothCore
import GATT
import HCI
import HCITestSupport
import Synchronization
import Testing

/// Every GATT client procedure against scripted PDU sequences, byte for byte.
@Suite @BluetoothActor
struct ProcedureTests {
    @Test func discoverAllPrimaryServicesEndsOnAttributeNotFound() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("10 01 00 FF FF 00 28", "11 06 01 00 07 00 00 18 08 00 0B 00 01 18")
        server.expect("10 0C 00 FF FF 00 28", "11 14 0C 00 20 00 00 0A 1B 0C 2D 6F 5E 8A 7A 4C 3B 9D 02 00 E7 B1")
        server.expect("10 21 00 FF FF 00 28", "01 10 21 00 0A")
        let services = try await client.discoverPrimaryServices()
        #expect(
            services.map(\.uuid) == [
                BluetoothUUID(UInt16(0x1800)), BluetoothUUID(UInt16(0x1801)),
                BluetoothUUID("B1E70002-9D3B-4C7A-8A5E-6F2D0C1B0A00")!,
            ])
        #expect(services.map(\.handles) == [1...7, 8...11, 12...32])
        server.verify()
    }

    @Test func discoveryEndsAtHandleFFFFWithoutAnotherRequest() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("10 01 00 FF FF 00 28", "11 06 01 00 FF FF 0D 18")
        #expect(try await client.discoverPrimaryServices().map(\.endGroupHandle) == [0xFFFF])
        server.verify()
    }

    @Test func anErrorInTheMiddleOfADiscoveryEndsItWithThatError() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("10 01 00 FF FF 00 28", "11 06 01 00 07 00 00 18")
        server.expect("10 08 00 FF FF 00 28", "01 10 08 00 05")
        do {
            _ = try await client.discoverPrimaryServices()
            Issue.record("expected insufficientAuthentication")
        } catch {
            #expect(error.code == .insufficientAuthentication)
        }
        server.verify()
    }

    @Test func handlesThatGoBackwardsAreAnInvalidResponse() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("10 01 00 FF FF 00 28", "11 06 05 00 03 00 00 18")
        await #expect(throws: GATTError.self) { try await client.discoverPrimaryServices() }
    }

    @Test func discoverPrimaryServiceByUUID() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("06 01 00 FF FF 00 28 0D 18", "07 10 00 18 00")
        server.expect("06 19 00 FF FF 00 28 0D 18", "01 06 19 00 0A")
        let services = try await client.discoverPrimaryServices(uuid: BluetoothUUID(UInt16(0x180D)))
        #expect(services == [Service(uuid: BluetoothUUID(UInt16(0x180D)), handle: 0x10, endGroupHandle: 0x18)])
        server.verify()
    }

    @Test func discoverAllCharacteristicsOfAServiceComputesTheirEnds() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        let service = Service(uuid: BluetoothUUID(UInt16(0x180D)), handle: 0x10, endGroupHandle: 0x18)
        server.expect("08 10 00 18 00 03 28", "09 07 11 00 10 12 00 37 2A 14 00 0A 15 00 38 2A")
        server.expect("08 15 00 18 00 03 28", "01 08 15 00 0A")
        let characteristics = try await client.discoverCharacteristics(in: service)
        #expect(
            characteristics == [
                Characteristic(
                    uuid: BluetoothUUID(UInt16(0x2A37)), declarationHandle: 0x11, properties: [.notify],
                    valueHandle: 0x12, endHandle: 0x13),
                Characteristic(
                    uuid: BluetoothUUID(UInt16(0x2A38)), declarationHandle: 0x14, properties: [.read, .write],
                    valueHandle: 0x15, endHandle: 0x18),
            ])
        server.verify()
    }

    @Test func discoverCharacteristicsByUUIDKeepsTheMatchingOnes() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        let service = Service(uuid: BluetoothUUID(UInt16(0x180D)), handle: 0x10, endGroupHandle: 0x15)
        server.expect("08 10 00 15 00 03 28", "09 07 11 00 10 12 00 37 2A 14 00 0A 15 00 38 2A")
        server.expect("08 15 00 15 00 03 28", "01 08 15 00 0A")
        let found = try await client.discoverCharacteristics(in: service, uuid: BluetoothUUID(UInt16(0x2A38)))
        #expect(found.map(\.valueHandle) == [0x15])
        server.verify()
    }

    @Test func discoverDescriptorsWithFindInformation() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        let characteristic = Characteristic(
            uuid: BluetoothUUID(UInt16(0x2A37)), declarationHandle: 0x11, properties: [.notify],
            valueHandle: 0x12, endHandle: 0x14)
        server.expect("04 13 00 14 00", "05 01 13 00 02 29")
        server.expect("04 14 00 14 00", "05 01 14 00 01 29")
        let descriptors = try await client.discoverDescriptors(of: characteristic)
        #expect(descriptors.map(\.handle) == [0x13, 0x14])
        #expect(descriptors.first?.uuid == .clientCharacteristicConfiguration)
        server.verify()
        // A characteristic with no room for descriptors costs no request.
        #expect(
            try await client.discoverDescriptors(
                of: Characteristic(
                    uuid: BluetoothUUID(UInt16(0x2A38)), declarationHandle: 0x15,
                    properties: [.read], valueHandle: 0x16, endHandle: 0x16)
            ).isEmpty)
    }

    /// The include that leaves its 128-bit UUID out is followed at once by the Read Request
    /// for it, before the sweep goes on (the conformance tests' order).
    @Test func findIncludedServicesReadsA128BitUUIDAtOnce() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        let service = Service(uuid: BluetoothUUID(UInt16(0x180D)), handle: 0x10, endGroupHandle: 0x20)
        server.expect("08 10 00 20 00 02 28", "09 08 11 00 30 00 35 00 0F 18")
        server.expect("08 12 00 20 00 02 28", "09 06 12 00 40 00 45 00")
        server.expect("0A 40 00", "0B 00 0A 1B 0C 2D 6F 5E 8A 7A 4C 3B 9D 02 00 E7 B1")
        server.expect("08 13 00 20 00 02 28", "01 08 13 00 0A")
        let includes = try await client.findIncludedServices(in: service)
        #expect(
            includes.map(\.service.uuid) == [
                BluetoothUUID(UInt16(0x180F)), BluetoothUUID("B1E70002-9D3B-4C7A-8A5E-6F2D0C1B0A00")!,
            ])
        #expect(includes.map(\.service.handles) == [0x30...0x35, 0x40...0x45])
        server.verify()
    }

    @Test func discoverSecondaryServicesWithReadByGroupType() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("10 01 00 FF FF 01 28", "11 06 05 00 07 00 0F 18")
        server.expect("10 08 00 FF FF 01 28", "01 10 08 00 0A")
        let services = try await client.discoverSecondaryServices()
        #expect(
            services == [
                Service(uuid: BluetoothUUID(UInt16(0x180F)), handle: 0x05, endGroupHandle: 0x07, isPrimary: false)
            ])
        server.verify()
        // A server that refuses the group type has none to show this way.
        server.expect("10 01 00 FF FF 01 28", "01 10 01 00 10")
        #expect(try await client.discoverSecondaryServices().isEmpty)
        server.verify()
    }

    /// A whole-database discovery in the conformance order — primary services, secondary
    /// services, every service's includes, then service by service its characteristics
    /// and descriptors — finds the secondary service the primary includes, and the lazy
    /// lookups resolve it afterwards without a request.
    @Test func fullDiscoveryFindsASecondaryServiceInTheConformanceOrder() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        Self.expectFullDiscoveryWithASecondaryService(server, sweepingSecondary: true)
        let database = try await client.discoverAll()
        server.verify()
        let battery = Service(uuid: BluetoothUUID(UInt16(0x180F)), handle: 0x05, endGroupHandle: 0x07, isPrimary: false)
        #expect(
            database.services == [
                Service(uuid: BluetoothUUID(UInt16(0x180D)), handle: 0x01, endGroupHandle: 0x04), battery,
            ])
        #expect(database.includes[0x01]?.map(\.service) == [battery])
        #expect(database.isFullyDiscovered)
        #expect(try await client.service(BluetoothUUID(UInt16(0x180F))) == battery)
        #expect(
            try await client.characteristic(BluetoothUUID(UInt16(0x2A19)), in: BluetoothUUID(UInt16(0x180F)))
                .valueHandle == 0x07)
        server.verify()
    }

    /// A secondary service the sweep does not show (the server refuses the group type) is
    /// still found through the include, and walked like any other.
    @Test func fullDiscoveryReachesASecondaryServiceThroughItsInclude() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        Self.expectFullDiscoveryWithASecondaryService(server, sweepingSecondary: false)
        let database = try await client.discoverAll()
        server.verify()
        #expect(database.services.map(\.isPrimary) == [true, false])
        #expect(database.characteristics[0x05]?.map(\.valueHandle) == [0x07])
    }

    /// A whole-database discovery of 0x0001 Heart Rate (primary: 0x0002 an include of
    /// 0x0005…0x0007, 0x0003/0x0004 2A37) and 0x0005 Battery (secondary: 0x0006/0x0007
    /// 2A19), request by request; the server answers the secondary sweep, or refuses its
    /// group type.
    static func expectFullDiscoveryWithASecondaryService(_ server: ScriptedServer, sweepingSecondary: Bool) {
        server.expect("10 01 00 FF FF 00 28", "11 06 01 00 04 00 0D 18")
        server.expect("10 05 00 FF FF 00 28", "01 10 05 00 0A")
        if sweepingSecondary {
            server.expect("10 01 00 FF FF 01 28", "11 06 05 00 07 00 0F 18")
            server.expect("10 08 00 FF FF 01 28", "01 10 08 00 0A")
        } else {
            server.expect("10 01 00 FF FF 01 28", "01 10 01 00 10")
        }
        server.expect("08 01 00 04 00 02 28", "09 08 02 00 05 00 07 00 0F 18")
        server.expect("08 03 00 04 00 02 28", "01 08 03 00 0A")
        server.expect("08 05 00 07 00 02 28", "01 08 05 00 0A")
        server.expect("08 01 00 04 00 03 28", "09 07 03 00 10 04 00 37 2A")
        server.expect("08 04 00 04 00 03 28", "01 08 04 00 0A")
        server.expect("08 05 00 07 00 03 28", "09 07 06 00 02 07 00 19 2A")
        server.expect("08 07 00 07 00 03 28", "01 08 07 00 0A")
    }

    /// Asked for a service that is no primary one, the lazy lookup tries the secondary ones.
    @Test func aLazyLookupFindsASecondaryService() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("06 01 00 FF FF 00 28 0F 18", "01 06 01 00 0A")
        server.expect("10 01 00 FF FF 01 28", "11 06 05 00 07 00 0F 18")
        server.expect("10 08 00 FF FF 01 28", "01 10 08 00 0A")
        #expect(try await client.service(BluetoothUUID(UInt16(0x180F))).isPrimary == false)
        server.verify()
    }

    @Test func readLongWithAnMTUOf23() async throws {
        let server = ScriptedServer(mtu: 23)
        let client = GATTClient(bearer: server.bearer)
        let part1 = (0..<22).map { UInt8($0) }, part2 = (22..<44).map { UInt8($0) }, part3 = (44..<49).map { UInt8($0) }
        server.expect("0A 20 00", "0B" + part1.hexString())
        server.expect("0C 20 00 16 00", "0D" + part2.hexString())
        server.expect("0C 20 00 2C 00", "0D" + part3.hexString())
        #expect(try await client.readLong(0x20) == part1 + part2 + part3)
        server.verify()
    }

    @Test func readLongWithAnExactMultipleOfMTUMinus1() async throws {
        let server = ScriptedServer()
        try await server.exchangeMTU(server: 247)
        let client = GATTClient(bearer: server.bearer)
        let value = (0..<492).map { UInt8(truncatingIfNeeded: $0 * 7) }
        server.expect("0A 20 00", "0B" + value[..<246].hexString())
        server.expect("0C 20 00 F6 00", "0D" + value[246...].hexString())
        server.expect("0C 20 00 EC 01", "01 0C 20 00 0B")
        #expect(try await client.readLong(0x20) == value)
        server.verify()
    }

    /// Past the specification's 512 octets: the read follows the value to its end, warning
    /// once per value handle.
    @Test func readLongPast512Octets() async throws {
        let warnings = Mutex<[String]>([])
        let server = ScriptedServer(
            logger: HCILogger(level: .warning) { _, line in warnings.withLock { $0.append(line) } })
        try await server.exchangeMTU(server: 247)
        let client = GATTClient(bearer: server.bearer)
        let value = (0..<600).map { UInt8(truncatingIfNeeded: $0 * 3) }
        for _ in 0..<2 {
            server.expect("0A 20 00", "0B" + value[..<246].hexString())
            server.expect("0C 20 00 F6 00", "0D" + value[246..<492].hexString())
            server.expect("0C 20 00 EC 01", "0D" + value[492...].hexString())
            #expect(try await client.readLong(0x20) == value)
        }
        server.verify()
        #expect(
            warnings.withLock { $0 } == [
                "the value at 0x0020 runs past the specification's 512 octets; reading on (up to 65536)"
            ])
    }

    /// Past ``GATTClient/maximumValueLength`` the read fails by name, having asked for no more
    /// than one part beyond it.
    @Test func readLongStopsAtItsLimit() async throws {
        let server = ScriptedServer()
        try await server.exchangeMTU(server: 247)
        let client = GATTClient(bearer: server.bearer)
        client.maximumValueLength = 600
        let part = [UInt8](repeating: 0xAB, count: 246)
        server.expect("0A 20 00", "0B" + part.hexString())
        server.expect("0C 20 00 F6 00", "0D" + part.hexString())
        server.expect("0C 20 00 EC 01", "0D" + part.hexString())
        await #expect(throws: GATTError.valueLengthLimitExceeded(handle: 0x20, limit: 600)) {
            try await client.readLong(0x20)
        }
        server.verify()
        // The limit never goes below the specification's 512.
        client.maximumValueLength = 100
        #expect(client.maximumValueLength == 512)
    }

    /// A server that answers the offset at the value's end with Invalid Offset (instead of an
    /// empty part) has ended the value, as BlueZ takes it.
    @Test func readLongEndingInInvalidOffset() async throws {
        let server = ScriptedServer(mtu: 23)
        let client = GATTClient(bearer: server.bearer)
        let value = (0..<44).map { UInt8($0) }
        server.expect("0A 20 00", "0B" + value[..<22].hexString())
        server.expect("0C 20 00 16 00", "0D" + value[22...].hexString())
        server.expect("0C 20 00 2C 00", "01 0C 20 00 07")
        #expect(try await client.readLong(0x20) == value)
        // At the first Read Blob, Invalid Offset is the server's answer, not an end.
        server.expect("0C 20 00 64 00", "01 0C 20 00 07")
        await #expect(throws: GATTError.self) { try await client.readLong(0x20, offset: 100) }
        server.verify()
    }

    /// A range a server must refuse still goes out as given, and its answer is thrown.
    @Test func proceduresSendTheRangeTheyAreGiven() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("04 10 00 05 00", "01 04 10 00 01")
        await #expect(throws: GATTError.self) { try await client.discoverDescriptors(from: 0x10, to: 0x05) }
        server.expect("08 00 00 FF FF 29 2A", "01 08 00 00 01")
        await #expect(throws: GATTError.self) {
            try await client.read(uuid: BluetoothUUID(UInt16(0x2A29)), from: 0, to: 0xFFFF)
        }
        server.expect("08 30 00 20 00 03 28", "01 08 30 00 01")
        let backwards = Service(uuid: BluetoothUUID(UInt16(0)), handle: 0x30, endGroupHandle: 0x20)
        await #expect(throws: GATTError.self) { try await client.discoverCharacteristics(in: backwards) }
        server.verify()
    }

    /// Two long writes asked for at once share the server's one prepare queue: the client
    /// runs them one after the other (prepare, execute, prepare, execute), never interleaved,
    /// whatever queue the caller has.
    @Test func longWritesTakeTurnsOnThePrepareQueue() async throws {
        let server = ScriptedServer(mtu: 23)
        let client = GATTClient(bearer: server.bearer)
        let first = (0..<30).map { UInt8($0) }, second = (100..<130).map { UInt8($0) }
        server.expect("16 20 00 00 00" + first[..<18].hexString(), "17 20 00 00 00" + first[..<18].hexString())
        server.expect("16 20 00 12 00" + first[18...].hexString(), "17 20 00 12 00" + first[18...].hexString())
        server.expect("18 01", "19")
        server.expect("16 30 00 00 00" + second[..<18].hexString(), "17 30 00 00 00" + second[..<18].hexString())
        server.expect("16 30 00 12 00" + second[18...].hexString(), "17 30 00 12 00" + second[18...].hexString())
        server.expect("18 01", "19")
        // Asked in this order on the stack's actor (the script expects the first one first):
        // child tasks of `async let` start on the global executor, in either order under load.
        let one = Task { @BluetoothActor in try await client.writeLong(0x20, first) }
        let two = Task { @BluetoothActor in try await client.reliableWrite([HandleValue(handle: 0x30, value: second)]) }
        try await one.value
        try await two.value
        server.verify()
    }

    /// A server's responses with octets past their format (a newer server's fields) are
    /// accepted: the request completes, the extra octets are ignored, the link stays.
    @Test func responsesWithExtraOctetsAreAccepted() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("02 05 02", "03 F7 00 EE")
        #expect(try await client.exchangeMTU() == 247)
        server.expect("12 15 00 01", "13 EE EE")
        try await client.write(0x15, [0x01])
        server.expect("0A 16 00", "01 0A 16 00 0F EE")
        await #expect(throws: GATTError.self) { try await client.read(0x16) }
        server.expect("0A 16 00", "0B 42")
        #expect(try await client.read(0x16) == [0x42])
        #expect(server.bearer.isOpen)
        #expect(server.fatalErrors.isEmpty)
        server.verify()
    }

    @Test func readMultipleAndVariableAndByUUID() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("0E 03 00 05 00", "0F 01 02 03")
        #expect(try await client.readMultiple([3, 5]) == [1, 2, 3])
        server.expect("20 03 00 05 00", "21 01 00 AA 02 00 BB CC")
        #expect(try await client.readMultipleVariable([3, 5]) == [[0xAA], [0xBB, 0xCC]])
        server.expect("08 01 00 FF FF 19 2A", "09 03 2A 00 64")
        server.expect("08 2B 00 FF FF 19 2A", "01 08 2B 00 0A")
        #expect(
            try await client.read(uuid: BluetoothUUID(UInt16(0x2A19))) == [HandleValue(handle: 0x2A, value: [0x64])])
        server.verify()
    }

    @Test func writeAndWriteWithoutResponse() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("12 15 00 01 02", "13")
        try await client.write(0x15, [1, 2])
        try client.writeWithoutResponse(0x26, [9])
        #expect(server.sent.last == bytes("52 26 00 09"))
        #expect(throws: GATTError.valueTooLong(length: 21, maximum: 20)) {
            try client.writeWithoutResponse(0x26, Array(repeating: 0, count: 21))
        }
        server.verify()
    }

    @Test func longWriteInPartsOfMTUMinus5ThenExecute() async throws {
        let server = ScriptedServer(mtu: 23)
        let client = GATTClient(bearer: server.bearer)
        let value = (0..<40).map { UInt8($0) }
        for (offset, part) in [(0, value[0..<18]), (18, value[18..<36]), (36, value[36..<40])] {
            let request = "16 20 00 " + [UInt8(offset), 0].hexString() + Array(part).hexString()
            server.expect(request, "17" + request.dropFirst(2))
        }
        server.expect("18 01", "19")
        try await client.writeLong(0x20, value)
        server.verify()
    }

    @Test func aRefusedLongWriteCancelsTheQueue() async throws {
        let server = ScriptedServer(mtu: 23)
        let client = GATTClient(bearer: server.bearer)
        server.expect("16 20 00 00 00 01", "01 16 20 00 0D")
        server.expect("18 00", "19")
        do {
            try await client.writeLong(0x20, [1])
            Issue.record("expected invalidAttributeValueLength")
        } catch {
            #expect(error.code == .invalidAttributeValueLength)
            #expect(error.description.contains("invalidAttributeValueLength"))
        }
        server.verify()
    }

    @Test func reliableWriteChecksTheEchoAndCancelsOnMismatch() async throws {
        let server = ScriptedServer()
        let client = GATTClient(bearer: server.bearer)
        server.expect("16 20 00 00 00 01 02", "17 20 00 00 00 01 02")
        server.expect("16 21 00 00 00 03", "17 21 00 00 00 03")
        server.expect("18 01", "19")
        try await client.reliableWrite([
            HandleValue(handle: 0x20, value: [1, 2]), HandleValue(handle: 0x21, value: [3]),
        ])
        server.verify()

        server.expect("16 20 00 00 00 01 02", "17 20 00 00 00 01 FF")
        server.expect("18 00", "19")
        await #expect(throws: GATTError.reliableWriteMismatch(handle: 0x20, offset: 0)) {
            try await client.reliableWrite([HandleValue(handle: 0x20, value: [1, 2])])
        }
        server.verify()
    }
}
