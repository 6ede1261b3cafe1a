// Sample data is typed in as the specification prints it: hex, most significant octet
// first, in space-separated groups ("d5cb8454 d177733e ffffb2ec 712baeab").

/// The octets of a hex string, spaces ignored; traps on anything that is not hex.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    precondition(digits.count.isMultiple(of: 2), "odd number of hex digits in \(text)")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}
