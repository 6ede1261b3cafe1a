import BluetoothCore

/// What a central may do with our advertising.
public enum AdvertisingKind: String, Sendable, Equatable, CaseIterable {
    /// Connectable and scannable undirected (ADV_IND): a central may connect or ask for the
    /// scan response.
    case connectable
    /// Scannable, not connectable (ADV_SCAN_IND).
    case scannable
    /// Neither: a broadcast (ADV_NONCONN_IND, a beacon).
    case nonConnectable
}

/// The address our advertising carries.
public enum OwnAddress: Sendable, Equatable {
    /// The controller's public address.
    case `public`
    /// A static random address (the two top bits 0b11), set on the controller first.
    case staticRandom(BluetoothAddress)

    /// Own_Address_Type: 0x00 public, 0x01 random.
    var addressType: UInt8 {
        switch self {
        case .public: 0x00
        case .staticRandom: 0x01
        }
    }
}

/// How advertising runs: kind, interval, address, power and PHYs.
public struct AdvertisingParameters: Sendable, Equatable {
    /// Connectable, scannable or neither.
    public var kind: AdvertisingKind
    /// Shortest interval, units of 0.625 ms (at least 0x0020, 20 ms).
    public var intervalMin: UInt32
    /// Longest interval, units of 0.625 ms (legacy commands: at most 0x4000, 10.24 s).
    public var intervalMax: UInt32
    /// The address advertised.
    public var ownAddress: OwnAddress
    /// The TX power asked for in dBm, or nil for the controller's choice (extended
    /// advertising only; legacy commands have no such field).
    public var txPower: Int8?
    /// With extended advertising commands: send legacy PDUs (what every scanner hears; data
    /// and scan response at most 31 octets each). False sends extended PDUs, whose data may
    /// be longer but which only an extended scanner sees.
    public var legacyPDUs: Bool
    /// Primary PHY for extended PDUs: 0x01 LE 1M, 0x03 LE Coded.
    public var primaryPHY: UInt8
    /// Secondary PHY for extended PDUs: 0x01 LE 1M, 0x02 LE 2M, 0x03 LE Coded.
    public var secondaryPHY: UInt8

    /// Connectable advertising every 100 ms from the public address, legacy PDUs, LE 1M.
    public init(kind: AdvertisingKind = .connectable, intervalMin: UInt32 = 0xA0, intervalMax: UInt32 = 0xA0,
                ownAddress: OwnAddress = .public, txPower: Int8? = nil, legacyPDUs: Bool = true,
                primaryPHY: UInt8 = 0x01, secondaryPHY: UInt8 = 0x01) {
        self.kind = kind
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.ownAddress = ownAddress
        self.txPower = txPower
        self.legacyPDUs = legacyPDUs
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
    }
}

/// When advertising starts again by itself after a central connected (a connection stops
/// connectable advertising in the controller).
public enum AdvertisingResumption: String, Sendable, Equatable {
    /// Never: the app starts it again.
    case never
    /// When the link a central made from our advertising ends.
    case afterDisconnection
    /// At once, so that more centrals can connect (where the controller allows several
    /// links as peripheral); and again after a disconnection.
    case afterConnection
}

/// Why advertising could not start or change.
public enum AdvertisingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The data or scan response is longer than the PDU or the controller allows.
    case dataTooLong(what: String, length: Int, maximum: Int)
    /// The controller has neither legacy nor extended advertising commands, or lacks what
    /// the parameters ask for.
    case notSupported(String)
    /// The parameters break the specification's rules.
    case invalidParameters(String)
    /// Not advertising (update, or a stop with nothing to stop).
    case notAdvertising
    /// A command failed.
    case hci(HCIError)

    /// Readable, with codes by name.
    public var description: String {
        switch self {
        case let .dataTooLong(what, length, maximum): "\(what) is \(length) octets; at most \(maximum) fit"
        case let .notSupported(what): "not supported by the controller: \(what)"
        case let .invalidParameters(what): "invalid advertising parameters: \(what)"
        case .notAdvertising: "not advertising"
        case let .hci(error): error.description
        }
    }
}

