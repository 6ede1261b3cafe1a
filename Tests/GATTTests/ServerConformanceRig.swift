import ATT
import BluetoothCore
import GATT
import HCI
import HCITestSupport
import Testing

// The rig of the server conformance cases (ServerConformance*Tests): a GATT server with one
// database that has every kind of attribute the cases need, and a client link driven with
// raw ATT PDUs, whose answers are kept byte for byte.

/// A 128-bit service and characteristic, as UUIDs and as ATT carries them.
let conformanceService128 = BluetoothUUID("0000A100-B1E7-4C7A-8A5E-6F2D0C1B0A00")!
let conformanceService128Wire = "00 0a 1b 0c 2d 6f 5e 8a 7a 4c e7 b1 00 a1 00 00"
let conformanceCharacteristic128 = BluetoothUUID("0000A101-B1E7-4C7A-8A5E-6F2D0C1B0A00")!
let conformanceCharacteristic128Wire = "00 0a 1b 0c 2d 6f 5e 8a 7a 4c e7 b1 01 a1 00 00"

/// The 30-octet value of the long characteristic (0x0018): 00 01 … 1d.
let conformanceLongValue: [UInt8] = (0..<30).map { UInt8($0) }

/// The database every conformance case queries: our GAP and GATT services at 0x0001–0x000D
/// (``LocalGATTServer``), then:
///
///     0x000E secondary service A001
///     0x000F   characteristic   read, 0x0010, B001
///     0x0010   B001             01                          read
///     0x0011 primary service    128-bit (conformanceService128)
///     0x0012   characteristic   read write, 0x0013, 128-bit
///     0x0013   128-bit value    12 34                       read, write
///     0x0014 primary service    A002
///     0x0015   include          0x000E–0x0010, A001
///     0x0016   include          0x0011–0x0013 (128-bit: no UUID)
///     0x0017   characteristic   read write, 0x0018, B002
///     0x0018   B002 (long)      00 … 1d (30 octets)         read, write
///     0x0019   user description "long"                      read
///     0x001A   characteristic   write, 0x001B, B003
///     0x001B   B003                                         write
///     0x001C   characteristic   write without response, 0x001D, B004
///     0x001D   B004             00                          write without response
///     0x001E   characteristic   read notify indicate, 0x001F, B005
///     0x001F   B005             05                          read
///     0x0020   CCCD             (per client)                read, write
///     0x0021   characteristic   read write, 0x0022, B006
///     0x0022   B006             06                          read, write: encrypted
///     0x0023   characteristic   read write, 0x0024, B007
///     0x0024   B007             07                          read, write: authenticated
///     0x0025   characteristic   read write, 0x0026, B008
///     0x0026   B008             08                          read, write: authorized
///     0x0027   characteristic   read write extended, 0x0028, B009
///     0x0028   B009             09                          read, write
///     0x0029   extended props   01 00 (Reliable Write)      read
///     0x002A   characteristic   read, 0x002B, B00A
///     0x002B   B00A             0a                          read
///     0x002C   descriptor C001  0a                          read, write
///     0x002D   descriptor C002                              write
///     0x002E   characteristic   read, 0x002F, B00B
///     0x002F   B00B             b1 b1                       read
///     0x0030   characteristic   read, 0x0031, B00B
///     0x0031   B00B             b2 b2                       read
///     0x0032   characteristic   write, 0x0033, B00B
///     0x0033   B00B                                         write
///     0x0034   characteristic   read, 0x0035, B00B
///     0x0035   B00B             b3 b3                       read
///     0x0036   characteristic   read, 0x0037, B00B
///     0x0037   B00B             b4                          read
///     0x0038 primary service    A003 (empty)
///     0x0039 primary service    A004 (empty)
///     0x003A primary service    A005 (empty)
///     0x003B primary service    A006 (empty)
///
/// Built with the app's API (``GATTServer/add(_:)``), which lays services out in order;
/// ``conformanceLayoutHolds()`` fails first, and alone, if that layout moves.
@BluetoothActor
func makeConformanceServer() throws -> GATTServer {
    func uuid(_ value: UInt16) -> BluetoothUUID { BluetoothUUID(value) }
    func characteristic(
        _ short: UInt16, _ properties: CharacteristicProperties, permissions: AttributePermissions? = nil,
        _ value: [UInt8] = [], descriptors: [MutableDescriptor] = []
    ) -> CharacteristicDefinition {
        CharacteristicDefinition(
            uuid: uuid(short), properties: properties, permissions: permissions, value: value, descriptors: descriptors)
    }
    // One add, one Database Hash: a hash per service made each server cost about 0.45 s of
    // the stack's shared actor in a debug build, and 46 such tests in parallel held up the
    // other suites' ATT exchanges past their 30 s timeout.
    let server = GATTServer()
    var services = [
        ServiceDefinition(
            uuid: uuid(0xA001), isPrimary: false, characteristics: [characteristic(0xB001, [.read], [0x01])])
    ]
    services.append(
        ServiceDefinition(
            uuid: conformanceService128,
            characteristics: [
                CharacteristicDefinition(
                    uuid: conformanceCharacteristic128, properties: [.read, .write], value: [0x12, 0x34])
            ]))
    services.append(
        ServiceDefinition(
            uuid: uuid(0xA002), includedServices: [uuid(0xA001), conformanceService128],
            characteristics: [
                characteristic(0xB002, [.read, .write], conformanceLongValue, descriptors: [.userDescription("long")]),
                characteristic(0xB003, [.write]),
                characteristic(0xB004, [.writeWithoutResponse], [0x00]),
                characteristic(0xB005, [.read, .notify, .indicate], [0x05]),
                characteristic(
                    0xB006, [.read, .write], permissions: [.read, .write, .readEncrypted, .writeEncrypted], [0x06]),
                characteristic(
                    0xB007, [.read, .write], permissions: [.read, .write, .readAuthenticated, .writeAuthenticated],
                    [0x07]),
                characteristic(
                    0xB008, [.read, .write], permissions: [.read, .write, .readAuthorized, .writeAuthorized], [0x08]),
                characteristic(
                    0xB009, [.read, .write, .extendedProperties], [0x09],
                    descriptors: [MutableDescriptor(uuid: uuid(0x2900), value: [0x01, 0x00])]),
                characteristic(
                    0xB00A, [.read], [0x0A],
                    descriptors: [
                        MutableDescriptor(uuid: uuid(0xC001), value: [0x0A], permissions: [.read, .write]),
                        MutableDescriptor(uuid: uuid(0xC002), value: [], permissions: [.write]),
                    ]),
                characteristic(0xB00B, [.read], [0xB1, 0xB1]),
                characteristic(0xB00B, [.read], [0xB2, 0xB2]),
                characteristic(0xB00B, [.write]),
                characteristic(0xB00B, [.read], [0xB3, 0xB3]),
                characteristic(0xB00B, [.read], [0xB4]),
            ]))
    for empty: UInt16 in [0xA003, 0xA004, 0xA005, 0xA006] { services.append(ServiceDefinition(uuid: uuid(empty))) }
    try server.add(services: services)
    return server
}

