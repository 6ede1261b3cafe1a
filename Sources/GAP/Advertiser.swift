import BluetoothCore
import HCI

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
        /// Advertising paused a moment while the set's resolvable private address is
        /// renewed (a connectable set's random address cannot change while it runs); it
        /// runs again at the new address.
        case renewingAddress(Configuration)
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
    public var links: Set<ConnectionHandle> {
        Set(controller.links.filter { $0.attachment(for: self, as: AdvertisedLink.self) != nil }.map(\.handle))
    }

    /// What the advertiser keeps on a link a central made from our advertising: our address
    /// on it, as the central connected to it.
    private final class AdvertisedLink: LinkAttachment {
        weak var advertiser: Advertiser?
        let localAddress: (type: AddressType, address: BluetoothAddress)

        init(_ advertiser: Advertiser, localAddress: (type: AddressType, address: BluetoothAddress)) {
            (self.advertiser, self.localAddress) = (advertiser, localAddress)
        }

        func linkClosed(_ link: Link, _ reason: HCIStatus) { advertiser?.linkEnded(link.handle, reason) }
    }
    /// The random address set for our advertising now (static or resolvable private), or
    /// nil while we advertise from the public address.
    public private(set) var randomAddress: BluetoothAddress?
    /// Makes a resolvable private address with our IRK, for ``OwnAddress/resolvablePrivate(renewal:)``
    /// (the Security Manager, which holds the IRK, is above this layer).
    public var privateAddressSource: (() -> BluetoothAddress?)?
    /// Called with each new resolvable private address once the controller advertises
    /// from it.
    public var onAddressRenewed: ((BluetoothAddress) -> Void)?
    /// The advertiser's timers (the private address's renewal), on the controller's clock.
    private let deadlines: Deadlines
    /// The next renewal of the resolvable private address, while one is due.
    private var renewal: Deadlines.Token?
    /// Counts cancelled renewals: one under way then does not schedule the next.
    private var renewalGeneration = 0
    /// The enable that resumes advertising after a link, while it is on its way: a renewal
    /// waits for it, so its disable cannot overtake it and leave the set running while its
    /// address changes.
    private var resuming: Task<Void, Never>?
    /// Called with the handle and the central's address of each link a central makes to
    /// us (LE Connection Complete, role peripheral).
    public var onConnection: ((ConnectionHandle, BluetoothAddress) -> Void)?
    /// Called when a link a central made to us ends, with the reason.
    public var onDisconnection: ((ConnectionHandle, HCIStatus) -> Void)?

    /// An advertiser on `controller`, watching its events for connections from now on.
    public init(controller: HCIController, logger: HCILogger = .standardError) {
        self.controller = controller
        self.logger = logger.layer("hci")
        deadlines = Deadlines(clock: controller.clock)
        observer = controller.addLEConnectionObserver { [weak self] event, meta in self?.handle(event, meta) }
    }

    /// Stops watching events (the controller's advertising is left as it is).
    public func close() {
        if let observer { controller.removeEventObserver(observer) }
        observer = nil
        for link in controller.links { link.detach(self) }
        cancelRenewal()
        state = .idle
    }

    /// The command set this controller takes: extended when the LE Extended Advertising
    /// feature and LE Set Extended Advertising Parameters are both listed, legacy when LE
    /// Set Advertising Parameters is, nil when neither.
    public var commands: Commands? {
        guard let info = controller.info else { return nil }
        if info.leFeatures.contains(.extendedAdvertising),
            info.supportedCommands.supports(LESetExtendedAdvertisingParameters.opcode) == true
        {
            return .extended
        }
        return info.supportedCommands.supports(LESetAdvertisingParameters.self) ? .legacy : nil
    }

    /// Whether advertising runs now (a renewal of its address is a pause within it).
    public var isAdvertising: Bool {
        switch state {
        case .advertising, .renewingAddress: true
        case .idle, .stoppedByConnection: false
        }
    }

    /// Our address on link `handle`, which a central made from our advertising: the
    /// Local_Resolvable_Private_Address of LE Enhanced Connection Complete when the
    /// controller made one, else the address we advertised from then. Nil for other links.
    public func localAddress(of handle: ConnectionHandle) -> (type: AddressType, address: BluetoothAddress)? {
        controller.link(handle)?.attachment(for: self, as: AdvertisedLink.self)?.localAddress
    }

    /// Configures the set and starts advertising `data` (and `scanResponse` for the
    /// scannable kinds). Advertising already running is replaced.
    public func start(
        data: AdvertisingData, scanResponse: AdvertisingData = AdvertisingData(),
        parameters: AdvertisingParameters = AdvertisingParameters()
    ) async throws(AdvertisingError) {
        let configuration = Configuration(data: data, scanResponse: scanResponse, parameters: parameters)
        guard let commands else { throw .notSupported("LE advertising commands") }
        try await check(configuration, commands)
        let address: BluetoothAddress? =
            switch parameters.ownAddress {
            case .public: nil
            case let .staticRandom(address): address
            case .resolvablePrivate: try makePrivateAddress()
            }
        if isAdvertising { try await enable(false, commands) }
        state = .idle
        cancelRenewal()
        try await configure(configuration, address, commands)
        try await enable(true, commands)
        randomAddress = address
        state = .advertising(configuration)
        if case let .resolvablePrivate(renewal) = parameters.ownAddress { scheduleRenewal(every: renewal) }
    }

    /// A resolvable private address from ``privateAddressSource``.
    private func makePrivateAddress() throws(AdvertisingError) -> BluetoothAddress {
        guard let address = privateAddressSource?() else {
            throw .invalidParameters("a resolvable private address needs an IRK (no privateAddressSource)")
        }
        return address
    }

    /// Replaces the advertising data and scan response while advertising (or while stopped
    /// by a connection, for when it resumes). Legacy commands may change data while
    /// advertising; so may extended ones, in one fragment.
    public func update(data: AdvertisingData, scanResponse: AdvertisingData) async throws(AdvertisingError) {
        guard let commands else { throw .notSupported("LE advertising commands") }
        let current: Configuration
        switch state {
        case .idle: throw .notAdvertising
        case let .advertising(configuration), let .renewingAddress(configuration),
            let .stoppedByConnection(configuration):
            current = configuration
        }
        var next = current
        next.data = data
        next.scanResponse = scanResponse
        try await check(next, commands)
        try await setData(next, commands)
        switch state {
        case .idle: break
        case .advertising: state = .advertising(next)
        case .renewingAddress: state = .renewingAddress(next)
        case .stoppedByConnection: state = .stoppedByConnection(next)
        }
    }

    /// Stops advertising; it does not resume by itself until started again.
    public func stop() async throws(AdvertisingError) {
        guard let commands else { throw .notSupported("LE advertising commands") }
        let wasAdvertising = isAdvertising
        state = .idle
        cancelRenewal()
        if wasAdvertising { try await enable(false, commands) }
    }

    // MARK: - Resolvable private addresses

    /// Advertises from a new resolvable private address now (the timer renews it every
    /// `renewal` of ``OwnAddress/resolvablePrivate(renewal:)`` as well). A running set is
    /// paused for the three commands it takes (disable, set the address, enable) and runs
    /// on with the same data; a set stopped by a central's link gets the new address for
    /// when it resumes. A central that connects during the pause keeps the address it
    /// connected to (``localAddress(of:)``).
    public func renewPrivateAddress() async throws(AdvertisingError) {
        guard let commands else { throw .notSupported("LE advertising commands") }
        await resuming?.value
        let configuration: Configuration
        switch state {
        case .idle: throw .notAdvertising
        case .renewingAddress: return  // one renewal at a time; this one is under way
        case let .advertising(current), let .stoppedByConnection(current): configuration = current
        }
        guard case .resolvablePrivate = configuration.parameters.ownAddress else {
            throw .invalidParameters("not advertising from a resolvable private address")
        }
        let next = try makePrivateAddress()
        if case .advertising = state {
            state = .renewingAddress(configuration)
            do throws(AdvertisingError) { try await enable(false, commands) } catch {
                if case .renewingAddress(configuration) = state { state = .advertising(configuration) }
                throw error
            }
            switch state {
            case .renewingAddress, .stoppedByConnection: break  // a central may have connected meanwhile
            case .idle, .advertising: return  // stopped or started again by the app meanwhile: that wins
            }
        }
        do throws(AdvertisingError) { try await setRandomAddress(next, commands) } catch {
            try await resumeAfterRenewal(commands)
            throw error
        }
        switch state {
        case .renewingAddress, .stoppedByConnection: randomAddress = next
        case .idle, .advertising: return  // the app stopped or restarted it: not our address to record
        }
        try await resumeAfterRenewal(commands)
        onAddressRenewed?(next)
    }

    /// The end of a renewal: the set runs again if it was paused for it; if a central
    /// connected during the pause, advertising resumes as ``resumption`` says.
    private func resumeAfterRenewal(_ commands: Commands) async throws(AdvertisingError) {
        switch state {
        case let .renewingAddress(configuration):
            try await enable(true, commands)
            if case .renewingAddress(configuration) = state { state = .advertising(configuration) }
        case .stoppedByConnection where resumption == .afterConnection:
            resume()
        default:
            break
        }
    }

    /// Renews the private address `interval` after each renewal ends, until advertising stops or restarts.
    private func scheduleRenewal(every interval: Duration) {
        let generation = renewalGeneration
        renewal = deadlines.schedule(after: interval) { [weak self] in
            self?.renewal = nil
            // `self.` throughout: Swift 6.0 wants it in a closure nested in one that keeps self optional.
            Task { @BluetoothActor [weak self] in
                guard let self, generation == self.renewalGeneration else { return }
                do throws(AdvertisingError) { try await self.renewPrivateAddress() } catch {
                    // The old address stays; the next renewal tries again.
                    self.logger.log(.warning, "renewing the resolvable private address: \(error)")
                }
                if generation == self.renewalGeneration { self.scheduleRenewal(every: interval) }
            }
        }
    }

    /// No more renewals, and none in progress schedules another.
    private func cancelRenewal() {
        if let renewal { deadlines.cancel(renewal) }
        renewal = nil
        renewalGeneration += 1
    }

    // MARK: - Commands

    /// The longest data one PDU of `parameters` carries.
    private func maximumDataLength(_ parameters: AdvertisingParameters, _ commands: Commands)
        async throws(AdvertisingError) -> Int
    {
        if commands == .legacy || parameters.legacyPDUs { return LESetAdvertisingData.maximumLength }
        guard controller.info?.supportedCommands.supports(LEReadMaximumAdvertisingDataLength.self) ?? false else {
            return LESetAdvertisingData.maximumLength
        }
        do { return Int(try await controller.send(LEReadMaximumAdvertisingDataLength()).maximumLength) } catch {
            throw .hci(error)
        }
    }

    private func check(_ configuration: Configuration, _ commands: Commands) async throws(AdvertisingError) {
        let parameters = configuration.parameters
        guard parameters.intervalMin >= 0x20, parameters.intervalMin <= parameters.intervalMax else {
            throw .invalidParameters("interval \(parameters.intervalMin)–\(parameters.intervalMax) × 0.625 ms")
        }
        if case let .staticRandom(address) = parameters.ownAddress, !address.isValidStaticRandom {
            throw .invalidParameters(
                "\(address) is not a static random address (top bits 0b11, the rest neither all 0 nor all 1)")
        }
        if case .public = parameters.ownAddress, let info = controller.info, info.publicAddress == nil {
            throw .invalidParameters(
                "the controller has no public address (it reads 00:00:00:00:00:00): advertise from a static random or resolvable private address"
            )
        }
        if commands == .legacy {
            guard parameters.intervalMax <= 0x4000 else {
                throw .invalidParameters("legacy advertising interval above 10.24 s")
            }
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
        guard data.count <= maximum else {
            throw .dataTooLong(what: "advertising data", length: data.count, maximum: maximum)
        }
        guard response.count <= maximum else {
            throw .dataTooLong(what: "scan response data", length: response.count, maximum: maximum)
        }
    }

    private func send<C: HCICommand>(_ command: C) async throws(AdvertisingError) -> C.ReturnParameters {
        do { return try await controller.send(command) } catch { throw .hci(error) }
    }

    /// Sets the random address advertising uses: the controller's for legacy commands, the
    /// set's for extended ones.
    private func setRandomAddress(_ address: BluetoothAddress, _ commands: Commands) async throws(AdvertisingError) {
        switch commands {
        case .legacy: _ = try await send(LESetRandomAddress(address: address))
        case .extended:
            _ = try await send(LESetAdvertisingSetRandomAddress(advertisingHandle: Self.setHandle, address: address))
        }
    }

    private func configure(_ configuration: Configuration, _ address: BluetoothAddress?, _ commands: Commands)
        async throws(AdvertisingError)
    {
        let parameters = configuration.parameters
        switch commands {
        case .legacy:
            if let address { try await setRandomAddress(address, commands) }
            let type: LESetAdvertisingParameters.AdvertisingType =
                switch parameters.kind {
                case .connectable: .connectableUndirected
                case .scannable: .scannableUndirected
                case .nonConnectable: .nonConnectableUndirected
                }
            _ = try await send(
                LESetAdvertisingParameters(
                    intervalMin: UInt16(parameters.intervalMin), intervalMax: UInt16(parameters.intervalMax),
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
                intervalMax: parameters.intervalMax, ownAddressType: parameters.ownAddress.addressType,
                txPower: parameters.txPower ?? 0x7F,
                primaryPHY: parameters.primaryPHY, secondaryPHY: parameters.secondaryPHY)
            let selected = try await send(command).selectedTxPower
            logger.log(.debug, "advertising set \(Self.setHandle): TX power \(selected) dBm")
            if let address { try await setRandomAddress(address, commands) }
        }
        try await setData(configuration, commands)
    }

    /// Sends the data and, for the scannable kinds, the scan response.
    private func setData(_ configuration: Configuration, _ commands: Commands) async throws(AdvertisingError) {
        let data = configuration.data.encoded(), response = configuration.scanResponse.encoded()
        let scannable =
            configuration.parameters.kind == .scannable
            || (configuration.parameters.kind == .connectable && configuration.parameters.legacyPDUs)
        switch commands {
        case .legacy:
            _ = try await send(LESetAdvertisingData(data: data))
            if scannable { _ = try await send(LESetScanResponseData(data: response)) }
        case .extended:
            for (operation, part) in AdvertisingDataOperation.fragments(of: data) {
                _ = try await send(
                    LESetExtendedAdvertisingData(advertisingHandle: Self.setHandle, operation: operation, data: part))
            }
            if scannable {
                for (operation, part) in AdvertisingDataOperation.fragments(of: response) {
                    _ = try await send(
                        LESetExtendedScanResponseData(
                            advertisingHandle: Self.setHandle, operation: operation, data: part))
                }
            }
        }
    }

    private func enable(_ on: Bool, _ commands: Commands) async throws(AdvertisingError) {
        switch commands {
        case .legacy: _ = try await send(LESetAdvertisingEnable(enable: on))
        case .extended:
            _ = try await send(
                LESetExtendedAdvertisingEnable(enable: on, sets: [.init(advertisingHandle: Self.setHandle)]))
        }
    }

    // MARK: - Connections

    private func handle(_ event: LEConnectionEvent, _ meta: LEMetaEvent) {
        switch event {
        case let .connectionComplete(status, handle, role, _, peer, _):
            guard status.isSuccess, role == 0x01 else { return }
            guard let link = controller.link(handle) else { return }
            let local = localAddress(fromConnectionComplete: meta)
            _ = link.attachment(for: self, layer: .host) { AdvertisedLink(self, localAddress: local) }
            // The controller stopped connectable advertising when the central connected.
            switch state {
            case let .advertising(configuration) where configuration.parameters.kind == .connectable:
                state = .stoppedByConnection(configuration)
                if resumption == .afterConnection { resume() }
            case let .renewingAddress(configuration) where configuration.parameters.kind == .connectable:
                // The renewal's end resumes it as `resumption` says.
                state = .stoppedByConnection(configuration)
            default:
                break
            }
            onConnection?(handle, peer)
        default:
            break
        }
    }

    /// A link a central made from our advertising ended: advertising resumes as
    /// ``resumption`` says.
    private func linkEnded(_ handle: ConnectionHandle, _ reason: HCIStatus) {
        if case .stoppedByConnection = state, resumption != .never { resume() }
        onDisconnection?(handle, reason)
    }

    /// Our address on the link `meta` (a connection complete, role peripheral) announces:
    /// the controller's Local_Resolvable_Private_Address when it made one (LE Enhanced
    /// Connection Complete, Own_Address_Type 0x02/0x03), else the address advertising ran
    /// from; the address changes only while the set is disabled, so a connection always
    /// comes from the one recorded now.
    private func localAddress(fromConnectionComplete meta: LEMetaEvent) -> (
        type: AddressType, address: BluetoothAddress
    ) {
        let enhanced: LEEnhancedConnectionComplete? =
            switch meta.subeventCode {
            case LEEnhancedConnectionComplete.subeventCode:
                try? LEEnhancedConnectionComplete.decodeCountingExtraOctets(meta.parameters).parameters
            case LEEnhancedConnectionCompleteV2.subeventCode:
                try? LEEnhancedConnectionCompleteV2.decodeCountingExtraOctets(meta.parameters).parameters.connection
            default: nil
            }
        if let local = enhanced?.localResolvablePrivateAddress, local.bytes.contains(where: { $0 != 0 }) {
            return (.random, local)
        }
        if let randomAddress { return (.random, randomAddress) }
        return (.public, controller.info?.address ?? BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0]))
    }

    /// Enables the configured set again (parameters and data stay in the controller).
    private func resume() {
        guard case let .stoppedByConnection(configuration) = state, let commands else { return }
        state = .advertising(configuration)
        resuming = Task { @BluetoothActor [weak self] in
            do throws(AdvertisingError) { try await self?.enable(true, commands) } catch {
                // E.g. a controller that takes no second link as peripheral: it says so here.
                self?.logger.log(.warning, "resuming advertising: \(error)")
                if let self, case .advertising(configuration) = self.state {
                    self.state = .stoppedByConnection(configuration)
                }
            }
        }
    }
}
