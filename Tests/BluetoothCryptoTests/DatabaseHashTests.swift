import BluetoothCrypto
import Testing

// The GATT Database Hash (Core Vol 3, Part G, 7.3.1).

/// Shorthand for an attribute with a 16-bit type.
private func attribute(_ handle: UInt16, _ type: UInt16, _ value: String = "") -> DatabaseHashAttribute {
    DatabaseHashAttribute(handle: handle, type: type, value: hex(value))
}

@Suite("GATT Database Hash")
struct DatabaseHashTests {
    /// The example database whose hashed message and hash BlueZ checks in unit/test-crypto.c
    /// (test_gatt_hash): GAP, GATT with Service Changed, Client Supported Features and
    /// Database Hash, a Glucose service including a secondary Battery service, and a
    /// characteristic with Extended Properties. The characteristic value attributes, which
    /// do not contribute, are filled in here with made-up values to show they are skipped.
    static let exampleDatabase: [DatabaseHashAttribute] = [
        attribute(0x0001, 0x2800, "0018"),
        attribute(0x0002, 0x2803, "0A 0300 002A"),
        attribute(0x0003, 0x2A00, "426C75656A6179"),
        attribute(0x0004, 0x2803, "02 0500 012A"),
        attribute(0x0005, 0x2A01, "0000"),
        attribute(0x0006, 0x2800, "0118"),
        attribute(0x0007, 0x2803, "20 0800 052A"),
        attribute(0x0008, 0x2A05),
        attribute(0x0009, 0x2902, "0200"),
        attribute(0x000A, 0x2803, "0A 0B00 292B"),
        attribute(0x000B, 0x2B29, "01"),
        attribute(0x000C, 0x2803, "02 0D00 2A2B"),
        attribute(0x000D, 0x2B2A, "00000000000000000000000000000000"),
        attribute(0x000E, 0x2800, "0818"),
        attribute(0x000F, 0x2802, "1400 1600 0F18"),
        attribute(0x0010, 0x2803, "A2 1100 182A"),
        attribute(0x0011, 0x2A18, "0102030405"),
        attribute(0x0012, 0x2902, "0000"),
        attribute(0x0013, 0x2900, "0000"),
        attribute(0x0014, 0x2801, "0F18"),
        attribute(0x0015, 0x2803, "02 1600 192A"),
        attribute(0x0016, 0x2A19, "64"),
    ]

    @Test("The BlueZ example database hashes to F1CA2D48 ECF58BAC 8A8830BB B9FBA990")
    func blueZExample() {
        #expect(databaseHash(attributes: Self.exampleDatabase) == hex("F1CA2D48 ECF58BAC 8A8830BB B9FBA990"))
    }