/// Our advertising as a peripheral (Core Vol 4, Part E, 7.8.5–7.8.9 legacy, 7.8.52–7.8.60
/// extended; Vol 3, Part C, 11 for the data): one advertising set, started, updated and
/// stopped. The command set is chosen from the controller's supported-commands mask and LE
/// features: extended advertising when both list it, otherwise legacy.
///
/// A connection a central makes from connectable advertising stops it in the controller;
/// ``resumption`` says whether the advertiser starts it again.
@BluetoothActor
public final class Advertiser {
    /// Which HCI commands drive the set.
    public enum Commands: String, Sendable, Equatable {
        /// LE Set Advertising Parameters / Data / Scan Response Data / Enable.
        case legacy
        /// An extended advertising set (handle 0).
        case extended
    }

    /// What the advertiser is doing; each state keeps what it needs to go on.
    public enum State: Sendable, Equatable {
        /// Nothing configured, or stopped by the app.
        case idle
        /// Advertising with this configuration.
        case advertising(Configuration)
        /// A central connected, which stopped the advertising; it may resume.
        case stoppedByConnection(Configuration)
    }

    /// One set's configuration, as sent to the controller.
    public struct Configuration: Sendable, Equatable {
        /// The advertising data.
        public var data: AdvertisingData
        /// The scan response (scannable kinds only).
        public var scanResponse: AdvertisingData
        /// The parameters.
        public var parameters: AdvertisingParameters
    }

    /// The advertising set used with extended commands.
    public nonisolated static let setHandle: UInt8 = 0

    private let controller: HCIController
    private let logger: HCILogger
    private var observer: Int?
    /// The state now.
    public private(set) var state = State.idle
    /// Whether advertising starts again by itself after a connection.
    public var resumption = AdvertisingResumption.afterDisconnection
    /// The links centrals made to us from our advertising, still up.
    public private(set) var links: Set<ConnectionHandle> = []
    /// Called with the handle and the central's address of each link a central makes to
    /// us (LE Connection Complete, role peripheral).
    public var onConnection: ((ConnectionHandle, BluetoothAddress) -> Void)?
    /// Called when a link a central made to us ends, with the reason.
    public var onDisconnection: ((ConnectionHandle, HCIStatus) -> Void)?

    /// An advertiser on `controller`, watching its events for connections from now on.
    public init(controller: HCIController, logger: HCILogger = .standardError) {
        self.controller = controller
        self.logger = logger.layer("hci")
        observer = controller.addEventObserver { [weak self] event in self?.handle(event) }
    }

    /// Stops watching events (the controller's advertising is left as it is).
    public func close() {
        if let observer { controller.removeEventObserver(observer) }
        observer = nil
        state = .idle
    }

    /// The command set this controller takes: extended when the LE Extended Advertising
    /// feature and LE Set Extended Advertising Parameters are both listed, legacy when LE
    /// Set Advertising Parameters is, nil when neither.
    public var commands: Commands? {
        guard let info = controller.info else { return nil }
        if info.leFeatures.contains(.extendedAdvertising), info.supportedCommands.supports(LESetExtendedAdvertisingParameters.opcode) == true {
            return .extended
        }
        return info.supportedCommands.supports(LESetAdvertisingParameters.self) ? .legacy : nil
    }

    /// Whether advertising runs now.
    public var isAdvertising: Bool { if case .advertising = state { true } else { false } }

    /// Configures the set and starts advertising `data` (and `scanResponse` for the
    /// scannable kinds). Advertising already running is replaced.
    public func start(data: AdvertisingData, scanResponse: AdvertisingData = AdvertisingData(),
                      parameters: AdvertisingParameters = AdvertisingParameters()) async throws(AdvertisingError) {
        let configuration = Configuration(data: data, scanResponse: scanResponse, parameters: parameters)
        guard let commands else { throw .notSupported("LE advertising commands") }
        try await check(configuration, commands)
        if case .advertising = state { try await enable(false, commands) }
        state = .idle
        try await configure(configuration, commands)
        try await enable(true, commands)
        state = .advertising(configuration)
    }

