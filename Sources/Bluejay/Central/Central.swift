import BluetoothCore
import FoundationEssentials
import GAP
import GATT
import HCI
import Synchronization

/// Many peripherals on one adapter: BlueCap's `CentralManager`, with async/await and
/// `AsyncSequence`s where BlueCap has futures and future streams. For a gateway: one
/// process, one controller, any number of sensors, each a ``Peripheral`` with its own
/// operation queue, connection policy and event stream.
///
/// ```swift
/// let central = try await Central(transport: "hci0")
/// for await discovery in central.startScanning(forServiceUUIDs: [BluetoothUUID(UInt16(0x180D))]) { … }
/// let sensor = central.peripheral(try PeripheralIdentifier("C0:FF:EE:00:00:01/random"))
/// try await sensor.connect(timeoutRetries: 3, disconnectRetries: 5, connectionTimeout: .seconds(10))
/// for try await value in sensor.values(of: heartRate) { … }
/// ```
///
/// Operations on one peripheral run one at a time, in order (Bluejay's rule); operations on
/// different peripherals run concurrently. Connection attempts share the controller's one
/// initiator, so they take turns. How many links the controller holds at once is its own
/// limit: an attempt past it fails with the controller's status (Connection Limit Exceeded,
/// Memory Capacity Exceeded), named.
///
/// The turns are kept by the same `OperationQueue` as ``Bluejay``'s, here on the stack's
/// actor: nothing of a central waits for the main actor, so a gateway keeps streaming while
/// its app's main thread is busy.
@BluetoothActor
public final class Central {
    /// The stack this central runs on (a new one after each ``reset()``).
    public private(set) var host: BluetoothHost
    /// How to open the transport again for ``reset()``: nil for a central handed a host, or
    /// once closed.
    var reopening: Reopening?
    /// The reset under way, if one is: every caller of ``reset()`` meanwhile waits for it.
    var resetting: Task<Result<Void, BluejayError>, Never>?
    /// When a scan first reported each peripheral not asked for yet (at most
    /// ``sightingLimit``): a peripheral made later takes its entry as its `discoveredAt`.
    private var sightings: [PeripheralIdentifier: ContinuousClock.Instant] = [:]
    /// The most sightings kept; past it, the oldest is forgotten.
    nonisolated static let sightingLimit = 1024
    /// Every peripheral asked for, by identifier.
    private var known: [PeripheralIdentifier: Peripheral] = [:]
    /// Connection attempts take turns: the controller has one initiator.
    let initiator = OperationQueue()
    /// The scan of ``startScanning(forServiceUUIDs:capacity:timeout:allowDuplicates:)-(_,_,Duration?,_)``, while one runs.
    private var scan: ScanRun?
    /// Which scan is the current one: a stream that ends stops only its own scan.
    private var scanGeneration = 0
    /// The streams of ``whenStateChanges()``.
    var stateWatchers: [AsyncStream<ManagerState>.Continuation] = []
    /// The state they heard last.
    var announced: ManagerState = .poweredOn

    /// Opens `transport` (`hci0`, `tcp:HOST:PORT`, `mock:FILE`, …) and brings the stack up;
    /// ``reset()`` opens it again the same way. `openTransport`, when given, opens it
    /// instead (as ``StartOptions/openTransport``).
    public convenience init(
        transport: String, capture: String? = nil, store: StoreDirectory = .standard,
        logger: HCILogger = .standardError, openTransport: TransportOpener? = nil
    ) async throws(BluejayError) {
        let reopening = Reopening(
            transport: transport, capture: try BluetoothHost.openCapture(capture), store: store,
            logger: logger, opener: openTransport)
        let host: BluetoothHost
        do { host = try await reopening.open() } catch {
            reopening.capture?.close()
            throw error
        }
        self.init(host: host)
        self.reopening = reopening
    }

    /// A central on a stack already up. It becomes the host's `BluetoothHost.central`
    /// (each peripheral it connects hears of its link's end from the link itself). It
    /// cannot ``reset()``: it did not open the transport.
    public init(host: BluetoothHost) {
        self.host = host
        attach(host)
    }

    /// Runs on `host` from now on: the host's central.
    func attach(_ host: BluetoothHost) {
        self.host = host
        host.register(self)
    }

    /// Stops scanning, ends every link and closes the stack for good (no ``reset()`` after).
    public func close() {
        let capture = reopening?.capture
        reopening = nil
        host.close()
        capture?.close()
        stateChanged()
    }

    /// Bluejay let go of the host: its peripherals no longer report to it.
    func releaseBluejay() {
        for peripheral in known.values { peripheral.releaseBluejay() }
    }

