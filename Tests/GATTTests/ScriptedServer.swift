import ATT
import BluetoothCore
import HCI
import HCITestSupport
import Testing

/// The far end of a bearer in a unit test: each PDU the bearer sends must equal the next
/// expected request, byte for byte, and is answered with the scripted replies (delivered
/// after `transmit` returns, as a real link would).
@BluetoothActor
final class ScriptedServer {
    struct Exchange {
        let request: [UInt8]
        let replies: [[UInt8]]
    }

    var script: [Exchange] = []
    private(set) var sent: [[UInt8]] = []
    private(set) var unexpected: [[UInt8]] = []
    let clock = ManualClock()
    private(set) var bearer: ATTBearer!
    private(set) var fatalErrors: [ATTError] = []

    init(mtu: UInt16 = ATTBearer.maximumMTU, logger: HCILogger = .silent) {
        bearer = ATTBearer(connection: 0x0040, preferredMTU: mtu, clock: clock, logger: logger) {
            [weak self] (pdu: [UInt8]) throws(HCIError) in
            self?.sent.append(pdu)
            self?.answer(pdu)
        }
        bearer.onFatalError = { [weak self] error in self?.fatalErrors.append(error) }
    }

    /// Expects `request` (hex) next and answers it with `replies` (hex).
    func expect(_ request: String, _ replies: String...) {
        script.append(Exchange(request: bytes(request), replies: replies.map(bytes)))
    }

    /// Delivers a PDU from the server side now (a notification, an unsolicited response).
    func push(_ pdu: String) { bearer.receive(bytes(pdu)[...]) }

    private func answer(_ pdu: [UInt8]) {
        // Confirmations and commands are not requests: they are recorded, not answered.
        guard let next = script.first, next.request == pdu else {
            if ATTOpcode(rawValue: pdu[0]).isCommand || pdu[0] == 0x1E || pdu[0] == 0x01 || pdu[0] == 0x03 { return }
            unexpected.append(pdu)
            // Fail the procedure rather than leave it waiting for an answer that never comes.
            do {
                Task { @BluetoothActor [bearer] in
                    bearer?.close(.protocolError("unscripted request \(pdu.hexString(separator: " "))"))
                }
            }
            return
        }
        script.removeFirst()
        let replies = next.replies
        Task { @BluetoothActor [bearer] in
            for reply in replies { bearer?.receive(reply[...]) }
        }
    }

    /// Whether every scripted request was sent and nothing else was.
    func verify(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            script.isEmpty, "requests never sent: \(script.map { $0.request.hexString(separator: " ") })",
            sourceLocation: sourceLocation)
        #expect(
            unexpected.isEmpty, "unexpected requests: \(unexpected.map { $0.hexString(separator: " ") })",
            sourceLocation: sourceLocation)
    }

    /// Sets the bearer's MTU through a real exchange.
    func exchangeMTU(server: UInt16) async throws {
        let client = bearer.preferredMTU
        expect(hexLE(0x02, client), hexLE(0x03, server))
        try await bearer.exchangeMTU()
    }
}

/// An opcode followed by a little-endian UInt16, as hex.
func hexLE(_ opcode: UInt8, _ value: UInt16) -> String {
    [opcode, UInt8(truncatingIfNeeded: value), UInt8(value >> 8)].hexString()
}
