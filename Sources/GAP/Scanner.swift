import BluetoothCore
import HCI

/// What a scan is looking for.
public struct ScanOptions: Sendable, Equatable {
    /// Active scanning sends scan requests, so scan responses (names, more UUIDs) arrive.
    public var active: Bool
    /// Time between scan starts, in units of 0.625 ms (default 0x0060: 60 ms).
    public var interval: UInt16
    /// Listening time within each interval, in units of 0.625 ms (default 0x0030: 30 ms).
    public var window: UInt16
    /// Report every advertisement (RSSI tracking) instead of one discovery per peripheral.
    public var allowDuplicates: Bool
    /// Report only peripherals advertising at least one of these services; empty: all.
    public var services: [BluetoothUUID]

    /// Scan options; the defaults are an active scan, one discovery per peripheral.
    public init(
        active: Bool = true, interval: UInt16 = 0x0060, window: UInt16 = 0x0030,
        allowDuplicates: Bool = false, services: [BluetoothUUID] = []
    ) {
        (self.active, self.interval, self.window, self.allowDuplicates, self.services) =
            (active, interval, window, allowDuplicates, services)
    }
}

/// A peripheral seen while scanning: its advertisement merged with its scan response.
public struct Discovery: Sendable, Equatable {
    /// The advertiser's address.
    public var address: BluetoothAddress
    /// Its address type.
    public var addressType: AddressType
    /// Signal strength of the latest report, in dBm.
    public var rssi: Int8?
    /// Advertised TX power from an extended report, in dBm.
    public var txPower: Int8?
    /// Whether the peripheral accepts connections.
    public var connectable: Bool
    /// The advertising data, with the scan response's structures after it when one came.
    public var advertisement: AdvertisingData
    /// Whether a scan response is merged in.
    public var hasScanResponse: Bool
}

/// Finds advertising peripherals: extended scanning when the controller has it, legacy
/// otherwise; duplicate handling on the host; each scan response merged with its
/// advertisement into one ``Discovery``.
@BluetoothActor
public final class Scanner {
    private enum State {
        case idle
        case scanning(ScanOptions, extended: Bool, observer: Int)
    }

    private struct PeerKey: Hashable {
        var address: BluetoothAddress
        var type: AddressType
    }

    private let controller: HCIController
    private var state: State = .idle
    private var onDiscovery: ((Discovery) -> Void)?
    /// Scannable advertisements waiting for their scan response (active scans).
    private var awaitingResponse: [PeerKey: AdvertisingReport] = [:]
    /// Extended advertising data arriving in several reports.
    private var fragments: [PeerKey: [UInt8]] = [:]
    private var reported: Set<PeerKey> = []
    private var logger: HCILogger

    /// A scanner on a running controller.
    public init(controller: HCIController, logger: HCILogger = .standardError) {
        self.controller = controller
        self.logger = logger.layer("hci")
    }

    /// Whether a scan is running.
    public var isScanning: Bool { if case .scanning = state { true } else { false } }

    /// Starts scanning; `onDiscovery` is called for every discovery until ``stop()``.
    public func start(_ options: ScanOptions = ScanOptions(), onDiscovery: @escaping (Discovery) -> Void)
        async throws(HCIError)
    {
        guard case .idle = state else { return }
        guard let info = controller.info else { throw .notRunning }
        let extended =
            info.leFeatures.contains(.extendedAdvertising)
            && info.supportedCommands.supports(LESetExtendedScanParameters.self)
            && info.supportedCommands.supports(LESetExtendedScanEnable.self)
        let type: LEScanType = options.active ? .active : .passive
        if extended {
            try await controller.send(
                LESetExtendedScanParameters(phys: [
                    .init(scanType: type, interval: options.interval, window: options.window)
                ]))
        } else {
            try await controller.send(
                LESetScanParameters(scanType: type, interval: options.interval, window: options.window))
        }
        self.onDiscovery = onDiscovery
        awaitingResponse = [:]
        fragments = [:]
        reported = []
        let observer = controller.addEventObserver { [weak self] event in self?.handle(event) }
        state = .scanning(options, extended: extended, observer: observer)
        // The controller filters repeats too when duplicates are not wanted: less traffic.
        do {
            if extended {
                try await controller.send(
                    LESetExtendedScanEnable(enable: true, filterDuplicates: options.allowDuplicates ? 0 : 1))
            } else {
                try await controller.send(LESetScanEnable(enable: true, filterDuplicates: !options.allowDuplicates))
            }
        } catch {
            controller.removeEventObserver(observer)
            state = .idle
            throw error
        }
    }

    /// Stops scanning. Advertisements still waiting for a scan response are reported first.
    public func stop() async throws(HCIError) {
        guard case let .scanning(_, extended, observer) = state else { return }
        for report in awaitingResponse.values { emit(report, scanResponse: nil) }
        awaitingResponse = [:]
        controller.removeEventObserver(observer)
        state = .idle
        onDiscovery = nil
        if extended {
            try await controller.send(LESetExtendedScanEnable(enable: false, filterDuplicates: 0))
        } else {
            try await controller.send(LESetScanEnable(enable: false, filterDuplicates: false))
        }
    }

    private func handle(_ event: HCIEvent) {
        guard case .leMeta(let meta) = event else { return }
        let reports: [AdvertisingReport]
        do {
            guard let decoded = try AdvertisingReport.decode(meta) else { return }
            reports = decoded
        } catch {
            logger.log(
                .warning,
                "malformed \(meta.name): \(error); \(logger.hexDump(meta.parameters, secrets: HCISecretFields.leSubevent(meta.subeventCode)))"
            )
            return
        }
        for report in reports { handle(report) }
    }

    private func handle(_ incoming: AdvertisingReport) {
        guard case let .scanning(options, _, _) = state else { return }
        var report = incoming
        let key = PeerKey(address: report.address, type: report.addressType)
        // Extended advertising data may come in pieces: hold them until the last one.
        if report.dataStatus == 1 {
            fragments[key, default: []] += report.data
            return
        }
        if let head = fragments.removeValue(forKey: key) { report.data = head + report.data }
        if report.dataStatus == 2 {
            logger.log(.info, "advertising data of \(report.address) was truncated by the controller")
        }

        if report.isScanResponse {
            emit(awaitingResponse.removeValue(forKey: key) ?? report, scanResponse: report)
        } else if options.active && report.scannable {
            // Hold it for its scan response; a newer advertisement releases the older one.
            if let earlier = awaitingResponse.updateValue(report, forKey: key) { emit(earlier, scanResponse: nil) }
        } else {
            emit(report, scanResponse: nil)
        }
    }

    private func emit(_ advertisement: AdvertisingReport, scanResponse: AdvertisingReport?) {
        guard case let .scanning(options, _, _) = state else { return }
        let key = PeerKey(address: advertisement.address, type: advertisement.addressType)
        var data = AdvertisingData(parsing: advertisement.isScanResponse ? [] : advertisement.data)
        if let scanResponse { data = data.merging(AdvertisingData(parsing: scanResponse.data)) }
        if let problem = data.problem { logger.log(.info, "advertising data of \(advertisement.address): \(problem)") }
        if !options.services.isEmpty, !data.serviceUUIDs.contains(where: options.services.contains) { return }
        if !options.allowDuplicates {
            guard reported.insert(key).inserted else { return }
        }
        onDiscovery?(
            Discovery(
                address: advertisement.address, addressType: advertisement.addressType,
                rssi: scanResponse?.rssi ?? advertisement.rssi, txPower: advertisement.txPower,
                connectable: advertisement.connectable, advertisement: data,
                hasScanResponse: scanResponse != nil))
    }
}
