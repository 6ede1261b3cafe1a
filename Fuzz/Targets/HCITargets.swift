import BluetoothCore
import HCI

extension FuzzTarget {
    /// H4 framing of a controller's byte stream (UART, emulator socket), then each packet's
    /// decoding. The framer must cut the same packets and fail at the same offset whatever
    /// the chunking, and every packet it cuts must survive a round trip.
    static let h4Framing = FuzzTarget(
        name: "h4-framing",
        summary: "H4Framer fed whole and in varying chunks, then HCIPacket and HCIEvent decoding",
        run: { bytes throws(FuzzFailure) in
            let whole = frame([bytes[...]])
            let chunked = frame(chunks(of: bytes))
            try expect(
                whole.packets.elementsEqual(chunked.packets, by: { $0 == $1 }) && whole.error == chunked.error,
                "chunking changed the framing: \(whole) whole, \(chunked) in chunks")
            _ = whole.error.map { "\($0)" }
            var decoded = 0
            for (type, body) in whole.packets {
                guard let packet = try? HCIPacket(type: type, body: body[...]) else { continue }
                decoded += 1
                try expectRoundTrip(
                    packet, "packet", encode: { $0.encodeBody() },
                    decode: { try HCIPacket(type: type, body: $0[...]) })
                if case let .event(event) = packet { _ = try checkEvent(event) }
            }
            return decoded
        },
        seeds: { _, file in
            // Runs of up to 8 controller packets, as a UART delivers them back to back.
            let packets = file.records.filter { $0.direction == .received }.compactMap(\.h4Bytes)
            return stride(from: 0, to: packets.count, by: 8).map {
                packets[$0..<min($0 + 8, packets.count)].flatMap { $0 }
            }
        },
        maximumLength: 4096)

    /// One HCI event packet (code, length, parameters), decoded as the controller layer
    /// does: the event, then LE meta subevents, advertising reports and their data.
    static let hciEvent = FuzzTarget(
        name: "hci-event",
        summary: "HCIEvent, LE meta subevents (connection events, advertising reports) and advertising data",
        run: { bytes throws(FuzzFailure) in
            var reader = ByteReader(bytes)
            guard let packet = try? HCIEventPacket(from: &reader), reader.isAtEnd else { return 0 }
            return try checkEvent(packet) ? 1 : 0
        },
        seeds: { _, file in file.records.compactMap { $0.body(of: .event).map(Array.init) } },
        maximumLength: 300)

    /// Advertising data as a peer broadcasts it (Core Supplement, Part A).
    static let advertisingData = FuzzTarget(
        name: "advertising-data",
        summary: "AdvertisingData parsing and every accessor (names, UUIDs, service and manufacturer data)",
        run: { bytes throws(FuzzFailure) in
            // Every octet goes through the parser; a malformed structure is one of its
            // outcomes (``ADProblem``), not a rejection.
            try checkAdvertisingData(bytes)
            return bytes.isEmpty ? 0 : 1
        },
        seeds: { _, file in
            file.records.compactMap { $0.body(of: .event) }.flatMap(advertisingPayloads).filter { !$0.isEmpty }
        },
        maximumLength: 300)
}

/// Framer output: the packets cut before any error, and the error.
private struct Framing: CustomStringConvertible {
    var packets: [(H4PacketType, ArraySlice<UInt8>)] = []
    var error: H4FramingError?
    var description: String { "\(packets.count) packets, error \(error.map { "\($0)" } ?? "none")" }
}

private func frame(_ chunks: [ArraySlice<UInt8>]) -> Framing {
    var framer = H4Framer()
    var result = Framing()
    do {
        for chunk in chunks { result.packets += try framer.append(chunk) }
        // A failure after good packets is reported on the next call.
        result.packets += try framer.append([])
    } catch {
        result.error = error
    }
    return result
}

