import BluetoothCore

/// A btsnoop file with every packet's secret fields zeroed in place, as Android's filtered
/// snoop log does: the same length, header, record count, flags and timestamps, and every
/// octet the same but the secret ones, so the copy still decodes, counts and prints like
/// the original (`bluejay trace --redact IN OUT`).
public struct BTSnoopRedaction: Sendable {
    /// One secret field that was zeroed.
    public struct Zeroed: Sendable, Equatable, CustomStringConvertible {
        /// The record it is in, from 1.
        public var recordNumber: Int
        /// The field, its offset counted from the first octet of the file.
        public var field: SecretField

        /// `record 12: Long_Term_Key (…, 16 octets)`.
        public var description: String { "record \(recordNumber): \(field)" }
    }

    /// The redacted file.
    public let bytes: [UInt8]
    /// Every field zeroed, in file order.
    public let zeroed: [Zeroed]

    /// Redacts the btsnoop file `original` with `redactor` (which follows the packets in
    /// order, so an SMP PDU split across ACL fragments is redacted in each of them). A
    /// record cut off at the end of the file is redacted as far as it goes.
    public init(original: [UInt8], redactor: some PacketRedacting) throws(BTSnoopError) {
        // Parsed first for its checks (magic, version, datalink) and the datalink.
        let datalink = try BTSnoopFile(bytes: original).datalink
        var redactor = redactor
        var copy = original
        var zeroed: [Zeroed] = []
        var offset = 16
        var number = 0
        while original.count - offset >= 24 {
            number += 1
            func word(_ at: Int) -> UInt32 { original[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
            let included = Int(word(offset + 4))
            let flags = word(offset + 8)
            let start = offset + 24
            let end = min(original.count, start + included)
            let (direction, content) = BTSnoopFile.interpret(original[start..<end], flags: flags, datalink: datalink)
            if case let .packet(type, body) = content {
                for field in redactor.secretFields(type: type, body: body, direction: direction) {
                    let placed = field.shifted(by: body.startIndex)
                    copy.zero([placed])
                    zeroed.append(Zeroed(recordNumber: number, field: placed))
                }
            }
            offset = start + included
        }
        bytes = copy
        self.zeroed = zeroed
    }
}
