import BluetoothCore
import FoundationEssentials
import GATT
import HCI

/// One notified or indicated value on its way from the stack to the main actor. Every value
/// takes this one route (``Bluejay/arrivals``, an ``ArrivalInbox``), in the order the stack
/// received it, and the main actor takes them in that order, a batch at a time: a listen's
/// first values and those that came before its subscription was in place cannot overtake
/// each other.
enum ValueArrival: Sendable {
    /// A value for a listen's subscription.
    case value(Bluejay.Listener, ArraySlice<UInt8>)
    /// The listen fell more than its backlog's limit behind: it ends here.
    case overflow(Bluejay.Listener)
    /// A value that no subscription of ours watches, on link `link`, at `valueHandle` (the
    /// characteristic there, when it is discovered).
    /// (Boxed: it is rare, and its fields would make every arrival as large.)
    indirect case unsolicited(link: ConnectionHandle, valueHandle: AttributeHandle, CharacteristicIdentifier?, ArraySlice<UInt8>)
}

/// Listens: subscriptions whose values go to a callback until ended, kept across a
/// reconnection, and the values that arrive without one.
extension Bluejay {
    /// A listen: registered when asked for (so a second one is trapped at once), subscribed
    /// once its CCCD is written.
    @MainActor
    final class Listener {
        /// Where a listen is. Its subscription is a subscriber of the link's ``Peripheral``,
        /// which owns it: it keeps it across a reconnection and subscribes it again before
        /// the link counts as connected, so whether the link is up is the peripheral's to
        /// say, not the listen's.
        enum State {
            /// Asked for: its subscription is to be written.
            case unsubscribed
            /// The peripheral's subscriber `token`.
            case subscribed(token: Int)
            /// Over (cancelled, failed, or fell behind): it takes no more values.
            case ended
        }

        let characteristic: CharacteristicIdentifier
        let option: MultipleListenOption
        let deliver: (ArraySlice<UInt8>) -> Void
        /// Values on their way to the callback, bounded.
        let backlog: ListenBacklog
        /// Tells the caller the listen is over (cancelled, or failed with the reason).
        private let end: (BluejayError) -> Void
        /// Who asked (the async API's stream), to end only its own listen.
        let tag: AnyObject?
        private(set) var state = State.unsubscribed

        init(characteristic: CharacteristicIdentifier, option: MultipleListenOption, tag: AnyObject?, backlog: ListenBacklog,
             deliver: @escaping (ArraySlice<UInt8>) -> Void, end: @escaping (BluejayError) -> Void) {
            self.characteristic = characteristic
            self.option = option
            self.tag = tag
            self.backlog = backlog
            self.deliver = deliver
            self.end = end
        }

        /// Its subscriber token on the link's peripheral, once subscribed.
        var token: Int? {
            switch state {
            case let .subscribed(token): token
            case .unsubscribed, .ended: nil
            }
        }
        var isEnded: Bool { if case .ended = state { true } else { false } }

        /// Its subscription is written on the current link.
        func subscribed(token: Int) {
            if !isEnded { state = .subscribed(token: token) }
        }

        /// The link is to be remade on another host's peripheral, as its subscriber `token`.
        func moved(token: Int) {
            if case .subscribed = state { state = .subscribed(token: token) }
        }

        /// Delivers a value that did not come through the subscription (one that arrived
        /// before the subscription was written).
        func deliverDirectly(_ bytes: ArraySlice<UInt8>) {
            guard case .accepted = backlog.arrived() else { return }
            deliver(bytes)
        }

        /// Ends the listen once: values stop and the caller hears why.
        func close(_ reason: BluejayError) {
            guard !isEnded else { return }
            state = .ended
            end(reason)
        }
    }

    // MARK: Listening

    /// Subscribes to a characteristic (notifications when it offers them, else
    /// indications); `completion` gets every value until ``endListen(to:completion:)`` or
    /// the link ends. A second listen fails with ``BluejayError/multipleListenTrapped``
    /// unless the first was `.replaceable`.
    public func listen<R: Receivable>(to characteristicIdentifier: CharacteristicIdentifier, multipleListenOption option: MultipleListenOption = .trap,
                                      completion: @escaping @MainActor (ReadResult<R>) -> Void) {
        listen(to: characteristicIdentifier, multipleListenOption: option, tag: nil, completion: completion)
    }