    /// Replaces the advertising data and scan response while advertising (or while stopped
    /// by a connection, for when it resumes). Legacy commands may change data while
    /// advertising; so may extended ones, in one fragment.
    public func update(data: AdvertisingData, scanResponse: AdvertisingData) async throws(AdvertisingError) {
        guard let commands else { throw .notSupported("LE advertising commands") }
        let current: Configuration
        switch state {
        case .idle: throw .notAdvertising
        case let .advertising(configuration), let .stoppedByConnection(configuration): current = configuration
        }
        var next = current
        next.data = data
        next.scanResponse = scanResponse
        try await check(next, commands)
        try await setData(next, commands)
        switch state {
        case .idle: break
        case .advertising: state = .advertising(next)
        case .stoppedByConnection: state = .stoppedByConnection(next)
        }
    }

    /// Stops advertising; it does not resume by itself until started again.
    public func stop() async throws(AdvertisingError) {
        guard let commands else { throw .notSupported("LE advertising commands") }
        let wasAdvertising = isAdvertising
        state = .idle
        if wasAdvertising { try await enable(false, commands) }
    }

    // MARK: - Commands

    /// The longest data one PDU of `parameters` carries.
    private func maximumDataLength(_ parameters: AdvertisingParameters, _ commands: Commands) async throws(AdvertisingError) -> Int {
        if commands == .legacy || parameters.legacyPDUs { return LESetAdvertisingData.maximumLength }
        guard controller.info?.supportedCommands.supports(LEReadMaximumAdvertisingDataLength.self) ?? false else {
            return LESetAdvertisingData.maximumLength
        }
        do { return Int(try await controller.send(LEReadMaximumAdvertisingDataLength()).maximumLength) } catch { throw .hci(error) }
    }

    private func check(_ configuration: Configuration, _ commands: Commands) async throws(AdvertisingError) {
        let parameters = configuration.parameters
        guard parameters.intervalMin >= 0x20, parameters.intervalMin <= parameters.intervalMax else {
            throw .invalidParameters("interval \(parameters.intervalMin)–\(parameters.intervalMax) × 0.625 ms")
        }
        if commands == .legacy {
            guard parameters.intervalMax <= 0x4000 else { throw .invalidParameters("legacy advertising interval above 10.24 s") }
            guard parameters.primaryPHY == 1, parameters.secondaryPHY == 1, parameters.legacyPDUs else {
                throw .notSupported("extended advertising PDUs and PHYs (the controller has legacy advertising only)")
            }
        }
        if !parameters.legacyPDUs, parameters.kind == .connectable, !configuration.scanResponse.structures.isEmpty {
            // Extended connectable advertising cannot be scannable (7.8.53).
            throw .invalidParameters("extended connectable advertising has no scan response")
        }
        if parameters.kind == .nonConnectable, !configuration.scanResponse.structures.isEmpty {
            throw .invalidParameters("non-connectable, non-scannable advertising has no scan response")
        }
        let maximum = try await maximumDataLength(parameters, commands)
        let data = configuration.data.encoded(), response = configuration.scanResponse.encoded()
        guard data.count <= maximum else { throw .dataTooLong(what: "advertising data", length: data.count, maximum: maximum) }
        guard response.count <= maximum else { throw .dataTooLong(what: "scan response data", length: response.count, maximum: maximum) }
    }

    private func send<C: HCICommand>(_ command: C) async throws(AdvertisingError) -> C.ReturnParameters {
        do { return try await controller.send(command) } catch { throw .hci(error) }
    }

