import ATT
import BluetoothCore
import HCI

/// An attribute handle with a value: what Read Using Characteristic UUID returns and what a
/// reliable write takes.
public struct HandleValue: Sendable, Hashable {
    /// The attribute handle.
    public var handle: AttributeHandle
    /// The value.
    public var value: [UInt8]

    /// `value` at `handle`.
    public init(handle: AttributeHandle, value: [UInt8]) { (self.handle, self.value) = (handle, value) }
}

/// What a Client Characteristic Configuration descriptor is set to.
public enum ClientConfiguration: UInt16, Sendable {
    /// Neither notifications nor indications.
    case none = 0x0000
    /// Notifications.
    case notify = 0x0001
    /// Indications.
    case indicate = 0x0002
}

/// The GATT client procedures of Core Vol 3, Part G, 4, over one ATT bearer.
///
/// Each procedure is a method that runs its ATT requests one after the other and ends as
/// the specification says: discoveries at handle 0xFFFF, at the end of their range, or on
/// Attribute Not Found; a read long when a part comes back shorter than ATT_MTU - 1. The
/// bearer keeps the one-request-at-a-time rule, so procedures may be called concurrently
/// and their requests interleave safely.
///
/// Lazy discovery (``service(_:includingSecondary:)``, ``characteristic(_:in:includingSecondary:)``, ``descriptors(of:)``) finds
/// only what a use needs and remembers it until a Service Changed indication says the
/// peer's database changed in that range.
@BluetoothActor
public final class GATTClient {
    /// The bearer the procedures run on.
    public let bearer: ATTBearer
    /// Called for every notification and indication: (value handle, value, was an indication).
    public var onValue: ((AttributeHandle, ArraySlice<UInt8>, Bool) -> Void)?
    /// Called for a notification or indication that no value listener watches (Service
    /// Changed aside): what a bonded peer sends for a subscription from an earlier link.
    public var onUnhandledValue: ((AttributeHandle, ArraySlice<UInt8>) -> Void)?
    /// Called with the affected handle range when the peer indicates Service Changed.
    public var onServiceChanged: ((ClosedRange<AttributeHandle>) -> Void)?
    /// Called after a Service Changed indication with the known services it invalidated.
    public var onServicesInvalidated: (([Service]) -> Void)?
    /// The value handle of the peer's Service Changed characteristic, once subscribed.
    public internal(set) var serviceChangedHandle: AttributeHandle?
    /// Whether the peer indicates Service Changed to this client: its CCCD was written on
    /// this link (``subscribeToServiceChanged()``), or a bonded peer remembers it from an
    /// earlier one (``assumeServiceChangedSubscription()``).
    public internal(set) var isSubscribedToServiceChanged = false

    /// Value listeners by value handle, in registration order (tokens only grow), so the hot
    /// path walks an array instead of sorting per value; a ``SmallMap`` because it is looked
    /// up for every notification.
    var listeners = SmallMap<AttributeHandle, [(token: Int, handler: (ArraySlice<UInt8>) -> Void)]>()
    var nextListener = 0
    /// What is known of the peer's database; restore a cached one with ``adopt(_:)``.
    public internal(set) var database = GATTDatabase() {
        didSet { if database != oldValue { onDatabaseChange?(database) } }
    }
    /// Called whenever ``database`` changes (something discovered, or a range invalidated).
    public var onDatabaseChange: ((GATTDatabase) -> Void)?

    /// A client on `bearer`; it takes the bearer's notification and indication handlers.
    /// The bearer holds the client until it closes (when its link ends, or its owner closes).
    public init(bearer: ATTBearer) {
        self.bearer = bearer
        bearer.onNotification = { handle, value in self.deliver(handle, value, indication: false) }
        bearer.onIndication = { handle, value in self.deliver(handle, value, indication: true) }
    }

    /// The longest attribute value the specification allows (Core 6.0 Vol 3 Part F §3.2.9).
    public nonisolated static let specifiedMaximumValueLength = 512
    /// The longest value a long read follows before giving up (at least 512): a server may
    /// serve longer values than the specification allows, but not unboundedly. 65536 by
    /// default; `StartOptions.maxValueLength` and `--max-value` set it.
    public var maximumValueLength = 65536 {
        didSet { maximumValueLength = max(maximumValueLength, Self.specifiedMaximumValueLength) }
    }
    /// Value handles already warned about for running past 512 octets.
    private var warnedLongValues: Set<AttributeHandle> = []

