// swift-tools-version:6.0
// Bluejay for Linux: a Bluetooth Low Energy host stack that drives a controller over HCI.
import PackageDescription

let package = Package(
    name: "Bluejay",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "BluetoothCore", targets: ["BluetoothCore"]),
        .library(name: "HCI", targets: ["HCI"]),
        .library(name: "GAP", targets: ["GAP"]),
        .library(name: "L2CAP", targets: ["L2CAP"]),
        .library(name: "ATT", targets: ["ATT"]),
        .library(name: "GATT", targets: ["GATT"]),
        .library(name: "DiscoveryCache", targets: ["DiscoveryCache"]),
        .library(name: "Host", targets: ["Host"]),
        .library(name: "Bluejay", targets: ["Bluejay"]),
        .library(name: "SMP", targets: ["SMP"]),
        .library(name: "Storage", targets: ["Storage"]),
        .library(name: "BluetoothCrypto", targets: ["BluetoothCrypto"]),
        .library(name: "TraceDecoding", targets: ["TraceDecoding"]),
        .library(name: "Advertisements", targets: ["Advertisements"]),
        .library(name: "VirtualController", targets: ["VirtualController"]),
        .executable(name: "bluejay", targets: ["bluejay"]),
        // `bluejay gateway CONFIG.yaml` runs this: BLE peripherals bridged to an MQTT broker
        // (docs/Gateway.md). Its own binary, so YAML and OpenSSL stay out of `bluejay`.
        .executable(name: "bluejay-gateway", targets: ["BluejayGateway"]),
        // The in-memory paths and the flooding peripheral, for the package-benchmark suite
        // (Benchmarks/Package.swift, which can use only products). Not API.
        .library(name: "BenchSupport", targets: ["BenchSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // The gateway's configuration file (Sources/Gateway), nowhere else.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // `make docs`: the documentation, built by DocC (a plugin; nothing of it is linked).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Only what Swift cannot spell: sockaddr_hci and the HCI channel constants from
        // <bluetooth/hci.h>, and termios. No logic lives in C.
        .target(name: "CBluetooth"),
        // What every layer shares, below HCI: bytes and message layouts, UUIDs, addresses,
        // handles, the logger, the serial actor, clocks.
        // epoll, eventfd and thread naming, which the Glibc module does not bring in.
        .target(name: "CBluejaySystem"),
        .target(
            name: "BluetoothCore", dependencies: ["CBluejaySystem", .product(name: "Logging", package: "swift-log")]),
        .target(name: "HCI", dependencies: ["CBluetooth", "CBluejaySystem", "BluetoothCore"]),
        // The Generic Access Profile's procedures over HCI (Core Vol 3, Part C): connecting,
        // scanning, advertising and its private addresses, the parameter policy.
        .target(name: "GAP", dependencies: ["BluetoothCore", "HCI"]),
        .target(name: "L2CAP", dependencies: ["BluetoothCore", "HCI"]),
        .target(name: "ATT", dependencies: ["BluetoothCore", "HCI", "L2CAP"]),
        .target(name: "GATT", dependencies: ["BluetoothCore", "HCI", "ATT", "BluetoothCrypto"]),
        // The store directory: atomic files, mode 0600 (GATT cache and bonds).
        .target(name: "Storage", dependencies: ["BluetoothCore"]),
        .target(name: "DiscoveryCache", dependencies: ["ATT", "BluetoothCore", "GATT", "Storage"]),
        // The stack's one wiring (BluetoothHost: every layer on one controller, a GATT client
        // per link) and what it shares with the faces above: BluejayError, the identifiers.
        .target(
            name: "Host",
            dependencies: ["BluetoothCore", "Storage", "HCI", "GAP", "L2CAP", "ATT", "GATT", "DiscoveryCache", "SMP"]),
        // The public facade: Bluejay's API over the stack.
        .target(
            name: "Bluejay",
            dependencies: [
                "BluetoothCore", "Storage", "HCI", "GAP", "L2CAP", "ATT", "GATT", "DiscoveryCache", "SMP", "Host",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(name: "SMP", dependencies: ["BluetoothCore", "HCI", "L2CAP", "Storage", "BluetoothCrypto"]),
        // The security toolbox of Core Vol 3, Part H, 2.2 and the GATT Database Hash, on our
        // own constant-time AES-128 block and P-256 (LE Secure Connections). Depends on nothing.
        .target(name: "BluetoothCrypto"),
        .target(name: "TraceDecoding", dependencies: ["BluetoothCore", "HCI", "L2CAP", "ATT", "SMP"]),
        // Sensor and beacon advertisements decoded (BTHome, MiBeacon, Ruuvi, …; issue 52), for
        // `bluejay adv decode` and the gateway: AD structures and AES-CCM, nothing heavier.
        .target(name: "Advertisements", dependencies: ["BluetoothCore", "BluetoothCrypto"]),
        // Peers rebuilt from btsnoop recordings, served by an in-process virtual LE controller
        // (the `mock:FILE` transport): no radio, no Python, no sockets.
        .target(
            name: "VirtualController",
            dependencies: [
                "BluetoothCore", "CBluetooth", "CBluejaySystem", "HCI", "L2CAP", "ATT", "GATT", "SMP", "TraceDecoding",
            ]),
        .executableTarget(
            name: "bluejay",
            dependencies: [
                "BluetoothCore", "Storage",
                "CBluetooth", "HCI", "GAP", "L2CAP", "ATT", "GATT", "DiscoveryCache", "SMP", "Host", "Bluejay",
                "TraceDecoding",
                "VirtualController", "Advertisements",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // OpenSSL (Debian's libssl-dev), for the gateway's mqtts:// connections.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // The gateway's logic on the public Central API: configuration, topics, the MQTT
        // client and its bounded outbox, value decoding, Home Assistant discovery.
        .target(
            name: "Gateway",
            dependencies: [
                "Bluejay", "BluetoothCore", "HCI", "SMP", "COpenSSL", "Advertisements",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "BluejayGateway",
            dependencies: [
                "Bluejay", "BluetoothCore", "Gateway", "VirtualController",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The receive and send paths in memory, for bluejay-bench and BluejayBenchmarks; the
        // app-facing receive paths over a flooding peripheral on the virtual controller.
        .target(
            name: "BenchSupport",
            dependencies: [
                "BluetoothCore", "HCI", "GAP", "L2CAP", "ATT", "GATT", "Bluejay", "VirtualController", "HCITestSupport",
            ],
            path: "Benchmarks/BenchSupport"),
        // `bluejay-bench` (make bench): the in-memory paths timed side by side with Bumble's
        // host, and a gateway on Central against the Bumble peer.
        .executableTarget(
            name: "bluejay-bench",
            dependencies: ["BluetoothCore", "CBluetooth", "HCI", "L2CAP", "ATT", "GATT", "Bluejay", "BenchSupport"],
            path: "Sources/BluejayBench"),
        // `bluejay-ct` (make bench-check): whether BluetoothCrypto's P-256 and AES keep their
        // time independent of the secret, measured by dudect's fixed-against-random t-test on
        // a release build, with the cycle counter of CycleCounter (C: Swift cannot read rdtsc).
        .target(name: "CycleCounter", path: "Benchmarks/ConstantTime/CycleCounter"),
        .executableTarget(
            name: "bluejay-ct", dependencies: ["BluetoothCrypto", "CycleCounter"],
            path: "Benchmarks/ConstantTime/Harness"),
        // package-benchmark's suite (make bench-check) is a package of its own,
        // Benchmarks/Package.swift: ordo-one/benchmark's trait needs tools 6.1, this package
        // stays at 6.0 for Debian 13's Swift (make swift60).
        // A scripted controller for unit tests of the layers above the transport.
        .target(name: "HCITestSupport", dependencies: ["BluetoothCore", "HCI"], path: "Tests/HCITestSupport"),
        // Traits shared by the test targets (the hang guard every time limit uses), and
        // expectError, #expect(throws:) returning the error under Swift 6.0 too.
        .target(name: "TestTraits", path: "Tests/TestTraits"),
        // Holds trace summaries against ../shared/traces/expected-counts.json under one rule,
        // for the decoder's tests and the command line's alike.
        .target(
            name: "TraceTestSupport", dependencies: ["BluetoothCore", "HCI", "L2CAP", "ATT", "SMP", "TraceDecoding"],
            path: "Tests/TraceTestSupport"),
        .testTarget(
            name: "HCITests",
            dependencies: [
                "BluetoothCore", "HCI", "HCITestSupport", "TestTraits", .product(name: "Logging", package: "swift-log"),
            ]),
        // Connecting, scanning and advertising against the scripted controller.
        .testTarget(name: "GAPTests", dependencies: ["BluetoothCore", "HCI", "GAP", "HCITestSupport", "TestTraits"]),
        .testTarget(
            name: "L2CAPTests", dependencies: ["BluetoothCore", "HCI", "L2CAP", "HCITestSupport", "TestTraits"]),
        .testTarget(name: "ATTTests", dependencies: ["BluetoothCore", "HCI", "ATT", "HCITestSupport"]),
        // Our AES-128 and P-256 are held against OpenSSL's results (OracleVectors.swift, from
        // Fixtures/crypto/oracle_vectors.py), the specifications' samples and their own rules.
        .testTarget(name: "BluetoothCryptoTests", dependencies: ["BluetoothCrypto", "TestTraits"]),
        .testTarget(
            name: "TraceDecodingTests",
            dependencies: ["ATT", "BluetoothCore", "HCI", "SMP", "TraceDecoding", "TraceTestSupport"]),
        // The advertisement decoders against the formats' published example payloads.
        .testTarget(name: "AdvertisementsTests", dependencies: ["Advertisements", "BluetoothCore", "TestTraits"]),
        // The whole shared corpus of real traces (../shared/traces): `make test-corpus`, not
        // `make test`, which runs the four the repository ships (Fixtures/real-traces).
        .testTarget(
            name: "CorpusTests",
            dependencies: [
                "BluetoothCore", "HCI", "SMP", "TraceDecoding", "TraceTestSupport", "HCITestSupport", "TestTraits",
            ]),
        .testTarget(
            name: "GATTTests",
            dependencies: [
                "ATT", "BluetoothCore", "HCI", "GAP", "L2CAP", "GATT", "DiscoveryCache", "HCITestSupport", "TestTraits",
            ]),
        .testTarget(
            name: "BluejayTests",
            dependencies: [
                "BluetoothCore", "HCI", "GAP", "L2CAP", "Bluejay", "DiscoveryCache", "GATT", "HCITestSupport",
                "TestTraits", "VirtualController",
            ]),
        // Imports Bluejay alone, with MemberImportVisibility: builds only if `import Bluejay`
        // is all an app needs.
        .testTarget(
            name: "ImportOnlyBluejayTests", dependencies: ["Bluejay"],
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]),
        .testTarget(
            name: "SMPTests",
            dependencies: ["BluetoothCore", "BluetoothCrypto", "HCI", "L2CAP", "Storage", "SMP", "HCITestSupport"]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "BluetoothCore", "Storage", "HCI", "GAP", "L2CAP", "ATT", "GATT", "DiscoveryCache", "SMP", "Bluejay",
                "TraceDecoding", "HCITestSupport", "TraceTestSupport", "TestTraits",
                "Gateway", "VirtualController", .product(name: "Logging", package: "swift-log"),
            ]),
        // The gateway's pieces without a broker or a peer: configuration errors, topics,
        // decoding, the outbox's bounds (IntegrationTests run it against mosquitto and the peer).
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Bluejay", "Gateway", "Advertisements", "SMP", "TestTraits",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Conformance from recorded traces (Fixtures/traces): the stack and the tool against
        // replayed controllers. No Python, no network, no peer.
        .testTarget(
            name: "ReplayTests",
            dependencies: [
                "BluetoothCore", "Storage", "HCI", "GAP", "L2CAP", "ATT", "GATT", "DiscoveryCache", "SMP", "Bluejay",
                "TraceDecoding", "HCITestSupport", "TestTraits",
            ]),
        // Fuzz targets for every decoder of outside bytes (docs/Testing.md, "Fuzzing"): run over their
        // seeds and past crashes in `make test`, under libFuzzer by `make fuzz`.
        .target(
            name: "FuzzTargets",
            dependencies: [
                "BluetoothCore", "HCI", "L2CAP", "ATT", "GATT", "SMP", "DiscoveryCache", "TraceDecoding",
                "VirtualController", "Advertisements",
            ],
            path: "Fuzz/Targets"),
        .executableTarget(
            name: "bluejay-fuzz-seeds", dependencies: ["BluetoothCore", "FuzzTargets", "HCI"], path: "Fuzz/Seeds"),
        .testTarget(name: "FuzzTargetTests", dependencies: ["BluetoothCore", "FuzzTargets", "HCI", "HCITestSupport"]),
        // The command-line tool's own pieces (e.g. the live scan table), without a controller.
        .testTarget(
            name: "CLITests",
            dependencies: [
                "BluetoothCore", "bluejay", "HCI", "GAP", "TestTraits",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // The mock: transport: peers rebuilt from recordings (small captures built in memory,
        // the shipped real traces), served to the whole stack and the CLI.
        .testTarget(
            name: "VirtualControllerTests",
            dependencies: [
                "BluetoothCore", "L2CAP", "VirtualController", "Bluejay", "GATT", "ATT", "HCI", "GAP", "TraceDecoding",
                "HCITestSupport", "TraceTestSupport", "TestTraits",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// The libFuzzer executable exists only for `make fuzz` (BLUEJAY_FUZZ=1, its own build
// folder, Fuzz/run.sh): linked with -sanitize=fuzzer, libFuzzer supplies its main(), so its
// one file is a library file with no top-level code (not main.swift: SwiftPM parses it as
// a library; Fuzz/run.sh also passes -parse-as-library).
if Context.environment["BLUEJAY_FUZZ"] != nil {
    package.targets.append(
        .executableTarget(name: "bluejay-fuzz", dependencies: ["FuzzTargets", "HCI"], path: "Fuzz/Main"))
}