    @Test("The hashed message is BlueZ's M0..M6 for that database")
    func blueZMessage() {
        // BlueZ hashes these 111 octets with a zero key; so must the declarations above.
        let message = hex(
            """
            01000028 00180200 03280A03 00002A04 00032802 0500012A 06000028 01180700
            03282008 00052A09 0002290A 0003280A 0B00292B 0C000328 020D002A 2B0E0000
            2808180F 00022814 0016000F 18100003 28A21100 182A1200 02291300 00290000
            14000128 0F181500 03280216 00192A
            """)
        #expect(message.count == 111)
        #expect(
            aesCMAC(key: [UInt8](repeating: 0, count: 16), message: message)
                == databaseHash(attributes: Self.exampleDatabase))
    }

    /// A database laid out by Bumble's GATT server, and its hash as Bumble computes it
    /// (bumble 0.0.236, `GenericAttributeProfileService.get_attribute_data` over
    /// `Server.attributes`, then `aes_cmac` with a zero key). To regenerate, run this with
    /// a Python that has bumble installed (`/work/main/.venv/bin/python dbhash.py`); it
    /// prints one line per attribute (handle, type as ATT carries it, value) and the hash:
    ///
    /// ```python
    /// from bumble import gatt, gatt_server
    /// from bumble.crypto import aes_cmac
    /// from bumble.profiles.gatt_service import GenericAttributeProfileService
    ///
    /// CUSTOM_SERVICE = gatt.UUID('6E400001-B5A3-F393-E0A9-E50E24DCCA9E')
    /// CUSTOM_CHARACTERISTIC = gatt.UUID('6E400002-B5A3-F393-E0A9-E50E24DCCA9E')
    ///
    /// battery = gatt.Service(gatt.GATT_BATTERY_SERVICE, [
    ///     gatt.Characteristic(gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC,
    ///                         gatt.Characteristic.Properties.READ,
    ///                         gatt.Characteristic.Permissions.READABLE, bytes([100])),
    /// ], primary=False)
    ///
    /// server = gatt_server.Server(None)  # the device is not needed to lay out attributes
    /// server.add_services([
    ///     gatt.Service(gatt.GATT_GENERIC_ACCESS_SERVICE, [
    ///         gatt.Characteristic(gatt.GATT_DEVICE_NAME_CHARACTERISTIC,
    ///                             gatt.Characteristic.Properties.READ,
    ///                             gatt.Characteristic.Permissions.READABLE, b'Bluejay'),
    ///         gatt.Characteristic(gatt.GATT_APPEARANCE_CHARACTERISTIC,
    ///                             gatt.Characteristic.Properties.READ,
    ///                             gatt.Characteristic.Permissions.READABLE, bytes([0x00, 0x00])),
    ///     ]),
    ///     # Service Changed (+ CCCD), Client Supported Features, Database Hash.
    ///     GenericAttributeProfileService(),
    ///     gatt.Service(CUSTOM_SERVICE, [
    ///         gatt.Characteristic(
    ///             CUSTOM_CHARACTERISTIC,
    ///             gatt.Characteristic.Properties.READ | gatt.Characteristic.Properties.NOTIFY
    ///             | gatt.Characteristic.Properties.EXTENDED_PROPERTIES,
    ///             gatt.Characteristic.Permissions.READABLE, b'\x2a',
    ///             descriptors=[
    ///                 gatt.Descriptor(gatt.GATT_CHARACTERISTIC_EXTENDED_PROPERTIES_DESCRIPTOR,
    ///                                 gatt.Descriptor.READABLE, bytes([0x01, 0x00])),
    ///                 gatt.Descriptor(gatt.GATT_CHARACTERISTIC_USER_DESCRIPTION_DESCRIPTOR,
    ///                                 gatt.Descriptor.READABLE, b'Answer'),
    ///                 gatt.Descriptor(gatt.GATT_CHARACTERISTIC_PRESENTATION_FORMAT_DESCRIPTOR,
    ///                                 gatt.Descriptor.READABLE,
    ///                                 bytes([0x04, 0x00, 0x00, 0x27, 0x01, 0x00, 0x00])),
    ///             ]),
    ///     ], included_services=[battery]),
    /// ])
    ///
    /// for a in server.attributes:
    ///     value = a.value.hex() if isinstance(a.value, bytes) else '<dynamic>'
    ///     print(f'{a.handle:#06x} {a.type.to_bytes().hex()} {value}')
    /// m = b''.join(GenericAttributeProfileService.get_attribute_data(a) for a in server.attributes)
    /// print('message', m.hex())
    /// print('hash (MSB first)', aes_cmac(m=m, k=bytes(16)).hex())
    /// ```
    ///
    /// Bumble registers the included (secondary) Battery service just before the service
    /// that includes it. The two `<dynamic>` values (the CCCDs and the Database Hash
    /// characteristic) are computed on read; they do not contribute, so any value does here.
    static let bumbleDatabase: [DatabaseHashAttribute] = {
        let customService = hex("9ecadc240ee5a9e093f3a3b50100406e")
        let customCharacteristic = hex("9ecadc240ee5a9e093f3a3b50200406e")
        return [
            attribute(0x0001, 0x2800, "0018"),
            attribute(0x0002, 0x2803, "020300002a"),
            attribute(0x0003, 0x2A00, "426c75656a6179"),
            attribute(0x0004, 0x2803, "020500012a"),
            attribute(0x0005, 0x2A01, "0000"),
            attribute(0x0006, 0x2800, "0118"),
            attribute(0x0007, 0x2803, "200800052a"),
            attribute(0x0008, 0x2A05),
            attribute(0x0009, 0x2902, "0000"),
            attribute(0x000A, 0x2803, "0a0b00292b"),
            attribute(0x000B, 0x2B29, "00"),
            attribute(0x000C, 0x2803, "020d002a2b"),
            attribute(0x000D, 0x2B2A),
            DatabaseHashAttribute(handle: 0x000E, type: 0x2800, value: customService),
            attribute(0x000F, 0x2801, "0f18"),
            attribute(0x0010, 0x2803, "021100192a"),
            attribute(0x0011, 0x2A19, "64"),
            attribute(0x0012, 0x2802, "0f0011000f18"),
            DatabaseHashAttribute(handle: 0x0013, type: 0x2803, value: hex("921400") + customCharacteristic),
            DatabaseHashAttribute(handle: 0x0014, typeBytes: customCharacteristic, value: [0x2A]),
            attribute(0x0015, 0x2900, "0100"),
            attribute(0x0016, 0x2901, "416e73776572"),
            attribute(0x0017, 0x2904, "04000027010000"),
            attribute(0x0018, 0x2902, "0000"),
        ]
    }()

    @Test("A database laid out by Bumble hashes as Bumble computes it")
    func bumbleDatabase() {
        #expect(databaseHash(attributes: Self.bumbleDatabase) == hex("9780385a 9a8ae2dc ffe9a8da ed480643"))
    }

    @Test("The characteristic carries the hash least significant octet first")
    func characteristicValue() {
        let hash = databaseHash(attributes: Self.exampleDatabase)
        #expect(lsbFirst(fromMSBFirst: hash) == hex("90A9FBB9 BB30888A AC8BF5EC 482DCAF1"))
    }

    @Test("Attribute order does not matter: the hash follows handles")
    func order() {
        #expect(databaseHash(attributes: Self.exampleDatabase.reversed()) == hex("F1CA2D48 ECF58BAC 8A8830BB B9FBA990"))
    }

    @Test(
        "Values that do not contribute: characteristic values, and CCCD, user description, format values",
        arguments: [0x0003, 0x0009, 0x0011, 0x0012] as [UInt16])
    func valuesThatDoNotCount(handle: UInt16) {
        var changed = Self.exampleDatabase
        let index = changed.firstIndex { $0.handle == handle }!
        changed[index].value = [0xDE, 0xAD]
        #expect(databaseHash(attributes: changed) == databaseHash(attributes: Self.exampleDatabase))
        let user = DatabaseHashAttribute(handle: 0x0100, type: 0x2901, value: Array("a".utf8))
        let renamed = DatabaseHashAttribute(handle: 0x0100, type: 0x2901, value: Array("b".utf8))
        #expect(databaseHash(attributes: [user]) == databaseHash(attributes: [renamed]))
    }

    @Test(
        "Values that do contribute: service, include, characteristic declarations and Extended Properties",
        arguments: [0x0001, 0x000F, 0x0010, 0x0013, 0x0014] as [UInt16])
    func valuesThatCount(handle: UInt16) {
        var changed = Self.exampleDatabase
        let index = changed.firstIndex { $0.handle == handle }!
        changed[index].value[0] ^= 0x01
        #expect(databaseHash(attributes: changed) != databaseHash(attributes: Self.exampleDatabase))
    }

    @Test(
        "Each of the five handle-and-type descriptors contributes its handle and type",
        arguments: [0x2901, 0x2902, 0x2903, 0x2904, 0x2905] as [UInt16])
    func handleAndTypeDescriptors(type: UInt16) {
        let descriptor = DatabaseHashAttribute(handle: 0x0102, type: type, value: [0x01, 0x00])
        let expected = aesCMAC(
            key: [UInt8](repeating: 0, count: 16),
            message: [0x02, 0x01, UInt8(type & 0xFF), UInt8(type >> 8)])
        #expect(databaseHash(attributes: [descriptor]) == expected)
    }

    @Test("Other descriptors, values, and 128-bit types contribute nothing: an empty message")
    func nothing() {
        let empty = aesCMAC(key: [UInt8](repeating: 0, count: 16), message: [])
        let others = [
            attribute(0x0001, 0x2906, "0000FF00"),  // Valid Range
            attribute(0x0002, 0x2908, "0101"),  // Report Reference
            attribute(0x0003, 0x2A00, "41"),
            DatabaseHashAttribute(handle: 0x0004, typeBytes: [UInt8](repeating: 0x28, count: 16), value: [0x00, 0x18]),
        ]
        #expect(databaseHash(attributes: others) == empty)
        #expect(databaseHash(attributes: []) == empty)
        #expect(others[3].type16 == nil)
        #expect(others[0].type16 == 0x2906)
    }

    #if compiler(>=6.2)  // exit tests are Swift Testing 6.2's: on 6.0 and 6.1, no such test
        @Test("Two attributes with one handle are a programming error")
        func duplicateHandle() async {
            await #expect(processExitsWith: .failure) {
                _ = databaseHash(attributes: [attribute(0x0001, 0x2800, "0018"), attribute(0x0001, 0x2800, "0118")])
            }
        }
    #endif
}