    /// Who uses the server's prepare queue: long and reliable writes take turns.
    private enum PrepareQueue {
        /// No long or reliable write is under way.
        case idle
        /// One is under way; these wait for it, first come first served.
        case held(waiting: [CheckedContinuation<Void, Never>])
    }
    private var prepareQueue = PrepareQueue.idle

    /// The largest value a single Write Request or Write Command carries now.
    public var maximumWriteLength: Int { bearer.mtu - 3 }

    // MARK: Server configuration (4.3)

    /// Exchange MTU: asks for the bearer's preferred MTU; returns the ATT_MTU now in effect.
    @discardableResult
    public func exchangeMTU() async throws(GATTError) -> Int {
        do { return try await bearer.exchangeMTU() } catch { throw .att(error) }
    }

    // MARK: Reads (4.8)

    /// Read Characteristic Value (or descriptor): one Read Request.
    public func read(_ handle: AttributeHandle) async throws(GATTError) -> [UInt8] {
        Array(try await ask(ReadRequest(handle: handle), ReadResponse.self).value)
    }

    /// Read Long Characteristic Value: Read (or Read Blob from `offset`) and then Read Blob
    /// until a part comes back shorter than ATT_MTU - 1.
    ///
    /// Core 6.0 Vol 3 Part F §3.2.9 caps an attribute value at 512 octets, but some servers
    /// serve longer ones (Bumble will): the read follows them to the end, logging a warning
    /// once per value handle, up to ``maximumValueLength``; past it the read fails with
    /// ``GATTError/valueLengthLimitExceeded(handle:limit:)``.
    public func readLong(_ handle: AttributeHandle, offset: UInt16 = 0) async throws(GATTError) -> [UInt8] {
        var value: [UInt8] = []
        var part = offset == 0 ? try await read(handle) : try await readBlob(handle, offset: offset)
        while true {
            value += part
            let end = Int(offset) + value.count
            guard end <= maximumValueLength else {
                throw .valueLengthLimitExceeded(handle: handle, limit: maximumValueLength)
            }
            if end > Self.specifiedMaximumValueLength, warnedLongValues.insert(handle).inserted {
                bearer.logger.log(
                    .warning,
                    "the value at \(hex(handle, digits: 4)) runs past the specification's \(Self.specifiedMaximumValueLength) octets; "
                        + "reading on (up to \(maximumValueLength))")
            }
            guard part.count == bearer.mtu - 1 else { return value }
            // Read Blob's offset is 16 bits: a value cannot be followed past offset 65535.
            guard let next = UInt16(exactly: end) else {
                throw .valueLengthLimitExceeded(handle: handle, limit: Int(UInt16.max))
            }
            do throws(GATTError) {
                part = try await readBlob(handle, offset: next)
            } catch {
                // A value exactly ATT_MTU - 1 long: the server may say it is not long.
                if error.code == .attributeNotLong { return value }
                // A value whose length is a multiple of ATT_MTU - 1: some servers answer the
                // offset at its end with Invalid Offset instead of an empty part; BlueZ's
                // gatt-client takes that as the end of the value too.
                if error.code == .invalidOffset, end > Int(offset) { return value }
                throw error
            }
        }
    }

    /// One Read Blob Request: the part of the value from `offset`.
    public func readBlob(_ handle: AttributeHandle, offset: UInt16) async throws(GATTError) -> [UInt8] {
        Array(try await ask(ReadBlobRequest(handle: handle, offset: offset), ReadBlobResponse.self).value)
    }

    /// Read Multiple Characteristic Values: the values of fixed-length attributes, concatenated.
    public func readMultiple(_ handles: [AttributeHandle]) async throws(GATTError) -> [UInt8] {
        Array(try await ask(ReadMultipleRequest(handles: handles), ReadMultipleResponse.self).values)
    }

    /// Read Multiple Variable Length Characteristic Values: one value per handle (the last
    /// may be truncated to fit ATT_MTU).
    public func readMultipleVariable(_ handles: [AttributeHandle]) async throws(GATTError) -> [[UInt8]] {
        try await ask(ReadMultipleVariableRequest(handles: handles), ReadMultipleVariableResponse.self).entries.map {
            Array($0.value)
        }
    }

