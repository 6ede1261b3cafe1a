import BluetoothCore
import GATT
import HCI

/// A peripheral's listens: each characteristic's subscribers share one subscription, made
/// when the first comes and the link is up, written again on every new link, and taken off
/// when the last one leaves.
extension Peripheral {
    /// The values of `characteristic`, notified or indicated, once it is subscribed (this
    /// returns when it is; the first consumer subscribes, the last one to stop
    /// unsubscribes). Asked before the link is up, it subscribes when it comes up. The
    /// subscription is restored after a reconnection (the stream goes on); the stream ends
    /// with ``endListen(to:)`` or ``disconnect()``, and throws when the link is lost for good.
    ///
    /// At most `capacity` values wait for a consumer that falls behind (BlueCap's
    /// `receiveNotificationUpdates(capacity:)`): past it the oldest waiting value is dropped
    /// for the newest, and counted (``PeripheralValues/droppedCount``). `Int.max` lifts the
    /// bound.
    public func values(
        of characteristic: CharacteristicIdentifier,
        capacity: Int = PeripheralValues.defaultCapacity
    ) async throws(BluejayError) -> PeripheralValues {
        // The stream's end (the consumer let go of it, or this throws) takes the subscriber off.
        let token = takeToken()
        let buffer = ValueBuffer(capacity: capacity)
        let stream = buffer.stream { [weak self] in
            Task { @BluetoothActor [weak self] in
                _ = try? await self?.remove(token, of: characteristic, turningOff: true)
            }
        }
        let isFirst = adopt(
            Subscriber(deliver: { buffer.yield(Array($0)) }, finish: { buffer.finish(throwing: $0) }),
            of: characteristic, as: token)
        if isFirst { try await beginListen(characteristic) }
        return stream
    }

    /// Adds `subscriber` to `characteristic`'s listen and returns its token, and whether it
    /// is the listen's first (then ``beginListen(_:)`` turns the notifications on). Nothing
    /// is written here: a link that comes up later subscribes every listen.
    func adopt(_ subscriber: Subscriber, of characteristic: CharacteristicIdentifier) -> (token: Int, isFirst: Bool) {
        let token = takeToken()
        return (token, adopt(subscriber, of: characteristic, as: token))
    }

    /// Adds `subscriber` under a token taken beforehand (``takeToken()``); whether it is
    /// the listen's first.
    private func adopt(_ subscriber: Subscriber, of characteristic: CharacteristicIdentifier, as token: Int) -> Bool {
        if let listen = listens[characteristic] {
            listen.subscribers[token] = subscriber
            return false
        }
        let listen = Listen()
        listen.subscribers[token] = subscriber
        listens[characteristic] = listen
        return true
    }

    /// Turns the notifications of a listen just begun on, when the link is up (before, the
    /// link subscribes it as it comes up). A refusal ends the characteristic's listen with
    /// the error, and throws it.
    func beginListen(_ characteristic: CharacteristicIdentifier) async throws(BluejayError) {
        guard let handle else { return }
        do { try await subscribe(characteristic, on: handle) } catch {
            endListen(characteristic, error)
            throw error
        }
    }

    /// Removes subscriber `token` (any, when nil) of `characteristic`. When none is left and
    /// `turningOff`, the notifications are turned off (CCCD 0), as they are for a
    /// characteristic nobody listens to here at all.
    func remove(_ token: Int?, of characteristic: CharacteristicIdentifier, turningOff: Bool) async throws(BluejayError)
    {
        // Already gone (its listen ended here): nothing of it is left to turn off.
        if let token, listens[characteristic]?.subscribers.removeValue(forKey: token) == nil { return }
        if let listen = listens[characteristic], !listen.subscribers.isEmpty { return }
        let listener = removeListen(characteristic)?.listener
        guard turningOff else {
            // The subscription stays as it is (its CCCD is someone else's to write); its
            // values stop coming here.
            if let listener, let handle { host.existingClient(for: handle)?.removeValueListener(listener) }
            return
        }
        guard state == .connected else { return }
        try await operation(.endListen, characteristic) { client throws(GATTError) in
            try await client.unsubscribe(characteristic, token: listener)
        }
    }

    /// Turns the characteristic's notifications off and ends its value streams (normally).
    public func endListen(to characteristic: CharacteristicIdentifier) async throws(BluejayError) {
        guard let listen = removeListen(characteristic) else { return }
        for subscriber in listen.subscribers { subscriber.finish(nil) }
        guard state == .connected else { return }
        try await operation(.endListen, characteristic) { client throws(GATTError) in
            try await client.unsubscribe(characteristic, token: listen.listener)
        }
    }

    /// Turns the characteristic's notifications on and routes them to its subscribers.
    private func subscribe(_ characteristic: CharacteristicIdentifier, on handle: ConnectionHandle)
        async throws(BluejayError)
    {
        guard let listen = listens[characteristic] else { return }
        let listener = try await operation(.listen, characteristic) { client throws(GATTError) in
            try await client.subscribe(characteristic, listen.deliver).token
        }
        if listens[characteristic] === listen, self.handle == handle {
            listen.listener = listener
        } else if let current = self.handle, current == handle {
            // Its listen ended meanwhile (or another took its place): its values have nowhere to go.
            host.existingClient(for: handle)?.removeValueListener(listener)
        }
    }

    /// Subscribes every listen again on a new link (before the link counts as connected, so
    /// no operation comes between). A characteristic gone from the database ends its listen.
    /// The app may end a listen while another is being subscribed (its subscriber lets go,
    /// or `endListen(to:)`): one ended before its turn is skipped, and one ended during it
    /// keeps no value listener on the client, as in ``subscribe(_:on:)``.
    func restoreListens(on handle: ConnectionHandle) async throws(BluejayError) {
        guard let client = host.existingClient(for: handle) else { throw .notConnected }
        for (characteristic, listen) in listens where listens[characteristic] === listen {
            do {
                let listener = try await client.subscribe(characteristic, listen.deliver).token
                if listens[characteristic] === listen {
                    listen.listener = listener
                } else {
                    client.removeValueListener(listener)
                }
            } catch {
                guard case .att(.disconnected) = error else {
                    if listens[characteristic] === listen {
                        endListen(characteristic, BluejayError.from(error, characteristic))
                    }
                    continue
                }
                throw BluejayError.from(error, characteristic)
            }
        }
    }

    private func endListen(_ characteristic: CharacteristicIdentifier, _ error: (any Error)?) {
        for subscriber in removeListen(characteristic)?.subscribers ?? [] { subscriber.finish(error) }
    }

    /// Takes `characteristic`'s listen out and empties it (a value the stack's listener
    /// still brings goes nowhere): its subscribers, to be told, and the stack's listener.
    private func removeListen(_ characteristic: CharacteristicIdentifier) -> (
        subscribers: [Subscriber], listener: Int?
    )? {
        guard let listen = listens.removeValue(forKey: characteristic) else { return nil }
        defer { listen.subscribers = [:] }
        return (Array(listen.subscribers.values), listen.listener)
    }

    func endListens(_ error: (any Error)?) {
        for characteristic in Array(listens.keys) { endListen(characteristic, error) }
    }
}
