import BluetoothCore
import FoundationEssentials
import GATT
import HCI

/// One notified or indicated value, or one callback of the app's, on its way from the stack
/// to the main actor. Every value and callback takes this one route (``Bluejay/arrivals``,
/// an ``ArrivalInbox``), in the order the stack produced it, and the main actor takes them
/// in that order, a batch at a time: a listen's first values and those that came before its
/// subscription was in place cannot overtake each other, nor an operation's completion the
/// values that came before it.
enum ValueArrival: Sendable {
    /// A value for a listen's subscription.
    case value(Bluejay.Listener, ArraySlice<UInt8>)
    /// The listen fell more than its backlog's limit behind: it ends here.
    case overflow(Bluejay.Listener)
    /// A value that no subscription of ours watches, on link `link`, at `valueHandle` (the
    /// characteristic there, when it is discovered).
    /// (Boxed: it is rare, and its fields would make every arrival as large.)
    indirect case unsolicited(
        link: ConnectionHandle, valueHandle: AttributeHandle, CharacteristicIdentifier?, ArraySlice<UInt8>)
    /// A callback to run on the main actor in its turn: an operation's completion, an
    /// observer's call, a line for the log.
    case callback(@MainActor @Sendable () -> Void)
}

/// Listens: subscriptions whose values go to a callback until ended, kept across a
/// reconnection, and the values that arrive without one.
extension Bluejay {
    /// A listen's callbacks, on the main actor. Where it stands (registered, subscribed as
    /// which token) is in ``BluejayCore``'s listens; its subscription is a subscriber of the
    /// link's ``Peripheral``, which owns it: it keeps it across a reconnection and subscribes
    /// it again before the link counts as connected.
    @MainActor
    final class Listener {
        nonisolated let characteristic: CharacteristicIdentifier
        nonisolated let option: MultipleListenOption
        /// Decodes a value and hands it on; a `Data` takes its octets from the arena.
        let deliver: (ArraySlice<UInt8>, inout DataArena) -> Void
        /// Its values are `Data` (the arena shares their storage within a batch).
        nonisolated let makesData: Bool
        /// Values on their way to the callback, bounded.
        nonisolated let backlog: ListenBacklog
        /// Tells the caller the listen is over (cancelled, or failed with the reason).
        private let end: (any Error) -> Void
        /// Who asked (the async API's stream), to end only its own listen.
        let tag: AnyObject?
        /// Over (cancelled, failed, or fell behind): it takes no more values.
        private(set) var isEnded = false

        init(
            characteristic: CharacteristicIdentifier, option: MultipleListenOption, tag: AnyObject?,
            backlog: ListenBacklog, makesData: Bool,
            deliver: @escaping (ArraySlice<UInt8>, inout DataArena) -> Void, end: @escaping (any Error) -> Void
        ) {
            (self.characteristic, self.makesData, self.option, self.tag, self.backlog, self.deliver, self.end) =
                (characteristic, makesData, option, tag, backlog, deliver, end)
        }

        /// Delivers a value that did not come through the subscription (one that arrived
        /// before the subscription was written).
        func deliverDirectly(_ bytes: ArraySlice<UInt8>) {
            guard case .accepted = backlog.arrived() else { return }
            var alone = DataArena()
            deliver(bytes, &alone)
        }

        /// Ends the listen once: values stop and the caller hears why.
        func close(_ reason: any Error) {
            guard !isEnded else { return }
            isEnded = true
            end(reason)
        }
    }

    // MARK: Listening

    /// Subscribes to a characteristic (notifications when it offers them, else
    /// indications); `completion` gets every value until ``endListen(to:completion:)`` or
    /// the link ends. A second listen fails with `BluejayError.multipleListenTrapped`
    /// unless the first was `.replaceable`.
    public func listen<R: Receivable>(
        to characteristicIdentifier: CharacteristicIdentifier,
        multipleListenOption option: MultipleListenOption = .trap,
        completion: @escaping @MainActor (ReadResult<R>) -> Void
    ) {
        listen(to: characteristicIdentifier, multipleListenOption: option, tag: nil, completion: completion)
    }