    /// A listen; `tag` marks who asked, for ``endListen(to:ifTaggedWith:)``. `completion`
    /// gets the listen's end and, unless `values` says otherwise, its values: `values`
    /// makes the route of the values (``BluejayOnQueue`` posts them to the app's queue),
    /// which must tell the backlog when a value has been taken.
    func listen<R: Receivable>(to characteristicIdentifier: CharacteristicIdentifier, multipleListenOption option: MultipleListenOption,
                               tag: AnyObject?, completion: @escaping @MainActor (ReadResult<R>) -> Void,
                               values: ((ListenBacklog) -> @MainActor (ReadResult<R>) -> Void)? = nil) {
        let backlog = ListenBacklog(limit: listenBufferLimit)
        // A value leaves the backlog once the app's callback has run, wherever it runs.
        let onValue = values?(backlog) ?? { result in
            completion(result)
            backlog.taken()
        }
        if let existing = listeners[characteristicIdentifier], existing.option == .trap {
            return completion(.failure(BluejayError.multipleListenTrapped))
        }
        let listener = Listener(characteristic: characteristicIdentifier, option: option, tag: tag, backlog: backlog, deliver: { bytes in
            do { onValue(.success(try R(bluetoothBytes: bytes[...]))) } catch { onValue(.failure(error)) }
        }, end: { reason in
            if case .cancelled = reason { completion(.cancelled) } else { completion(.failure(reason)) }
        })
        let replaced = listeners[characteristicIdentifier]
        let replacedToken = replaced?.token
        replaced?.close(.cancelled)
        listeners[characteristicIdentifier] = listener
        subscribe(characteristicIdentifier, listener, removing: replacedToken)
    }

    /// Queues the subscription of `listener` (a new listen, or one resumed after a
    /// reconnection): the CCCD is written, and its values take the one route to the main
    /// actor, counted by its backlog.
    func subscribe(_ characteristicIdentifier: CharacteristicIdentifier, _ listener: Listener, removing replacedToken: Int?) {
        queue.add(QueuedOperation(.listen, body: { [weak self] operation in
            guard let self, let (host, link) = await self.connected(operation) else { return }
            let subscriber = self.subscriber(for: listener, on: host)
            let result = await Task { @BluetoothActor () -> Result<Int, BluejayError> in
                let peripheral = link.owner
                do throws(BluejayError) {
                    // The replaced listen's values stop; its subscription is written anew.
                    if let replacedToken { try await peripheral.remove(replacedToken, of: characteristicIdentifier, turningOff: false) }
                    let (token, isFirst) = peripheral.adopt(subscriber, of: characteristicIdentifier)
                    if isFirst { try await peripheral.beginListen(characteristicIdentifier) }
                    return .success(token)
                } catch {
                    return .failure(error)
                }
            }.value
            switch result {
            case let .success(token):
                guard operation.claim(), self.listeners[characteristicIdentifier] === listener else {
                    // Cancelled or replaced while subscribing: leave nothing listening.
                    Task { @BluetoothActor in _ = try? await link.owner.remove(token, of: characteristicIdentifier, turningOff: false) }
                    return
                }
                listener.subscribed(token: token)
                self.recordRestorationState()
            case let .failure(error):
                operation.fail(error)
            }
        }, onFailure: { [weak self] error in
            if self?.listeners[characteristicIdentifier] === listener { self?.listeners[characteristicIdentifier] = nil }
            listener.close(error)
        }))
    }

    /// `listener` as a subscriber of the link's ``Peripheral`` on `subscribedHost`: its
    /// values take the one route to the main actor, counted by its backlog; a listen the
    /// peripheral ends (its characteristic gone after a reconnection, the link lost for
    /// good) ends here too.
    func subscriber(for listener: Listener, on subscribedHost: BluetoothHost) -> Peripheral.Subscriber {
        let arrivals = arrivals, backlog = listener.backlog
        return Peripheral.Subscriber(deliver: { bytes in
            switch backlog.arrived() {
            case .accepted: arrivals.post(.value(listener, bytes))
            case .overflowed: arrivals.post(.overflow(listener))
            case .dropped: break  // after the overflow, until the subscription is off
            }
        }, finish: { [weak self] error in
            let reason = (error as? BluejayError) ?? .cancelled
            Task { @MainActor in self?.listenEnded(listener, reason, on: subscribedHost) }
        })
    }

    /// The peripheral ended `listener`'s subscription; a host since replaced, or a listen
    /// already over or replaced, is not this listen's concern.
    private func listenEnded(_ listener: Listener, _ reason: BluejayError, on endedHost: BluetoothHost) {
        guard endedHost === host, listeners[listener.characteristic] === listener else { return }
        listeners[listener.characteristic] = nil
        listener.close(reason)
        recordRestorationState()
    }

    /// Takes a batch off the route, in arrival order. A listen's value reaches its
    /// callback only while it is the characteristic's current listen.
    func arrived(_ batch: [ValueArrival]) {
        for arrival in batch { arrived(arrival) }
    }

    /// Takes one value off the route.
    private func arrived(_ arrival: ValueArrival) {
        switch arrival {
        case let .value(listener, bytes):
            // A listen leaves `listeners` when it ends (replaced, ended, lost), so being over
            // is all there is to check, without hashing its characteristic per value.
            guard !listener.isEnded else { return }
            listener.deliver(bytes)
        case let .overflow(listener):
            listenOverflowed(listener)
        case let .unsolicited(link, valueHandle, characteristic, value):
            unsolicitedValue(link, valueHandle, characteristic, value)
        }
    }