    private func configure(_ configuration: Configuration, _ commands: Commands) async throws(AdvertisingError) {
        let parameters = configuration.parameters
        switch commands {
        case .legacy:
            if case let .staticRandom(address) = parameters.ownAddress { _ = try await send(LESetRandomAddress(address: address)) }
            let type: LESetAdvertisingParameters.AdvertisingType = switch parameters.kind {
            case .connectable: .connectableUndirected
            case .scannable: .scannableUndirected
            case .nonConnectable: .nonConnectableUndirected
            }
            _ = try await send(LESetAdvertisingParameters(intervalMin: UInt16(parameters.intervalMin), intervalMax: UInt16(parameters.intervalMax),
                                                          advertisingType: type, ownAddressType: parameters.ownAddress.addressType))
        case .extended:
            var properties: AdvertisingEventProperties = parameters.legacyPDUs ? [.legacy] : []
            switch parameters.kind {
            case .connectable: properties.insert(parameters.legacyPDUs ? [.connectable, .scannable] : [.connectable])
            case .scannable: properties.insert(.scannable)
            case .nonConnectable: break
            }
            let command = LESetExtendedAdvertisingParameters(
                advertisingHandle: Self.setHandle, eventProperties: properties, intervalMin: parameters.intervalMin,
                intervalMax: parameters.intervalMax, ownAddressType: parameters.ownAddress.addressType, txPower: parameters.txPower ?? 0x7F,
                primaryPHY: parameters.primaryPHY, secondaryPHY: parameters.secondaryPHY)
            let selected = try await send(command).selectedTxPower
            logger.log(.debug, "advertising set \(Self.setHandle): TX power \(selected) dBm")
            if case let .staticRandom(address) = parameters.ownAddress {
                _ = try await send(LESetAdvertisingSetRandomAddress(advertisingHandle: Self.setHandle, address: address))
            }
        }
        try await setData(configuration, commands)
    }

    /// Sends the data and, for the scannable kinds, the scan response.
    private func setData(_ configuration: Configuration, _ commands: Commands) async throws(AdvertisingError) {
        let data = configuration.data.encoded(), response = configuration.scanResponse.encoded()
        let scannable = configuration.parameters.kind == .scannable || (configuration.parameters.kind == .connectable && configuration.parameters.legacyPDUs)
        switch commands {
        case .legacy:
            _ = try await send(LESetAdvertisingData(data: data))
            if scannable { _ = try await send(LESetScanResponseData(data: response)) }
        case .extended:
            for (operation, part) in AdvertisingDataOperation.fragments(of: data) {
                _ = try await send(LESetExtendedAdvertisingData(advertisingHandle: Self.setHandle, operation: operation, data: part))
            }
            if scannable {
                for (operation, part) in AdvertisingDataOperation.fragments(of: response) {
                    _ = try await send(LESetExtendedScanResponseData(advertisingHandle: Self.setHandle, operation: operation, data: part))
                }
            }
        }
    }

    private func enable(_ on: Bool, _ commands: Commands) async throws(AdvertisingError) {
        switch commands {
        case .legacy: _ = try await send(LESetAdvertisingEnable(enable: on))
        case .extended: _ = try await send(LESetExtendedAdvertisingEnable(enable: on, sets: [.init(advertisingHandle: Self.setHandle)]))
        }
    }

    // MARK: - Connections

    private func handle(_ event: HCIEvent) {
        switch event {
        case let .leMeta(meta):
            guard let decoded = try? LEConnectionEvent.decode(meta), case let .connectionComplete(status, handle, role, _, peer, _) = decoded,
                  status.isSuccess, role == 0x01 else { return }
            links.insert(handle)
            // The controller stopped connectable advertising when the central connected.
            if case let .advertising(configuration) = state, configuration.parameters.kind == .connectable {
                state = .stoppedByConnection(configuration)
                if resumption == .afterConnection { resume() }
            }
            onConnection?(handle, peer)
        case let .disconnectionComplete(disconnection) where disconnection.status.isSuccess:
            guard links.remove(disconnection.handle) != nil else { return }
            if case .stoppedByConnection = state, resumption != .never { resume() }
            onDisconnection?(disconnection.handle, disconnection.reason)
        default:
            break
        }
    }

    /// Enables the configured set again (parameters and data stay in the controller).
    private func resume() {
        guard case let .stoppedByConnection(configuration) = state, let commands else { return }
        state = .advertising(configuration)
        Task { @BluetoothActor [weak self] in
            do throws(AdvertisingError) { try await self?.enable(true, commands) } catch {
                // E.g. a controller that takes no second link as peripheral: it says so here.
                self?.logger.log(.warning, "resuming advertising: \(error)")
                if let self, case .advertising(configuration) = self.state { self.state = .stoppedByConnection(configuration) }
            }
        }
    }
}
