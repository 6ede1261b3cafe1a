import DiscoveryCache
import Foundation
import HCI
import SMP
import TraceDecoding

extension FuzzTarget {
    /// A btsnoop file, read and then decoded by everything `bluejay trace` runs on it.
    static let btsnoop = FuzzTarget(
        name: "btsnoop",
        summary: "BTSnoopFile, then TraceFormatter, TraceSummary and TraceCheck over its records",
        run: { bytes throws(FuzzFailure) in
            guard let file = try? BTSnoopFile(bytes: bytes) else { return }
            var formatter = TraceFormatter()
            for (index, record) in file.records.enumerated() {
                try expect(record.number == index + 1, "record \(index + 1) is numbered \(record.number)")
                _ = formatter.format(record)
            }
            _ = TraceSummary(file: file)
            _ = TraceCheck(file: file).failure.map { "\($0)" }
        },
        seeds: { trace, _ in [Array(trace.prefix(8192))] },
        maximumLength: 8192)

    /// A GATT cache file from the store directory (anyone with write access to it, or a
    /// disk that lost a block, can put anything there).
    static let cacheFile = FuzzTarget(
        name: "cache-file",
        summary: "CacheEntry JSON decoding, with a round trip through its encoding",
        run: { bytes throws(FuzzFailure) in
            guard let entry = try? CacheEntry(decoding: bytes) else { return }
            try expectRoundTrip(entry, "cache entry", encode: { $0.encoded() }, decode: { try CacheEntry(decoding: $0) })
        },
        seeds: { _, _ in [] },
        maximumLength: 8192)

    /// A bond file from the store directory: read as BondStore reads it, then every key.
    static let bondFile = FuzzTarget(
        name: "bond-file",
        summary: "Bond JSON decoding, key accessors, identity matching, with a round trip",
        run: { bytes throws(FuzzFailure) in
            guard let bond = try? JSONDecoder().decode(Bond.self, from: Data(bytes)) else { return }
            _ = (bond.identityAddressType, bond.randomBytes, bond.identityResolvingKeyBytes)
            guard bond.isUsable, let address = bond.identityAddress else { return }
            try expect(bond.longTermKeyBytes?.count == 16, "usable bond without a 16-octet LTK: \(bond)")
            try expect(bond.matches(address, bond.identityAddressType), "bond does not match its identity address: \(bond)")
            _ = bond.matches(address, .random)
            try expectRoundTrip(bond, "bond", encode: { (try? Array(JSONEncoder().encode($0))) ?? [] },
                                decode: { try JSONDecoder().decode(Bond.self, from: Data($0)) })
        },
        seeds: { _, _ in [] },
        maximumLength: 4096)
}
