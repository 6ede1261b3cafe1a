/// The values on their way to the broker: a bounded queue in memory, and the ones handed to
/// the MQTT client and not yet acknowledged (PUBACK for QoS 1). When the broker goes away,
/// the unacknowledged ones go back to the front, in order, and are sent again on the next
/// connection: a broker restart loses none (QoS 1 allows the duplicates this makes). Past
/// `limit` messages the oldest waiting one is dropped and counted.
///
/// A value type with no clock and no I/O: its owner (``MQTTClient``) tells it what happened.
struct Outbox {
    /// One publication.
    struct Message: Sendable, Equatable {
        var topic: String
        var payload: [UInt8]
        var qos: Int32
    }

    /// At most this many messages held (waiting and in flight).
    let limit: Int
    /// At most this many in flight at once (MQTT's receive maximum; libmosquitto's default 20).
    let window: Int
    /// Waiting, oldest first, from `head` on (the slots before `head` are spent).
    private var waiting: [Message] = []
    private var head = 0
    /// Sent at QoS 1 and not yet acknowledged, in the order sent, from `flightHead` on. The
    /// broker acknowledges in order, so the oldest is the one looked for first: no search and
    /// no move of the rest per acknowledgement.
    private var flight: [(id: Int32, message: Message)] = []
    private var flightHead = 0
    /// Messages dropped because the queue was full.
    private(set) var dropped = 0

    init(limit: Int, window: Int = 20) {
        self.limit = max(1, limit)
        self.window = max(1, min(window, limit))
    }

    /// Messages held: waiting and in flight (the broker queue depth of the counters).
    var depth: Int { waiting.count - head + inFlightCount }

    /// Messages in flight.
    var inFlightCount: Int { flight.count - flightHead }

    /// Queues `message`; when the queue is full the oldest waiting message makes room.
    mutating func append(_ message: Message) {
        if depth >= limit {
            if head < waiting.count {
                head += 1
                dropped += 1
            } else {
                // Everything held is in flight (limit == window): the newest is dropped.
                dropped += 1
                return
            }
        }
        waiting.append(message)
        compact()
    }

    /// The next message to send, if the window has room, with its packet identifier: a QoS 1
    /// message is numbered `id()` and counts in flight until acknowledged; a QoS 0 message
    /// (nil) is done once sent, as QoS 0 has it.
    mutating func next(numbered id: () -> Int32) -> (message: Message, id: Int32?)? {
        guard inFlightCount < window, head < waiting.count else { return nil }
        let message = waiting[head]
        head += 1
        compact()
        guard message.qos > 0 else { return (message, nil) }
        let number = id()
        flight.append((number, message))
        return (message, number)
    }

    /// The broker acknowledged `id` (false: not one of ours, e.g. a retained status).
    @discardableResult
    mutating func acknowledged(id: Int32) -> Bool {
        if flightHead < flight.count, flight[flightHead].id == id {
            flightHead += 1
            if flightHead == flight.count {
                flight.removeAll(keepingCapacity: true)
                flightHead = 0
            } else if flightHead > 64, flightHead * 2 > flight.count {
                flight.removeFirst(flightHead)
                flightHead = 0
            }
            return true
        }
        guard let index = flight[flightHead...].firstIndex(where: { $0.id == id }) else { return false }
        flight.remove(at: index)
        return true
    }

    /// The connection is gone: what was in flight waits again, in front, in order.
    mutating func connectionLost() {
        guard inFlightCount > 0 else { return }
        waiting = flight[flightHead...].map(\.message) + waiting[head...]
        head = 0
        flight = []
        flightHead = 0
    }

    /// Drops the spent slots once they are half the storage.
    private mutating func compact() {
        if head > 64, head * 2 > waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
    }
}