    /// The host closed: the scan and every peripheral's streams end.
    package func hostClosed() {
        endScan(throwing: BluejayError.bluetoothUnavailable)
        for peripheral in known.values { peripheral.closed() }
        stateChanged()
    }

    // MARK: - Scanning

    /// Whether a scan runs (BlueCap's `isScanning`): from ``startScanning(forServiceUUIDs:capacity:timeout:allowDuplicates:)-(_,_,Duration?,_)``
    /// until it is stopped, times out or fails, or its consumer lets go of it.
    public var isScanning: Bool { scan?.isLive ?? false }

    /// Scans (actively) and yields each peripheral advertising one of `uuids` (any, when nil
    /// or empty) once, or every advertisement with `allowDuplicates`. One scan at a time, as
    /// BlueCap's: while one runs (``isScanning``), another fails at once with
    /// `BluejayError.alreadyScanning` (BlueCap's `isScanning` error) and the first goes on.
    /// The stream throws when the scan cannot start (the controller's error) or the
    /// controller is lost (`BluejayError.bluetoothUnavailable`); it ends when
    /// ``stopScanning()`` is called, the consumer stops, or `timeout` has passed (BlueCap's
    /// scan timeout; where BlueCap fails with `serviceScanTimeout` when nothing was found, the
    /// stream here simply ends, empty). At most `capacity` discoveries wait for a consumer
    /// that does not keep up, the newest kept (BlueCap's stream capacity).
    public func startScanning(
        forServiceUUIDs uuids: [BluetoothUUID]? = nil, capacity: Int = .max, timeout: Duration? = nil,
        allowDuplicates: Bool = false
    ) -> AsyncThrowingStream<ScanDiscovery, any Error> {
        startScanning(
            forServiceUUIDs: uuids, capacity: capacity, timeout: timeout, allowDuplicates: allowDuplicates, active: true
        )
    }