    /// The app fell more than the backlog's limit behind a listen: what came before the
    /// overflow has been delivered; the listen ends with ``BluejayError/listenOverflow(_:limit:)``
    /// and its subscription is turned off, so the peer stops sending. The link stays up.
    private func listenOverflowed(_ listener: Listener) {
        let characteristicIdentifier = listener.characteristic
        guard listeners[characteristicIdentifier] === listener else { return }
        listeners[characteristicIdentifier] = nil
        let limit = listener.backlog.limit
        log("\(characteristicIdentifier): the app fell more than \(limit) values behind; the listen ends and its notifications are turned off")
        let token = listener.token
        listener.close(.listenOverflow(characteristicIdentifier, limit: limit))
        queue.add(QueuedOperation(.endListen, body: { [weak self] operation in
            guard let self, let (_, link) = await self.connected(operation) else { return }
            // Listened to again meanwhile: only the old listener goes.
            let relistened = self.listeners[characteristicIdentifier] != nil
            await Task { @BluetoothActor in
                _ = try? await link.owner.remove(token, of: characteristicIdentifier, turningOff: !relistened)
            }.value
            self.recordRestorationState()
            _ = operation.claim()
        }, onFailure: { _ in }))
    }

    /// A notification or indication nobody listens to: a bonded peer's subscription that
    /// outlived the last link (or the last process). The restorer is offered it once per link;
    /// when nobody takes it, the subscription is turned off rather than left running.
    private func unsolicitedValue(_ handle: ConnectionHandle, _ valueHandle: AttributeHandle, _ characteristic: CharacteristicIdentifier?, _ value: ArraySlice<UInt8>) {
        guard let link = connection, link.handle == handle else { return }
        guard let characteristic else {
            return log("a value for handle \(hex(valueHandle, digits: 4)), where nothing is discovered, was dropped")
        }
        // A listen whose subscription is still being written: the value is its first.
        if let listener = listeners[characteristic], !listener.isEnded { return listener.deliverDirectly(value) }
        guard offeredUnsolicited.insert(characteristic).inserted else {
            return log("a value of \(characteristic) nobody listens to was dropped (its subscription is being turned off)")
        }
        if restorer?.willRestoreListen(on: characteristic) == true, let listener = listeners[characteristic] { return listener.deliverDirectly(value) }
        log("\(characteristic) notifies but nobody listens: turning its subscription off")
        endListen(to: characteristic)
    }

    /// Ends a listen: the CCCD is written back to 0 and the callback dropped.
    public func endListen(to characteristicIdentifier: CharacteristicIdentifier, completion: (@MainActor (WriteResult) -> Void)? = nil) {
        queue.add(QueuedOperation(.endListen, body: { [weak self] operation in
            guard let self, let (_, link) = await self.connected(operation) else { return }
            let ended = self.listeners.removeValue(forKey: characteristicIdentifier)
            let token = ended?.token
            ended?.close(.cancelled)
            let result = await Task { @BluetoothActor () -> Result<Void, BluejayError> in
                do throws(BluejayError) {
                    try await link.owner.remove(token, of: characteristicIdentifier, turningOff: true)
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }.value
            self.recordRestorationState()
            switch result {
            case .success: if operation.claim() { completion?(.success) }
            case let .failure(error): operation.fail(error)
            }
        }, onFailure: { error in
            if case .cancelled = error { completion?(.cancelled) } else { completion?(.failure(error)) }
        }))
    }

    /// Ends the listen on `characteristicIdentifier` only if `tag` started it.
    func endListen(to characteristicIdentifier: CharacteristicIdentifier, ifTaggedWith tag: AnyObject) {
        guard let listener = listeners[characteristicIdentifier], listener.tag === tag else { return }
        endListen(to: characteristicIdentifier)
    }

    /// A background task turned a listen off: its callback hears `.cancelled` and goes.
    func listenEndedByTask(_ characteristicIdentifier: CharacteristicIdentifier) {
        guard let listener = listeners.removeValue(forKey: characteristicIdentifier) else { return }
        if let token = listener.token, let connection {
            // The task wrote the CCCD off itself; only this listen's values stop.
            Task { @BluetoothActor in _ = try? await connection.owner.remove(token, of: characteristicIdentifier, turningOff: false) }
        }
        listener.close(.cancelled)
        recordRestorationState()
    }

    /// The link is gone for good (not reconnecting, or the reconnection failed): every
    /// listen ends with `error`.
    func endListens(_ error: BluejayError) {
        for listener in listeners.values { listener.close(error) }
        listeners = [:]
    }

    /// Whether a listen is active on the characteristic; throws when not connected.
    public func isListening(to characteristicIdentifier: CharacteristicIdentifier) throws -> Bool {
        guard isConnected else { throw BluejayError.notConnected }
        return listeners[characteristicIdentifier] != nil
    }
}
