// swift-tools-version:6.1
// package-benchmark's suite for Bluejay for Linux (make bench-check, make bench): heap
// allocations of the in-memory paths and the codecs, held against Thresholds/.
//
// A package of its own, beside the main one and depending on it by path, because
// ordo-one/benchmark is declared with a trait (its malloc interposer, which counts the
// allocations), and traits need tools 6.1: the main package stays at tools 6.0, so that
// Debian 13's Swift (6.0.3) builds it (make swift60). Built from the top level by the
// Makefile (`swift package --package-path Benchmarks`); see its bench-check.
import PackageDescription

let package = Package(
    name: "BluejayBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Bluejay", path: ".."),
        // Heap allocations counted by its malloc interposer (the trait). Linked into the
        // benchmark executable alone.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "BluejayBenchmarks",
            dependencies: [
                .product(name: "ATT", package: "Bluejay"), .product(name: "BluetoothCore", package: "Bluejay"),
                .product(name: "HCI", package: "Bluejay"), .product(name: "L2CAP", package: "Bluejay"),
                .product(name: "BenchSupport", package: "Bluejay"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "BluejayBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")])
    ],
    swiftLanguageModes: [.v6]
)
