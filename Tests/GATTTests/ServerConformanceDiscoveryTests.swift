import ATT
import BluetoothCore
import GATT
import HCI
import Testing

/// Discovery as a server answers it, byte for byte (Core 6.0 Vol 3, Part F, 3.4.3 and
/// 3.4.4.1, 3.4.4.9; Part G, 4.4–4.7), against ``makeConformanceServer()``'s database.
@Suite("Server conformance: discovery") @BluetoothActor
struct ServerConformanceDiscoveryTests {
    /// Part G, 4.4.1 (Discover All Primary Services) over Part F, 3.4.4.9–10: primary
    /// services in handle order with their group ends; one value length per response (the
    /// 128-bit service waits for its own); as many as fit in ATT_MTU (2 + 3 × 6 = 20 of 23);
    /// the last group runs to its last attribute; past the last service, Attribute Not Found
    /// with the Starting Handle.
    @Test func discoverAllPrimaryServices() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("10 01 00 ff ff 00 28") == "11 06 01 00 05 00 00 18 06 00 0d 00 01 18")
        #expect(link.send("10 0e 00 ff ff 00 28") == "11 14 11 00 13 00 " + conformanceService128Wire)
        #expect(link.send("10 14 00 ff ff 00 28") == "11 06 14 00 37 00 02 a0 38 00 38 00 03 a0 39 00 39 00 04 a0")
        #expect(link.send("10 3a 00 ff ff 00 28") == "11 06 3a 00 3a 00 05 a0 3b 00 3b 00 06 a0")
        #expect(link.send("10 3c 00 ff ff 00 28") == "01 10 3c 00 0a")
        // A range that ends inside a group still gets the group's real end; one handle is a range.
        #expect(link.send("10 14 00 14 00 00 28") == "11 06 14 00 37 00 02 a0")
        // The group type as 128 bits on the Base UUID is the same type (Part F, 3.2.1).
        #expect(
            link.send("10 14 00 ff ff fb 34 9b 5f 80 00 00 80 00 10 00 00 00 28 00 00")
                == "11 06 14 00 37 00 02 a0 38 00 38 00 03 a0 39 00 39 00 04 a0")
    }

    /// Part F, 3.4.4.9: secondary services (0x2801) are a grouping type of their own; a
    /// group type GATT does not define is Unsupported Group Type, naming the Starting Handle.
    @Test func secondaryServicesAndUnsupportedGroupTypes() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("10 01 00 ff ff 01 28") == "11 06 0e 00 10 00 01 a0")
        #expect(link.send("10 0f 00 ff ff 01 28") == "01 10 0f 00 0a")
        #expect(link.send("10 01 00 ff ff 03 28") == "01 10 01 00 10")
        #expect(link.send("10 01 00 ff ff 02 28") == "01 10 01 00 10")
        #expect(link.send("10 01 00 ff ff " + conformanceService128Wire) == "01 10 01 00 10")
    }

    /// Part F, 3.4.3.1, 3.4.3.3, 3.4.4.1 and 3.4.4.9: a Starting Handle of 0x0000 or past
    /// the Ending Handle is Invalid Handle, naming the Starting Handle. A request of the
    /// wrong length is Invalid PDU; it names no handle we could trust, so 0x0000 (the reading
    /// 3.4.1.1 gives for a request without a handle).
    @Test func rangesStartingAtZeroOrPastTheirEndAreInvalidHandle() throws {
        let link = RawLink(try makeConformanceServer())
        for (opcode, tail) in [("04", ""), ("06", " 00 28 02 a0"), ("08", " 03 28"), ("10", " 00 28")] {
            #expect(link.send(opcode + " 00 00 ff ff" + tail) == "01 \(opcode) 00 00 01")
            #expect(link.send(opcode + " 00 00 00 00" + tail) == "01 \(opcode) 00 00 01")
            #expect(link.send(opcode + " 15 00 14 00" + tail) == "01 \(opcode) 15 00 01")
            #expect(link.send(opcode + " ff ff 01 00" + tail) == "01 \(opcode) ff ff 01")
        }
        #expect(link.send("04 01 00") == "01 04 00 00 04")
        #expect(link.send("06 01 00 ff ff 00") == "01 06 00 00 04")
        #expect(link.send("08 01 00 ff ff 00 28 00") == "01 08 00 00 04")
        #expect(link.send("10 01 00 ff ff 00") == "01 10 00 00 04")
    }

    /// Part G, 4.4.2 (Discover Primary Service by Service UUID) over Part F, 3.4.3.3–4: the
    /// service's handle and group end (the whole group's even when the range ends inside
    /// it); a secondary service is not a primary one; nothing found is Attribute Not Found
    /// with the Starting Handle.
    @Test func discoverPrimaryServiceByUUID() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("06 01 00 ff ff 00 28 02 a0") == "07 14 00 37 00")
        #expect(link.send("06 01 00 20 00 00 28 02 a0") == "07 14 00 37 00")
        #expect(link.send("06 01 00 ff ff 00 28 " + conformanceService128Wire) == "07 11 00 13 00")
        #expect(link.send("06 01 00 ff ff 00 28 01 a0") == "01 06 01 00 0a")
        #expect(link.send("06 15 00 ff ff 00 28 02 a0") == "01 06 15 00 0a")
        #expect(link.send("06 01 00 ff ff 01 28 01 a0") == "07 0e 00 10 00")
    }

    /// Part F, 3.4.3.4: an attribute that is not a grouping type is found alone (its Group
    /// End Handle is its own handle), in handle order, and only where its value is the one
    /// asked for.
    @Test func findByTypeValueOfAnAttributeThatDoesNotGroup() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("06 01 00 ff ff 0b b0 b1 b1") == "07 2f 00 2f 00")
        #expect(link.send("06 01 00 ff ff 0b b0 b4") == "07 37 00 37 00")
        #expect(link.send("06 01 00 ff ff 0b b0 b1") == "01 06 01 00 0a")
        #expect(link.send("06 01 00 ff ff 00 29 01 00") == "07 29 00 29 00")
    }

    /// Part F, 3.4.3.3 with Part G, 3.3.3.3: a CCCD's value is each client's own, so Find By
    /// Type Value compares the value this client would read, not another's.
    @Test func findByTypeValueComparesTheClientsOwnCCCD() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server, connection: 0x0040), other = RawLink(server, connection: 0x0041)
        #expect(link.send("12 20 00 01 00") == "13")
        #expect(link.send("06 01 00 ff ff 02 29 01 00") == "07 20 00 20 00")
        #expect(link.send("06 01 00 ff ff 02 29 00 00") == "07 09 00 09 00")
        #expect(other.send("06 01 00 ff ff 02 29 01 00") == "01 06 01 00 0a")
        #expect(other.send("06 01 00 ff ff 02 29 00 00") == "07 09 00 09 00 20 00 20 00")
    }

    /// Part G, 4.5.1 (Find Included Services) over Part F, 3.4.4.1–2: an include of a 16-bit
    /// service holds its UUID (6 octets), one of a 128-bit service does not (4): one length
    /// per response, so two responses.
    @Test func findIncludedServices() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("08 14 00 37 00 02 28") == "09 08 15 00 0e 00 10 00 01 a0")
        #expect(link.send("08 16 00 37 00 02 28") == "09 06 16 00 11 00 13 00")
        #expect(link.send("08 17 00 37 00 02 28") == "01 08 17 00 0a")
    }

    /// Part G, 4.6.1 (Discover All Characteristics of a Service) over Part F, 3.4.4.1–2:
    /// declarations of one length, as many as fit (2 + 3 × 7 = 23); more in a larger
    /// ATT_MTU; a 128-bit declaration (21 octets) alone; the range's end holds.
    @Test func discoverAllCharacteristics() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(
            link.send("08 14 00 37 00 03 28") == "09 07 17 00 0a 18 00 02 b0 1a 00 08 1b 00 03 b0 1c 00 04 1d 00 04 b0")
        #expect(
            link.send("08 1d 00 37 00 03 28") == "09 07 1e 00 32 1f 00 05 b0 21 00 0a 22 00 06 b0 23 00 0a 24 00 07 b0")
        #expect(link.send("08 2f 00 30 00 03 28") == "09 07 30 00 02 31 00 0b b0")
        #expect(link.send("08 11 00 13 00 03 28") == "09 15 12 00 0a 13 00 " + conformanceCharacteristic128Wire)
        #expect(link.send("08 37 00 37 00 03 28") == "01 08 37 00 0a")
        #expect(link.send("02 00 02") == "03 05 02", "Exchange MTU: ATT_MTU is now 512")
        #expect(
            link.send("08 14 00 37 00 03 28") == "09 07"
                + " 17 00 0a 18 00 02 b0 1a 00 08 1b 00 03 b0 1c 00 04 1d 00 04 b0 1e 00 32 1f 00 05 b0"
                + " 21 00 0a 22 00 06 b0 23 00 0a 24 00 07 b0 25 00 0a 26 00 08 b0 27 00 8a 28 00 09 b0"
                + " 2a 00 02 2b 00 0a b0 2e 00 02 2f 00 0b b0 30 00 02 31 00 0b b0 32 00 08 33 00 0b b0"
                + " 34 00 02 35 00 0b b0 36 00 02 37 00 0b b0")
    }

    /// Part G, 4.7.1 (Discover All Characteristic Descriptors) over Part F, 3.4.3.1–2:
    /// handles and types whatever their permissions, 16-bit (format 1) and 128-bit (format
    /// 2) never mixed, as many as fit (2 + 5 × 4 = 22 of 23); past the last attribute,
    /// Attribute Not Found with the Starting Handle.
    @Test func discoverAllDescriptorsAndFindInformation() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("04 2c 00 2d 00") == "05 01 2c 00 01 c0 2d 00 02 c0")
        #expect(link.send("04 20 00 20 00") == "05 01 20 00 02 29")
        #expect(link.send("04 19 00 19 00") == "05 01 19 00 01 29")
        #expect(link.send("04 33 00 33 00") == "05 01 33 00 0b b0")
        #expect(link.send("04 0e 00 ff ff") == "05 01 0e 00 01 28 0f 00 03 28 10 00 01 b0 11 00 00 28 12 00 03 28")
        #expect(link.send("04 13 00 ff ff") == "05 02 13 00 " + conformanceCharacteristic128Wire)
        #expect(link.send("04 3b 00 ff ff") == "05 01 3b 00 00 28")
        #expect(link.send("04 3c 00 ff ff") == "01 04 3c 00 0a")
    }

    /// Part G, 4.8.2 (Read Using Characteristic UUID) over Part F, 3.4.4.1–2: values of one
    /// length (b1 b1, b2 b2; not b4); an attribute that cannot be read ends the list before
    /// it, and refuses the request when it is the first (its own handle, its own code); past
    /// the last, Attribute Not Found with the Starting Handle.
    @Test func readByTypeGroupsByLengthAndStopsAtAnUnreadableValue() throws {
        let link = RawLink(try makeConformanceServer())
        #expect(link.send("08 01 00 ff ff 0b b0") == "09 04 2f 00 b1 b1 31 00 b2 b2")
        #expect(link.send("08 32 00 ff ff 0b b0") == "01 08 33 00 02")
        #expect(link.send("08 34 00 ff ff 0b b0") == "09 04 35 00 b3 b3")
        #expect(link.send("08 36 00 ff ff 0b b0") == "09 03 37 00 b4")
        #expect(link.send("08 38 00 ff ff 0b b0") == "01 08 38 00 0a")
        #expect(link.send("08 01 00 ff ff 0c b0") == "01 08 01 00 0a")
        // The 128-bit type.
        #expect(link.send("08 01 00 ff ff " + conformanceCharacteristic128Wire) == "09 04 13 00 12 34")
    }

    /// Part F, 3.4.4.1: the first value the link may not read refuses Read By Type with the
    /// reason (Read Not Permitted, Insufficient Encryption, Authentication, Authorization)
    /// and the attribute's handle. Authorization is not asked for here: a client reads such
    /// a value by its handle (``GATTServer/authorizer``).
    @Test func readByTypeRefusesWithTheFirstValuesReason() throws {
        let server = try makeConformanceServer()
        var security = LinkSecurity.none
        server.linkSecurity = { _ in security }
        let link = RawLink(server)
        #expect(link.send("08 01 00 ff ff 03 b0") == "01 08 1b 00 02")
        #expect(link.send("08 01 00 ff ff 06 b0") == "01 08 22 00 0f")
        #expect(link.send("08 01 00 ff ff 07 b0") == "01 08 24 00 05")
        #expect(link.send("08 01 00 ff ff 08 b0") == "01 08 26 00 08")
        security = .encrypted
        #expect(link.send("08 01 00 ff ff 06 b0") == "09 03 22 00 06")
        #expect(link.send("08 01 00 ff ff 07 b0") == "01 08 24 00 05")
        security = .authenticated
        #expect(link.send("08 01 00 ff ff 07 b0") == "09 03 24 00 07")
    }

    /// Part F, 3.2.1: a 32-bit UUID goes in an ATT PDU as its 128-bit form, so Find
    /// Information lists it in format 2 and a characteristic declaration holds 19 octets
    /// (Part G, 3.3.1); a request naming a type in 4 octets is Invalid PDU.
    @Test func thirtyTwoBitUUIDsTravelAs128Bits() throws {
        let server = GATTServer()
        try server.add(
            ServiceDefinition(
                uuid: BluetoothUUID(UInt16(0xA008)),
                characteristics: [
                    CharacteristicDefinition(
                        uuid: BluetoothUUID(UInt32(0x1234_5678)), properties: [.read], value: [0x32],
                        descriptors: [MutableDescriptor(uuid: BluetoothUUID(UInt32(0x1234_5679)), value: [0x01])])
                ]))
        let link = RawLink(server)
        let wire78 = "fb 34 9b 5f 80 00 00 80 00 10 00 00 78 56 34 12",
            wire79 = "fb 34 9b 5f 80 00 00 80 00 10 00 00 79 56 34 12"
        #expect(link.send("04 10 00 11 00") == "05 02 10 00 " + wire78)
        #expect(link.send("04 11 00 11 00") == "05 02 11 00 " + wire79)
        #expect(link.send("08 0e 00 ff ff 03 28") == "09 15 0f 00 02 10 00 " + wire78)
        #expect(link.send("08 01 00 ff ff " + wire78) == "09 03 10 00 32")
        #expect(link.send("08 01 00 ff ff 78 56 34 12") == "01 08 00 00 04")
    }

    /// Part F, 3.4.4.2: a value is cut to ATT_MTU − 4 octets, and never past 253 (the Length
    /// octet counts the handle too: 255 at most).
    @Test func readByTypeCutsValuesAtMTUMinusFourOr253() throws {
        let server = try makeConformanceServer()
        let link = RawLink(server)
        #expect(link.send("08 01 00 ff ff 02 b0") == "09 15 18 00 " + countingHex(from: 0, count: 19))
        #expect(link.send("02 00 02") == "03 05 02")
        #expect(link.send("08 01 00 ff ff 02 b0") == "09 20 18 00 " + countingHex(from: 0, count: 30))
        server.setValue((0..<300).map { UInt8(truncatingIfNeeded: $0) }, of: 0x0018)
        #expect(link.send("08 01 00 ff ff 02 b0") == "09 ff 18 00 " + countingHex(from: 0, count: 253))
    }
}