/// One client's link to a server, driven with raw ATT PDUs as a peer sends them; every PDU
/// the server sends on it is kept, in order.
@BluetoothActor
final class RawLink {
    /// What the server sent (a class: the bearer's transmit closure appends to it).
    final class Outbox {
        var pdus: [[UInt8]] = []
    }

    let bearer: ATTBearer
    let outbox: Outbox

    /// A link on `connection` whose server is `server`; its ATT timeouts (30 s) run on `clock`.
    init(_ server: GATTServer, connection: ConnectionHandle = 0x0040, clock: any Clock<Duration> = ContinuousClock()) {
        let outbox = Outbox()
        bearer = ATTBearer(connection: connection, clock: clock, logger: .silent) { (pdu: [UInt8]) throws(HCIError) in
            outbox.pdus.append(pdu)
        }
        bearer.server = server
        self.outbox = outbox
    }

    /// Sends `request` (hex) and returns what the server sent while taking it, as hex (PDUs
    /// joined by " | "), or nil when it sent nothing: a request the table answers at once.
    func send(_ request: String) -> String? {
        let before = outbox.pdus.count
        bearer.receive(bytes(request)[...])
        return Self.text(outbox.pdus[before...])
    }

    /// Sends `request` (hex) and waits for the one PDU it answers with later (an app's
    /// authorizer or handler decides it), under the hang guard.
    func sendAwaiting(_ request: String) async -> String? {
        let before = outbox.pdus.count
        bearer.receive(bytes(request)[...])
        _ = await eventually { outbox.pdus.count > before }
        return Self.text(outbox.pdus[before...])
    }

    /// PDUs as hex, joined by " | "; nil for none.
    static func text(_ pdus: ArraySlice<[UInt8]>) -> String? {
        pdus.isEmpty ? nil : pdus.map(\.hexDump).joined(separator: " | ")
    }
}

/// `count` octets counting up from `first`, as hex: the long value's parts.
func countingHex(from first: Int, count: Int) -> String {
    (first..<first + count).map { [UInt8(truncatingIfNeeded: $0)].hexDump }.joined(separator: " ")
}

/// The database the cases are written against, where they expect it.
@Suite("Server conformance: the rig") @BluetoothActor
struct ServerConformanceRigTests {
    @Test("The conformance database is laid out as its table says")
    func conformanceLayoutHolds() throws {
        let server = try makeConformanceServer()
        let handles = server.services.map { [$0.service.handle.rawValue, $0.service.endGroupHandle.rawValue] }
        #expect(
            handles == [
                [0x0E, 0x10], [0x11, 0x13], [0x14, 0x37], [0x38, 0x38], [0x39, 0x39], [0x3A, 0x3A], [0x3B, 0x3B],
            ])
        let values = server.services[2].characteristics.map(\.valueHandle.rawValue)
        #expect(values == [0x18, 0x1B, 0x1D, 0x1F, 0x22, 0x24, 0x26, 0x28, 0x2B, 0x2F, 0x31, 0x33, 0x35, 0x37])
        #expect(server.attributes.attributes.last?.handle == 0x003B)
    }
}
