import BluetoothCore
import DiscoveryCache
import GATT
import Foundation
import HCI
import SMP
import TraceDecoding
import VirtualController

extension FuzzTarget {
    /// A btsnoop file, read and then decoded by everything `bluejay trace` runs on it.
    static let btsnoop = FuzzTarget(
        name: "btsnoop",
        summary: "BTSnoopFile, then TraceFormatter, TraceSummary, TraceCheck and trace --redact over its records",
        run: { bytes throws(FuzzFailure) in
            guard let file = try? BTSnoopFile(bytes: bytes) else { return 0 }
            var formatter = TraceFormatter(file: file)
            for (index, record) in file.records.enumerated() {
                try expect(record.number == index + 1, "record \(index + 1) is numbered \(record.number)")
                _ = formatter.format(record)
            }
            _ = TraceSummary(file: file)
            _ = TraceCheck(file: file).failure.map { "\($0)" }
            // trace --redact: the same file but for zeros inside the fields it names.
            let redaction = try? BTSnoopRedaction(original: bytes, redactor: PacketSecrets())
            try expect(redaction != nil, "BTSnoopFile reads the file but BTSnoopRedaction refuses it")
            if let redaction {
                try expect(
                    redaction.bytes.count == bytes.count,
                    "the redacted copy has \(redaction.bytes.count) octets, the file \(bytes.count)")
                var secret = Set<Int>()
                for zeroed in redaction.zeroed { secret.formUnion(zeroed.field.range) }
                for index in bytes.indices where redaction.bytes[index] != bytes[index] {
                    try expect(
                        secret.contains(index) && redaction.bytes[index] == 0,
                        "octet \(index) changed outside the zeroed fields")
                }
            }
            return file.records.count
        },
        seeds: { trace, _ in windows(of: trace, size: 2048) },
        maximumLength: 4096)

    /// A btsnoop file, read and then rebuilt into the peers it shows (`bluejay mock`, the
    /// virtual controller's model): connections, advertising, ATT request and response
    /// pairing, long values, prepared writes, reactions.
    static let traceReconstruction = FuzzTarget(
        name: "trace-reconstruction",
        summary: "BTSnoopFile, then TraceReconstruction and every view of its peers (services, missing)",
        run: { bytes throws(FuzzFailure) in
            guard let file = try? BTSnoopFile(bytes: bytes) else { return 0 }
            let reconstruction = TraceReconstruction(file: file)
            for peer in reconstruction.peripherals {
                let handles = peer.attributes.map(\.handle)
                try expect(
                    handles == handles.sorted() && Set(handles).count == handles.count,
                    "\(peer.address): attributes not sorted by handle, each once: \(handles)")
                if peer.addressIsMadeUp {
                    try expect(
                        peer.address.bytes[5] & 0xC0 == 0xC0, "made-up address \(peer.address) is not static random")
                }
                for reaction in peer.reactions {
                    for notification in reaction.notifications {
                        try expect(
                            peer.attribute(at: notification.handle) != nil,
                            "\(peer.address): notified handle \(notification.handle) has no attribute")
                    }
                }
                for service in peer.services {
                    try expect(
                        service.handle <= service.endHandle,
                        "\(peer.address): service \(service.handle) ends at \(service.endHandle)")
                }
                _ = (peer.missing, peer.undiscoveredAttributes, peer.attributesOutsideServices)
            }
            // The same file gives the same peers (made-up addresses included).
            try expect(
                TraceReconstruction(file: file).peripherals == reconstruction.peripherals,
                "two readings of one file differ")
            return file.records.count
        },
        seeds: { trace, _ in windows(of: trace, size: 2048) },
        maximumLength: 4096)

    /// A GATT cache file from the store directory (anyone with write access to it, or a
    /// disk that lost a block, can put anything there).
    static let cacheFile = FuzzTarget(
        name: "cache-file",
        summary: "CacheEntry JSON decoding, with a round trip through its encoding",
        run: { bytes throws(FuzzFailure) in
            guard let entry = try? CacheEntry(decoding: bytes) else { return 0 }
            try expectRoundTrip(
                entry, "cache entry", encode: { $0.encoded() }, decode: { try CacheEntry(decoding: $0) })
            return 1
        },
        seeds: { _, _ in [] },
        maximumLength: 8192)