    /// ``startScanning(forServiceUUIDs:capacity:timeout:allowDuplicates:)-(_,_,Duration?,_)``,
    /// actively (scan requests: scan responses arrive, merged into each discovery) or, with
    /// `active` false, passively: nothing is sent, so a sensor that only broadcasts spends no
    /// energy answering, and discoveries carry the advertisement alone.
    public func startScanning(
        forServiceUUIDs uuids: [BluetoothUUID]? = nil, capacity: Int = .max, timeout: Duration? = nil,
        allowDuplicates: Bool = false, active: Bool
    ) -> AsyncThrowingStream<ScanDiscovery, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ScanDiscovery, any Error>.makeStream(
            bufferingPolicy: capacity == .max ? .unbounded : .bufferingNewest(max(1, capacity)))
        guard !isScanning else {
            continuation.finish(throwing: BluejayError.alreadyScanning)
            return stream
        }
        scanGeneration += 1
        let generation = scanGeneration
        let run = ScanRun(continuation)
        scan = run
        continuation.onTermination = { _ in
            run.release()
            Task { @BluetoothActor [weak self] in await self?.scanEnded(generation) }
        }
        if let timeout {
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                guard let self, generation == self.scanGeneration else { return }
                await self.stopScanning()
            }
        }
        let uuids = uuids ?? []
        Task {
            if host.scanner.isScanning { try? await host.scanner.stop() }
            guard generation == scanGeneration else { return }
            do throws(HCIError) {
                try await host.scanner.start(
                    ScanOptions(active: active, allowDuplicates: allowDuplicates, services: uuids)
                ) { [weak self] discovery in
                    let found = ScanDiscovery(discovery)
                    self?.sighted(found.peripheralIdentifier)
                    continuation.yield(found)
                }
                await scanStarted(generation)
            } catch {
                // A scan that could not start because the controller was lost says so.
                continuation.finish(
                    throwing: host.controller.failure != nil
                        ? BluejayError.bluetoothUnavailable : BluejayError.hci(error))
            }
        }
        return stream
    }

    /// The scan running, if any, ends with `error` (its controller was lost).
    func endScan(throwing error: BluejayError) {
        scan?.continuation.finish(throwing: error)
        scan = nil
    }

    private func scanEnded(_ generation: Int) async {
        guard generation == scanGeneration else { return }
        await stopScanning()
    }

    /// A scan that started after it was already stopped is stopped again.
    private func scanStarted(_ generation: Int) async {
        if generation != scanGeneration, host.scanner.isScanning, scan == nil { try? await host.scanner.stop() }
    }

    /// Stops the scan.
    public func stopScanning() async {
        scanGeneration += 1
        scan?.continuation.finish()
        scan = nil
        if host.scanner.isScanning { try? await host.scanner.stop() }
    }

    // MARK: - Peripherals

    /// The peripheral object for `identifier` (the same one every time, until a ``reset()``).
    public func peripheral(_ identifier: PeripheralIdentifier) -> Peripheral {
        if let peripheral = known[identifier] { return peripheral }
        let peripheral = Peripheral(
            identifier: identifier, central: self, discoveredAt: sightings.removeValue(forKey: identifier))
        known[identifier] = peripheral
        return peripheral
    }

    /// A scan reported `identifier`: its peripheral's statistics, or a sighting kept for the
    /// peripheral made later, note when it was first seen.
    private func sighted(_ identifier: PeripheralIdentifier) {
        if let peripheral = known[identifier] {
            if peripheral.statistics.discoveredAt == nil { peripheral.statistics.discovered() }
            return
        }
        guard sightings[identifier] == nil else { return }
        if sightings.count >= Self.sightingLimit, let oldest = sightings.min(by: { $0.value < $1.value })?.key {
            sightings[oldest] = nil
        }
        sightings[identifier] = .now
    }

    /// Every peripheral asked for (BlueCap's `retrievePeripherals()`).
    public func retrievePeripherals() -> [Peripheral] {
        known.values.sorted { $0.identifier.description < $1.identifier.description }
    }

    /// The peripherals connected now (BlueCap's `retrieveConnectedPeripherals`).
    public func retrieveConnectedPeripherals() -> [Peripheral] {
        host.controller.links.compactMap { $0.attachment(for: self, as: LinkedPeripheral.self)?.peripheral }
            .sorted { $0.identifier.description < $1.identifier.description }
    }

    /// The peripherals connected now with one of `services` among what discovery found on
    /// their link (a service not discovered yet does not count: BlueCap's
    /// `retrieveConnectedPeripherals(withServices:)`).
    public func retrieveConnectedPeripherals(withServices services: [BluetoothUUID]) -> [Peripheral] {
        retrieveConnectedPeripherals().filter { peripheral in
            guard let handle = peripheral.handle, let client = host.existingClient(for: handle) else { return false }
            return client.discoveredServices.contains { services.contains($0.uuid) }
        }
    }

    /// The known peripherals whose `PeripheralIdentifier.uuid` is one of `identifiers`
    /// (BlueCap's `retrievePeripherals(withIdentifiers:)`; on Linux the UUID stands for an
    /// address, see `PeripheralIdentifier.uuid`).
    public func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [Peripheral] {
        retrievePeripherals().filter { identifiers.contains($0.identifier.uuid) }
    }

    /// Forgets every peripheral (a ``reset()``): their links went with the host.
    func forgetAll() {
        known = [:]
    }

    /// Forgets `peripheral` (``Peripheral/terminate()``): the next ``peripheral(_:)`` for its
    /// identifier makes a new one.
    func forget(_ peripheral: Peripheral) {
        if known[peripheral.identifier] === peripheral { known[peripheral.identifier] = nil }
    }

    /// `peripheral` is on `handle`'s link: kept on the link, it hears of the link's end.
    func linkUp(_ handle: ConnectionHandle, for peripheral: Peripheral) {
        _ = host.controller.link(handle)?.attachment(for: self, layer: .host) { LinkedPeripheral(peripheral) }
    }

    /// Lets go of every link of `host`'s, whose ends are no longer the peripherals' news
    /// (a ``reset()`` closing the old stack).
    func letGoOfLinks(of host: BluetoothHost) {
        for link in host.controller.links { link.detach(self) }
    }
}

/// The peripheral on one link, kept on the link: the link's end is the peripheral's.
private final class LinkedPeripheral: LinkAttachment {
    let peripheral: Peripheral

    init(_ peripheral: Peripheral) { self.peripheral = peripheral }

    func linkClosed(_ link: Link, _ reason: HCIStatus) { peripheral.linkEnded(reason: reason) }
}

/// One scan of ``Central/startScanning(forServiceUUIDs:capacity:timeout:allowDuplicates:)-(_,_,Duration?,_)``:
/// its stream, and whether its consumer has let go of it. That is known at once, on the
/// consumer's thread, where the stream's termination runs: a scan asked for right after the
/// last one's consumer stopped is not refused while the stack's actor catches up.
private final class ScanRun: Sendable {
    let continuation: AsyncThrowingStream<ScanDiscovery, any Error>.Continuation
    private let released = Mutex(false)

    init(_ continuation: AsyncThrowingStream<ScanDiscovery, any Error>.Continuation) {
        self.continuation = continuation
    }

    /// The consumer let go of the stream, or it ended.
    func release() { released.withLock { $0 = true } }

    /// Whether the scan still has its consumer.
    var isLive: Bool { !released.withLock { $0 } }
}
