import ATT
import BluetoothCore
import DiscoveryCache
import Foundation
import GATT
import HCI
import L2CAP
import SMP
import HCITestSupport
import Testing
import TraceDecoding

// The discovery cache tests' rig (DiscoveryCacheTests.swift): a store of their own, and the ATT
// a capture shows.

/// A temporary store directory (`BLUEJAY_STORE`) for one test, and the CLI run against it.
struct CacheTestStore {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "bluejay-cache-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A file in the store's directory (captures go there too, so one removal cleans up).
    func file(_ name: String) -> String { path + "/" + name }

    /// Where the entry of `identity` (`ADDRESS/random`) lives.
    func entryPath(_ identity: String) -> String { path + "/gatt-cache/" + DiscoveryCache.fileName(for: identity) }

    /// The entry of `identity`, decoded.
    func entry(_ identity: String) throws -> CacheEntry {
        try CacheEntry(decoding: Array(try Data(contentsOf: URL(fileURLWithPath: entryPath(identity)))))
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// Runs `bluejay` with this store.
    func bluejay(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> ProgramResult {
        try await run(Repository.bluejay, arguments, environment: ["BLUEJAY_STORE": path].merging(extra) { $1 })
    }
}

/// One ATT PDU of a btsnoop capture, rebuilt from its ACL fragments.
struct CapturedATT: CustomStringConvertible {
    /// Host to controller.
    var sent: Bool
    var pdu: [UInt8]

    var opcode: ATTOpcode { ATTOpcode(rawValue: pdu[0]) }

    /// The attribute type of a Read By Type request.
    var readByTypeUUID: BluetoothUUID? { try? ReadByTypeRequest(decoding: pdu[...]).attributeType }

    /// The handle of a Read request.
    var handle: AttributeHandle? { try? ReadRequest(decoding: pdu[...]).handle }

    /// A discovery request: primary services (Read By Group Type, Find By Type Value),
    /// includes and characteristics (Read By Type of 0x2802/0x2803), descriptors (Find
    /// Information). A Read By Type of anything else (the Database Hash) is a read.
    var isDiscovery: Bool {
        switch opcode {
        case .readByGroupTypeRequest, .findByTypeValueRequest, .findInformationRequest: true
        case .readByTypeRequest:
            [BluetoothUUID.primaryService, .secondaryService, .include, .characteristic].contains(readByTypeUUID)
        default: false
        }
    }

    var description: String { "\(sent ? "< TX" : "> RX") \(opcode) [\(pdu.hexString(separator: " "))]" }

    /// Every ATT PDU in the file, both ways, in order.
    static func all(in path: String) throws -> [CapturedATT] {
        var reassemblers: [String: Reassembler] = [:]
        var found: [CapturedATT] = []
        for record in try BTSnoopFile(path: path).records {
            guard case let .packet(type, body) = record.content, type == .acl,
                case let .acl(packet)? = try? HCIPacket(type: type, body: body)
            else {
                continue
            }
            let key = "\(packet.handle) \(record.direction == .sent)"
            guard let frame = reassemblers[key, default: Reassembler()].append(packet).frame, frame.channel == .att,
                !frame.payload.isEmpty
            else {
                continue
            }
            found.append(CapturedATT(sent: record.direction == .sent, pdu: Array(frame.payload)))
        }
        return found
    }

    /// What the host sent.
    static func requests(in path: String) throws -> [CapturedATT] {
        try all(in: path).filter(\.sent)
    }
}
