/// Bytes from hex text: `"01 03 0c 00"` (spaces optional) — the way the Core
/// specification and btmon print packets, so expected values read like the spec.
package func bytes(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0, "odd number of hex digits in \(text)")
    var result: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        result.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return result
}