/// Splits `bytes` into chunks of 1, 2, 3, 5, 8, … bytes, starting at an offset the input
/// picks, so the framer sees headers and bodies split everywhere.
private func chunks(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    let sizes = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89]
    var chunks: [ArraySlice<UInt8>] = []
    var start = 0
    var next = bytes.count % sizes.count
    while start < bytes.count {
        let end = min(start + sizes[next], bytes.count)
        chunks.append(bytes[start..<end])
        start = end
        next = (next + 1) % sizes.count
    }
    return chunks
}

/// Decodes an event the way the controller layer does, with round trips at each level;
/// returns whether the event decoded.
private func checkEvent(_ packet: HCIEventPacket) throws(FuzzFailure) -> Bool {
    guard let event = try? HCIEvent(packet) else { return false }
    try expectRoundTrip(
        event, "event", encode: { Array($0.packet.parameters) },
        decode: { try HCIEvent(HCIEventPacket(code: packet.code, parameters: $0[...])) })
    switch event {
    case let .commandComplete(complete):
        // Return parameters of the commands the host sends, decoded as the controller decodes
        // them; what decodes must re-encode to octets that decode to the same.
        if let format = KnownCommands.withReturnParameters[complete.opcode],
            let once = format.reencoded(complete.returnParameters)
        {
            let twice = format.reencoded(once[...])
            try expect(
                twice == once,
                "\(complete.opcode) return parameters re-encode to \(once.hexDump), which re-encode to \(twice?.hexDump ?? "nothing")"
            )
        }
    case let .leMeta(meta):
        try checkLEMeta(meta)
    default:
        break
    }
    return true
}

/// The LE subevents the host acts on: connection events and advertising reports.
private func checkLEMeta(_ meta: LEMetaEvent) throws(FuzzFailure) {
    if let connection = try? LEConnectionEvent.decode(meta) {
        _ = (connection.handle, "\(connection)")
        try expectRoundTrip(
            connection, "LE connection event", encode: { $0.encoded().encoded() },
            decode: { bytes in
                guard let again = try LEConnectionEvent.decode(LEMetaEvent(decoding: bytes[...])) else {
                    throw FuzzFailure("not a connection subevent")
                }
                return again
            })
    }
    if let reports = try? AdvertisingReport.decode(meta) {
        let extended = meta.subeventCode == AdvertisingReport.extendedSubevent
        try expectRoundTrip(
            reports, "advertising reports", encode: { AdvertisingReport.encode($0, extended: extended).encoded() },
            decode: { try AdvertisingReport.decode(LEMetaEvent(decoding: $0[...])) ?? [] })
        for report in reports { try checkAdvertisingData(report.data) }
    }
}

/// Parses advertising data, reads every accessor, and checks the structures survive a
/// round trip.
private func checkAdvertisingData(_ bytes: [UInt8]) throws(FuzzFailure) {
    let data = AdvertisingData(parsing: bytes)
    _ = (
        data.flags, data.serviceUUIDs, data.hasIncompleteServiceList, data.solicitedServiceUUIDs, data.localName,
        data.isLocalNameShortened, data.txPowerLevel, data.appearance, data.manufacturerData, data.serviceData,
        data.otherStructures, data.problem.map { "\($0)" }
    )
    let again = AdvertisingData(parsing: data.encoded())
    try expect(
        again.structures == data.structures,
        "advertising data \(bytes.hexDump) re-encodes to \(data.encoded().hexDump), which parses differently")
    _ = data.merging(again)
}

/// The advertising data of every advertising report in an event packet body.
private func advertisingPayloads(_ body: ArraySlice<UInt8>) -> [[UInt8]] {
    var reader = ByteReader(body)
    guard let packet = try? HCIEventPacket(from: &reader), case let .leMeta(meta)? = try? HCIEvent(packet),
        let reports = try? AdvertisingReport.decode(meta)
    else { return [] }
    return reports.map(\.data)
}
