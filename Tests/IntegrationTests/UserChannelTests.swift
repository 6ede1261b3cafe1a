import BluetoothCore
import Foundation
@testable import HCI
import Synchronization
import HCITestSupport
import TestTraits
import Testing

/// The HCI user channel against a real Linux kernel. These need the `make vmtest` guest:
/// a Debian kernel with `hci_vhci`, where `Fixtures/vm/scenarios.sh` has attached two
/// virtual controllers (`btvirt -l2`: hci0 and hci1) and sets `BLUEJAY_VM=1`. On any other
/// machine they are reported as disabled, not passed: the host kernel has no Bluetooth.
@Suite(
    "User channel on a real kernel", .serialized, .hangGuard,
    .enabled(
        if: ProcessInfo.processInfo.environment["BLUEJAY_VM"] == "1",
        "runs only in the make vmtest guest (BLUEJAY_VM=1), where hci_vhci controllers exist"))
struct UserChannelTests {
    /// Brings the controller on `spec` up and closes it again.
    static func bringUp(_ spec: TransportSpec) async throws -> ControllerInfo {
        let transport = try spec.open()
        return try await Task { @BluetoothActor in
            let controller = HCIController(transport: transport)
            defer { controller.close() }
            return try await controller.start()
        }.value
    }

    /// The adapters the kernel lists in sysfs, read independently of the code under test.
    static func kernelAdapters() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/bluetooth")) ?? []
        return names.filter { $0.hasPrefix("hci") && !$0.contains(":") }.sorted()
    }

    /// The BD_ADDR the kernel itself read during its own init of `adapter` (`hciconfig`).
    static func kernelAddress(_ adapter: String) async throws -> String {
        let hciconfig = try #require(which("hciconfig"), "hciconfig (Debian package bluez) is not installed")
        let result = try await run(hciconfig, [adapter])
        let line = try #require(
            result.stdout.split(separator: "\n").first { $0.contains("BD Address:") },
            "hciconfig \(adapter): \(result.stdout) \(result.stderr)")
        let fields = line.split(separator: " ")
        return String(try #require(fields.firstIndex(of: "Address:").map { fields[$0 + 1] }))
    }

    @Test("hci0 comes up over the user channel and reports the address the kernel saw")
    func bringUpOnHci0() async throws {
        let info = try await Self.bringUp(.userChannel(index: 0))
        let kernelAddress = try await Self.kernelAddress("hci0")
        #expect(info.address.description == kernelAddress)
        #expect(info.aclBuffers.count > 0)
        #expect(info.leFeatures.rawValue != 0)
    }

    @Test("A second open of hci0 while we hold it fails with EBUSY and says who holds it")
    func secondOpenIsBusy() async throws {
        let first = try TransportSpec.userChannel(index: 0).open()
        defer { first.close() }
        let error = expectError(TransportError.self) { _ = try TransportSpec.userChannel(index: 0).open() }
        #expect(error == .adapterBusy(adapter: "hci0"))
        #expect(error?.description.hasPrefix("hci0 is busy (EBUSY): bluetoothd or another program holds it") == true)
    }

    @Test("hci7 fails with ENODEV and lists the adapters the kernel has")
    func missingAdapterListsThePresentOnes() async throws {
        let present = Self.kernelAdapters()
        #expect(
            present.contains("hci0") && present.contains("hci1"),
            "btvirt -l2 should have attached hci0 and hci1: \(present)")
        let error = expectError(TransportError.self) { _ = try TransportSpec.userChannel(index: 7).open() }
        #expect(error == .noSuchAdapter(adapter: "hci7", present: present))
        #expect(error?.description == "no adapter hci7 (ENODEV); adapters present: \(present.joined(separator: ", "))")
    }

    @Test("Closing the transport releases hci0 at once")
    func reopenAfterClose() async throws {
        _ = try await Self.bringUp(.userChannel(index: 0))
        _ = try await Self.bringUp(.userChannel(index: 0))
    }

    @Test("After bluejay exits, normally or by SIGKILL, the next open of hci0 works")
    func reopenAfterProcessExit() async throws {
        let normal = try await run(Repository.bluejay, ["info", "--transport", "hci0"])
        #expect(normal.status == 0, "stderr: \(normal.stderr)")
        _ = try await Self.bringUp(.userChannel(index: 0))

        // A scan that would run for minutes, killed once it holds the adapter (it has sent a
        // command, so its bind succeeded).
        let log = NSTemporaryDirectory() + "bluejay-scan-\(UUID().uuidString).log"
        try #require(FileManager.default.createFile(atPath: log, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: log) }
        let scan = Process()
        scan.executableURL = Repository.bluejay
        scan.arguments = ["scan", "--transport", "hci0", "--duration", "600", "--verbose"]
        scan.standardInput = FileHandle.nullDevice
        scan.standardOutput = FileHandle.nullDevice
        scan.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try scan.run()
        defer { if scan.isRunning { kill(scan.processIdentifier, SIGKILL); scan.waitUntilExit() } }
        let deadline = ContinuousClock.now + .seconds(60)
        var stderr = ""
        while ContinuousClock.now < deadline, scan.isRunning {
            stderr = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if stderr.contains("bluejay: debug: < ") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        try #require(
            scan.isRunning && stderr.contains("bluejay: debug: < "), "the scan never sent a command: \(stderr)")
        // While it runs, hci0 is taken.
        #expect(throws: TransportError.adapterBusy(adapter: "hci0")) { try TransportSpec.userChannel(index: 0).open() }
        kill(scan.processIdentifier, SIGKILL)
        await waitUntilExit(scan)
        #expect(scan.terminationReason == .uncaughtSignal && scan.terminationStatus == SIGKILL)
        _ = try await Self.bringUp(.userChannel(index: 0))
    }

    @Test("An open that starts before the adapter exists rides out ENODEV and the kernel's init")
    func transientInitIsRetried() async throws {
        let btvirt = try #require(which("btvirt"), "btvirt (Debian package bluez-test-tools) is not installed")
        // The index the next controller will get: one past the highest the kernel has.
        let indices = Self.kernelAdapters().compactMap { UInt16($0.dropFirst(3)) }
        let index = (indices.max() ?? 0) + 1
        let name = "hci\(index)"
        // Open first, as a service started at boot would, before the controller is attached.
        let retried = Mutex<[Int32]>([])
        // The open that waits on a clock (the stack's): the blocking one would hold a thread of
        // the cooperative pool between its binds, and a one-CPU machine's pool has one thread,
        // so the task that starts btvirt below would wait until the retries ran out.
        let opening = Task.detached { () async throws(TransportError) -> Int32 in
            try await UserChannel.open(index: index, clock: ContinuousClock()) { code in
                retried.withLock { $0.append(code) }
            }
        }
        let deadline = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < deadline, retried.withLock({ $0.isEmpty }) {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(retried.withLock { $0.first } == ENODEV, "the first bind should find no \(name) yet")

        let emulator = Process()
        emulator.executableURL = btvirt
        emulator.arguments = ["-L", "-l1"]
        emulator.standardInput = FileHandle.nullDevice
        emulator.standardOutput = FileHandle.nullDevice
        emulator.standardError = FileHandle.nullDevice
        try emulator.run()
        defer {
            emulator.terminate()
            emulator.waitUntilExit()
        }
        let descriptor = try await opening.value
        let codes = retried.withLock { $0 }
        print(
            "\(name): bound after \(codes.filter { $0 == ENODEV }.count) ENODEV and \(codes.filter { $0 == EBUSY }.count) EBUSY retries"
        )
        let transport = FileDescriptorTransport(descriptor: descriptor, name: name, framerLimit: 65535)
        let info = try await Task { @BluetoothActor in
            let controller = HCIController(transport: transport)
            defer { controller.close() }
            return try await controller.start()
        }.value
        let kernelAddress = try await Self.kernelAddress(name)
        #expect(info.address.description == kernelAddress)
    }
}