    /// A listen; `tag` marks who asked, for ``endListen(to:ifTaggedWith:)``. `completion`
    /// gets the listen's end and, unless `values` says otherwise, its values: `values`
    /// makes the route of the values (``BluejayOnQueue`` posts them to the app's queue),
    /// which must tell the backlog when a value has been taken.
    func listen<R: Receivable>(
        to characteristicIdentifier: CharacteristicIdentifier, multipleListenOption option: MultipleListenOption,
        tag: AnyObject?, completion: @escaping @MainActor (ReadResult<R>) -> Void,
        values: ((ListenBacklog) -> @MainActor (ReadResult<R>) -> Void)? = nil
    ) {
        let backlog = ListenBacklog(limit: core.read(\.listenBufferLimit))
        // A value leaves the backlog once the app's callback has run, wherever it runs.
        let onValue =
            values?(backlog) ?? { result in
                completion(result)
                backlog.taken()
            }
        // `Data` (the iOS API's usual type) is made in the batch's arena: one allocation per
        // value instead of two; every other type decodes from the bytes themselves.
        let makesData = R.self == Data.self
        let listener = Listener(
            characteristic: characteristicIdentifier, option: option, tag: tag, backlog: backlog, makesData: makesData,
            deliver: { bytes, arena in
                do { onValue(.success(makesData ? arena.data(bytes) as! R : try R(bluetoothBytes: bytes[...]))) } catch
                { onValue(.failure(error)) }
            },
            end: { reason in
                if BluejayError.isCancellation(reason) { completion(.cancelled) } else { completion(.failure(reason)) }
            })
        let registered = core.state.withLock { state -> (trapped: Bool, replaced: BluejayCore.Listen?) in
            if let existing = state.listens[characteristicIdentifier], existing.listener.option == .trap {
                return (true, nil)
            }
            let replaced = state.listens[characteristicIdentifier]
            state.listens[characteristicIdentifier] = BluejayCore.Listen(listener: listener)
            return (false, replaced)
        }
        if registered.trapped { return completion(.failure(BluejayError.multipleListenTrapped)) }
        registered.replaced?.listener.close(BluejayError.cancelled)
        subscribe(characteristicIdentifier, listener, removing: registered.replaced?.token)
    }

    /// Queues the subscription of `listener`: the CCCD is written, and its values take the
    /// one route to the main actor, counted by its backlog.
    nonisolated func subscribe(
        _ characteristicIdentifier: CharacteristicIdentifier, _ listener: Listener, removing replacedToken: Int?
    ) {
        let core = core
        queue.add(
            QueuedOperation(
                .listen,
                body: { [weak self] operation in
                    guard let self, let (host, link) = await self.connected(operation) else { return }
                    let peripheral = link.owner
                    do throws(BluejayError) {
                        // The replaced listen's values stop; its subscription is written anew.
                        if let replacedToken {
                            try await peripheral.remove(replacedToken, of: characteristicIdentifier, turningOff: false)
                        }
                        let (token, isFirst) = peripheral.adopt(
                            self.subscriber(for: listener, on: host), of: characteristicIdentifier)
                        if isFirst { try await peripheral.beginListen(characteristicIdentifier) }
                        let current =
                            operation.claim()
                            && core.state.withLock { state in
                                guard state.isCurrent(listener) else { return false }
                                state.listens[characteristicIdentifier]?.token = token
                                return true
                            }
                        guard current else {
                            // Cancelled or replaced while subscribing: leave nothing listening.
                            Task { @BluetoothActor in
                                _ = try? await peripheral.remove(token, of: characteristicIdentifier, turningOff: false)
                            }
                            return
                        }
                        self.recordRestorationState()
                    } catch {
                        operation.fail(Self.cause(error, on: host))
                    }
                },
                onFailure: failing { error in
                    listener.close(error)
                } first: { _ in
                    core.state.withLock { if $0.isCurrent(listener) { $0.listens[characteristicIdentifier] = nil } }
                }))
    }