    /// Read Using Characteristic UUID: Read By Type over `range`, continued after the last
    /// handle found until the range is exhausted. When the range holds no attribute of the
    /// type, the server's answer to the first request (an Error Response, Attribute Not
    /// Found) is thrown: unlike a discovery, a read that finds nothing has failed. Attribute
    /// Not Found to a continuation only ends the walk.
    public func read(uuid: BluetoothUUID, in range: ClosedRange<AttributeHandle> = 0x0001...0xFFFF)
        async throws(GATTError) -> [HandleValue]
    {
        try await read(uuid: uuid, from: range.lowerBound, to: range.upperBound)
    }

    /// Read Using Characteristic UUID from `start` to `end` as given, as
    /// ``read(uuid:in:)`` does; a range a server must refuse (start 0x0000, or after `end`)
    /// still goes out, and the server's answer is thrown.
    public func read(uuid: BluetoothUUID, from start: AttributeHandle, to end: AttributeHandle) async throws(GATTError)
        -> [HandleValue]
    {
        let step = { (next: AttributeHandle) async throws(GATTError) -> ([HandleValue], AttributeHandle) in
            let response = try await self.ask(
                ReadByTypeRequest(startingHandle: next, endingHandle: end, attributeType: uuid),
                ReadByTypeResponse.self)
            let values = response.entries.map { HandleValue(handle: $0.handle, value: Array($0.value)) }
            guard values.allSatisfy({ $0.handle >= next }) else {
                throw .invalidResponse("Read By Type answered handles before \(hex(next, digits: 4))")
            }
            return (values, values.last?.handle ?? end)
        }
        let (first, last) = try await step(start)
        guard !first.isEmpty, last < end else { return first }
        return first + (try await collect(from: last + 1, to: end, step))
    }

    /// The first attribute of type `uuid` in `range` and its value (one Read By Type), or nil
    /// when there is none: for values a server holds once, like the Database Hash.
    public func readFirst(uuid: BluetoothUUID, in range: ClosedRange<AttributeHandle> = 0x0001...0xFFFF)
        async throws(GATTError) -> HandleValue?
    {
        do {
            let response = try await ask(
                ReadByTypeRequest(
                    startingHandle: range.lowerBound, endingHandle: range.upperBound, attributeType: uuid),
                ReadByTypeResponse.self)
            return response.entries.first.map { HandleValue(handle: $0.handle, value: Array($0.value)) }
        } catch {
            if error.code == .attributeNotFound { return nil }
            throw error
        }
    }

    // MARK: Writes (4.9)

    /// Write Without Response: a Write Command; nothing confirms it arrived.
    public func writeWithoutResponse(_ handle: AttributeHandle, _ value: [UInt8]) throws(GATTError) {
        guard value.count <= maximumWriteLength else {
            throw .valueTooLong(length: value.count, maximum: maximumWriteLength)
        }
        do { try bearer.send(command: WriteCommand(handle: handle, value: value[...])) } catch { throw .att(error) }
    }

    /// Write Characteristic Value (or descriptor): one Write Request.
    public func write(_ handle: AttributeHandle, _ value: [UInt8]) async throws(GATTError) {
        guard value.count <= maximumWriteLength else {
            throw .valueTooLong(length: value.count, maximum: maximumWriteLength)
        }
        _ = try await ask(WriteRequest(handle: handle, value: value[...]), WriteResponse.self)
    }

    /// Write Long Characteristic Value: Prepare Write parts of ATT_MTU - 5 bytes, then
    /// Execute Write. If a part is refused, the queue is cancelled and the error thrown.
    public func writeLong(_ handle: AttributeHandle, _ value: [UInt8], offset: UInt16 = 0) async throws(GATTError) {
        try await prepareAndExecute([HandleValue(handle: handle, value: value)], offset: offset, verify: false)
    }

    /// Reliable Writes: every value prepared, each Prepare Write Response checked against what
    /// was sent (a difference cancels all with ``GATTError/reliableWriteMismatch(handle:offset:)``),
    /// then executed together.
    public func reliableWrite(_ values: [HandleValue]) async throws(GATTError) {
        try await prepareAndExecute(values, offset: 0, verify: true)
    }