    /// A bond file from the store directory: read as BondStore reads it, then every key.
    static let bondFile = FuzzTarget(
        name: "bond-file",
        summary: "Bond JSON decoding, key accessors, identity matching, with a round trip",
        run: { bytes throws(FuzzFailure) in
            guard let bond = try? JSONDecoder().decode(Bond.self, from: Data(bytes)) else { return 0 }
            _ = (bond.identityAddressType, bond.randomBytes, bond.identityResolvingKeyBytes)
            guard bond.isUsable, let address = bond.identityAddress else { return 0 }
            try expect(bond.longTermKeyBytes?.count == 16, "usable bond without a 16-octet LTK: \(bond)")
            try expect(
                bond.matches(address, bond.identityAddressType), "bond does not match its identity address: \(bond)")
            _ = bond.matches(address, .random)
            try expectRoundTrip(
                bond, "bond", encode: { (try? Array(JSONEncoder().encode($0))) ?? [] },
                decode: { try JSONDecoder().decode(Bond.self, from: Data($0)) })
            return 1
        },
        seeds: { _, _ in [] },
        maximumLength: 4096)
}

/// The trace's 16-octet file header, each time followed by the next run of whole records
/// (about `size` octets), so the seeds hold records from the whole session, not only its
/// start, and stay small enough to mutate quickly.
private func windows(of trace: [UInt8], size: Int) -> [[UInt8]] {
    guard trace.count >= 16 else { return [] }
    let header = Array(trace[0..<16])
    var seeds: [[UInt8]] = []
    var window = header
    var offset = 16
    while trace.count - offset >= 24 {
        // The record header's second field, big-endian: the included length.
        let end = offset + 24 + trace[(offset + 4)..<(offset + 8)].reduce(0) { $0 << 8 | Int($1) }
        guard end <= trace.count else { break }
        if window.count > header.count, window.count + (end - offset) > size {
            seeds.append(window)
            window = header
        }
        window += trace[offset..<end]
        offset = end
    }
    return window.count > header.count ? seeds + [window] : seeds
}

extension FuzzTarget {
    /// A database file of `bluejay serve`: read and checked as `serve` reads it. A file it
    /// accepts holds only what a server can lay out: values of at most 512 octets, names
    /// that map to property and permission bits, timers with values, handles that grow
    /// within each service and stay within its end handle.
    static let databaseFile = FuzzTarget(
        name: "database-file",
        summary: "DatabaseFile JSON decoding and checking, as bluejay serve reads DB.json",
        run: { bytes throws(FuzzFailure) in
            guard let file = try? DatabaseFile(json: bytes) else { return 0 }
            for service in file.services {
                try expect(
                    service.definition.characteristics == service.characteristics.map(\.definition),
                    "service \(service.definition.uuid): its definition and its characteristics disagree")
                for characteristic in service.characteristics {
                    let definition = characteristic.definition
                    try expect(
                        definition.value.count <= 512,
                        "\(definition.uuid): a value of \(definition.value.count) octets accepted")
                    try expect(
                        definition.descriptors.allSatisfy { $0.value.count <= 512 },
                        "\(definition.uuid): a descriptor over 512 octets")
                    if let timer = characteristic.notify {
                        try expect(
                            !timer.values.isEmpty && timer.every > .zero,
                            "\(definition.uuid): a timer with no values or period")
                    }
                    try expect(
                        !characteristic.flood || definition.properties.contains(.notify),
                        "\(definition.uuid): a flood without notify")
                    try expect(
                        definition.extendedProperties.isEmpty || definition.properties.contains(.extendedProperties),
                        "\(definition.uuid): extended properties without the Extended Properties bit")
                }
                let given =
                    [service.definition.handle] + service.definition.includes.map(\.handle)
                    + service.definition.characteristics.flatMap {
                        [$0.handle, $0.valueHandle] + $0.descriptors.map(\.handle)
                    }
                let handles = given.compactMap { $0 }
                try expect(
                    zip(handles, handles.dropFirst()).allSatisfy { $0 < $1 },
                    "service \(service.definition.uuid): handles out of order accepted")
                if let end = service.definition.endHandle {
                    try expect(
                        handles.allSatisfy { $0 <= end },
                        "service \(service.definition.uuid): a handle past its end_handle accepted")
                }
            }
            return 1 + file.services.count
        },
        seeds: { _, _ in [] },
        maximumLength: 8192)
}