    /// `listener` as a subscriber of the link's ``Peripheral`` on `subscribedHost`: its
    /// values take the one route to the main actor, counted by its backlog; a listen the
    /// peripheral ends (its characteristic gone after a reconnection, the link lost for
    /// good) ends here too.
    nonisolated func subscriber(for listener: Listener, on subscribedHost: BluetoothHost) -> Peripheral.Subscriber {
        let arrivals = arrivals, backlog = listener.backlog
        return Peripheral.Subscriber(
            deliver: { bytes in
                switch backlog.arrived() {
                case .accepted: arrivals.post(.value(listener, bytes))
                case .overflowed: arrivals.post(.overflow(listener))
                case .dropped: break  // after the overflow, until the subscription is off
                }
            },
            finish: { [weak self] error in
                self?.listenEnded(listener, (error as? BluejayError) ?? .cancelled, on: subscribedHost)
            })
    }

    /// The peripheral ended `listener`'s subscription; a host since replaced, or a listen
    /// already over or replaced, is not this listen's concern.
    nonisolated private func listenEnded(_ listener: Listener, _ reason: BluejayError, on endedHost: BluetoothHost) {
        let ended = core.state.withLock { state -> Bool in
            guard endedHost === state.upHost, state.isCurrent(listener) else { return false }
            state.listens[listener.characteristic] = nil
            return true
        }
        guard ended else { return }
        post { listener.close(reason) }
        recordRestorationState()
    }

    /// Takes a batch off the route, in arrival order. A listen's value reaches its
    /// callback only while it is the characteristic's current listen.
    func arrived(_ batch: [ValueArrival]) {
        var arena = DataArena(batch)
        for arrival in batch { arrived(arrival, arena: &arena) }
    }

    /// Takes one value or callback off the route; a `Data` value's octets go in `arena`.
    private func arrived(_ arrival: ValueArrival, arena: inout DataArena) {
        switch arrival {
        case let .value(listener, bytes):
            // A listen is closed when it ends (replaced, ended, lost), so being over is all
            // there is to check, without hashing its characteristic per value.
            guard !listener.isEnded else { return }
            listener.deliver(bytes, &arena)
        case let .callback(body):
            body()
        case let .overflow(listener):
            listenOverflowed(listener)
        case let .unsolicited(link, valueHandle, characteristic, value):
            unsolicitedValue(link, valueHandle, characteristic, value)
        }
    }

    /// The app fell more than the backlog's limit behind a listen: what came before the
    /// overflow has been delivered; the listen ends with `BluejayError.listenOverflow(_:limit:)`
    /// and its subscription is turned off, so the peer stops sending. The link stays up.
    private func listenOverflowed(_ listener: Listener) {
        let characteristicIdentifier = listener.characteristic
        let removed = core.state.withLock { state -> BluejayCore.Listen? in
            guard state.isCurrent(listener) else { return nil }
            return state.listens.removeValue(forKey: characteristicIdentifier)
        }
        guard let removed else { return }
        let limit = listener.backlog.limit
        log(
            "\(characteristicIdentifier): the app fell more than \(limit) values behind; the listen ends and its notifications are turned off"
        )
        let token = removed.token
        listener.close(BluejayError.listenOverflow(characteristicIdentifier, limit: limit))
        queue.add(
            QueuedOperation(
                .endListen,
                body: { [weak self] operation in
                    guard let self, let (_, link) = await self.connected(operation) else { return }
                    // Listened to again meanwhile: only the old listener goes.
                    let relistened = self.core.read { $0.listens[characteristicIdentifier] != nil }
                    _ = try? await link.owner.remove(token, of: characteristicIdentifier, turningOff: !relistened)
                    self.recordRestorationState()
                    _ = operation.claim()
                }, onFailure: { _ in }))
    }

