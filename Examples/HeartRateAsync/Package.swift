// swift-tools-version:6.0
// An app's package: it depends on Bluejay for Linux by path, as yours would by URL.
import PackageDescription

let package = Package(
    name: "HeartRateAsync",
    dependencies: [.package(name: "Bluejay", path: "../..")],
    targets: [
        .executableTarget(
            name: "HeartRateAsync", dependencies: [.product(name: "Bluejay", package: "Bluejay")],
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")])
    ]
)
