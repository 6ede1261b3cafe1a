// Byte order in the toolbox.
//
// The Core Specification writes every value of the security toolbox most significant octet
// first (Vol 3, Part H, 2.2: "the most significant octet ... is on the left"), and so does
// RFC 4493: AES and AES-CMAC work on octet strings whose first octet is the most significant.
// Every function in this module takes and returns values in that order, so the Appendix D
// sample data can be typed in as printed.
//
// SMP PDUs, HCI commands and events, and ATT values carry multi-octet values least
// significant octet first. Turning one order into the other is a reversal; the two helpers
// below spell out which way a call site converts.

/// A value in the toolbox's order (most significant octet first), from bytes in the order
/// SMP PDUs, HCI and ATT carry them (least significant octet first).
///
/// For example the Pairing Random value `r` as received in an SMP Pairing Random PDU, or an
/// LTK destined for HCI LE Enable Encryption, in reverse. The conversion is a reversal, so
/// `msbFirst(fromLSBFirst:)` and ``lsbFirst(fromMSBFirst:)`` undo each other.
public func msbFirst(fromLSBFirst bytes: some Collection<UInt8>) -> [UInt8] {
    Array(bytes.reversed())
}

/// Bytes in the order SMP PDUs, HCI and ATT carry them (least significant octet first), from
/// a value in the toolbox's order (most significant octet first).
///
/// Use it on a result before it goes into a PDU: a confirm value for Pairing Confirm, an LTK
/// for HCI, the Database Hash characteristic value.
public func lsbFirst(fromMSBFirst bytes: some Collection<UInt8>) -> [UInt8] {
    Array(bytes.reversed())
}

/// Traps unless `bytes` has `count` octets: the lengths in the toolbox are fixed by the
/// specification, so a wrong one is a programming error, not a runtime condition.
@inline(__always)
func requireLength(_ bytes: [UInt8], _ count: Int, _ name: StaticString, function: StaticString = #function) {
    precondition(bytes.count == count, "\(function): \(name) must be \(count) octets, got \(bytes.count)")
}

/// ``requireLength(_:_:_:function:)`` for a secret.
@inline(__always)
func requireLength(_ secret: SecretBytes, _ count: Int, _ name: StaticString, function: StaticString = #function) {
    precondition(secret.count == count, "\(function): \(name) must be \(count) octets, got \(secret.count)")
}