    /// A notification or indication nobody listens to: a bonded peer's subscription that
    /// outlived the last link (or the last process). The restorer is offered it once per link;
    /// when nobody takes it, the subscription is turned off rather than left running.
    private func unsolicitedValue(
        _ handle: ConnectionHandle, _ valueHandle: AttributeHandle, _ characteristic: CharacteristicIdentifier?,
        _ value: ArraySlice<UInt8>
    ) {
        guard let link = connection, link.handle == handle else { return }
        guard let characteristic else {
            return log("a value for handle \(hex(valueHandle, digits: 4)), where nothing is discovered, was dropped")
        }
        // A listen whose subscription is still being written: the value is its first.
        if let listener = listener(of: characteristic), !listener.isEnded { return listener.deliverDirectly(value) }
        guard core.state.withLock({ $0.offeredUnsolicited.insert(characteristic).inserted }) else {
            return log(
                "a value of \(characteristic) nobody listens to was dropped (its subscription is being turned off)")
        }
        if restorer?.willRestoreListen(on: characteristic) == true, let listener = listener(of: characteristic) {
            return listener.deliverDirectly(value)
        }
        log("\(characteristic) notifies but nobody listens: turning its subscription off")
        endListen(to: characteristic)
    }

    /// The current listen of `characteristic`, if any.
    nonisolated func listener(of characteristic: CharacteristicIdentifier) -> Listener? {
        core.read { $0.listens[characteristic]?.listener }
    }

    /// Ends a listen: the CCCD is written back to 0 and the callback dropped.
    public func endListen(
        to characteristicIdentifier: CharacteristicIdentifier, completion: (@MainActor (WriteResult) -> Void)? = nil
    ) {
        queue.add(
            QueuedOperation(
                .endListen,
                body: { [weak self] operation in
                    guard let self, let (host, link) = await self.connected(operation) else { return }
                    let ended = self.core.state.withLock { $0.listens.removeValue(forKey: characteristicIdentifier) }
                    if let ended { self.post { ended.listener.close(BluejayError.cancelled) } }
                    do throws(BluejayError) {
                        try await link.owner.remove(ended?.token, of: characteristicIdentifier, turningOff: true)
                        self.recordRestorationState()
                        if operation.claim() { self.post { completion?(.success) } }
                    } catch {
                        self.recordRestorationState()
                        operation.fail(Self.cause(error, on: host))
                    }
                },
                onFailure: failing { error in
                    if BluejayError.isCancellation(error) {
                        completion?(.cancelled)
                    } else {
                        completion?(.failure(error))
                    }
                }))
    }

    /// Ends the listen on `characteristicIdentifier` only if `tag` started it.
    func endListen(to characteristicIdentifier: CharacteristicIdentifier, ifTaggedWith tag: AnyObject) {
        guard let listener = listener(of: characteristicIdentifier), listener.tag === tag else { return }
        endListen(to: characteristicIdentifier)
    }

    /// A background task turned a listen off: its callback hears `.cancelled` and goes.
    nonisolated func listenEndedByTask(_ characteristicIdentifier: CharacteristicIdentifier) {
        guard let ended = core.state.withLock({ $0.listens.removeValue(forKey: characteristicIdentifier) }) else {
            return
        }
        if let token = ended.token, let connection {
            // The task wrote the CCCD off itself; only this listen's values stop.
            Task { @BluetoothActor in
                _ = try? await connection.owner.remove(token, of: characteristicIdentifier, turningOff: false)
            }
        }
        post { ended.listener.close(BluejayError.cancelled) }
        recordRestorationState()
    }

    /// The link is gone for good (not reconnecting, or the reconnection failed): every
    /// listen ends with `error`.
    nonisolated func endListens(_ error: BluejayError) {
        let ended = core.state.withLock { $0.takeListens() }
        guard !ended.isEmpty else { return }
        post { for listener in ended { listener.close(error) } }
    }

    /// Whether a listen is active on the characteristic; throws when not connected.
    public func isListening(to characteristicIdentifier: CharacteristicIdentifier) throws -> Bool {
        guard isConnected else { throw BluejayError.notConnected }
        return listener(of: characteristicIdentifier) != nil
    }
}