    private func prepareAndExecute(_ values: [HandleValue], offset: UInt16, verify: Bool) async throws(GATTError) {
        // The server keeps one prepare queue per client (Core Vol 3 Part F §3.4.6): a second
        // long or reliable write must not add to it, or execute it, while one is under way.
        await acquirePrepareQueue()
        defer { releasePrepareQueue() }
        let partLength = bearer.mtu - 5
        do throws(GATTError) {
            for item in values {
                var position = 0
                repeat {
                    let part = Array(item.value[position..<min(item.value.count, position + partLength)])
                    let at = Int(offset) + position
                    guard at <= Int(UInt16.max) else {
                        throw GATTError.valueTooLong(length: at + part.count, maximum: Int(UInt16.max))
                    }
                    let echo = try await ask(
                        PrepareWriteRequest(handle: item.handle, offset: UInt16(at), value: part[...]),
                        PrepareWriteResponse.self)
                    if verify,
                        echo.handle != item.handle || echo.offset != UInt16(at)
                            || echo.value.elementsEqual(part) == false
                    {
                        throw GATTError.reliableWriteMismatch(handle: item.handle, offset: UInt16(at))
                    }
                    position += part.count
                } while position < item.value.count
            }
        } catch {
            // Leave nothing queued on the server (Part G, 4.9.4 and 4.9.5).
            if bearer.isOpen { _ = try? await ask(ExecuteWriteRequest(flags: .cancel), ExecuteWriteResponse.self) }
            throw error
        }
        _ = try await ask(ExecuteWriteRequest(flags: .write), ExecuteWriteResponse.self)
    }

    /// Waits until no other long or reliable write of this client is using the server's
    /// prepare queue, then holds it.
    private func acquirePrepareQueue() async {
        switch prepareQueue {
        case .idle:
            prepareQueue = .held(waiting: [])
        case .held(var waiting):
            await withCheckedContinuation { continuation in
                waiting.append(continuation)
                prepareQueue = .held(waiting: waiting)
            }
        // Handed over by the holder: the state is already `.held` for us.
        }
    }

    /// Hands the prepare queue to the next write waiting for it, in order, or frees it.
    private func releasePrepareQueue() {
        guard case .held(var waiting) = prepareQueue, !waiting.isEmpty else {
            prepareQueue = .idle
            return
        }
        let next = waiting.removeFirst()
        prepareQueue = .held(waiting: waiting)
        next.resume()
    }

    // MARK: Plumbing

    func ask<Request: ATTPDU, Response: ATTPDU>(_ request: Request, _ response: Response.Type) async throws(GATTError)
        -> Response
    {
        do { return try await bearer.request(request, expecting: response) } catch { throw .att(error) }
    }

    /// Runs one step of a discovery from `start` until the range is exhausted, handle 0xFFFF
    /// is reached, or the server answers Attribute Not Found. A step returns what it found
    /// and the last handle it covered; the next step starts right after it. The first step
    /// always runs, whatever the range: a range the server must refuse (start 0x0000, or
    /// after `end`) is the caller's to ask, and the server's Error Response is the answer.
    /// (`Entry` is Sendable for Swift 6.0, which takes a call of `step`, an async closure
    /// whose type names no isolation, as leaving the actor: its result crosses back. Every
    /// entry type is a Sendable value.)
    func collect<Entry: Sendable>(
        from start: AttributeHandle, to end: AttributeHandle,
        _ step: (AttributeHandle) async throws(GATTError) -> ([Entry], AttributeHandle)
    ) async throws(GATTError) -> [Entry] {
        var found: [Entry] = []
        var next = start
        repeat {
            let entries: [Entry]
            let last: AttributeHandle
            do { (entries, last) = try await step(next) } catch {
                if error.code == .attributeNotFound { break }
                throw error
            }
            found += entries
            guard last >= next else {
                throw .invalidResponse(
                    "the server answered handle \(hex(last, digits: 4)) when asked from \(hex(next, digits: 4))")
            }
            if entries.isEmpty || last >= end || last == 0xFFFF { break }
            next = last + 1
        } while next <= end
        return found
    }
}

extension BluetoothUUID {
    /// The UUID as an attribute value: 2 bytes for SIG 16-bit UUIDs, else all 16 (ATT has no
    /// 32-bit form).
    var attributeBytes: [UInt8] {
        shortValue != nil ? littleEndianBytes : bytes.reversed()
    }
}
