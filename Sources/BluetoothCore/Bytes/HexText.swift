/// Octets from hex text as people write it: `0102ff`, `01 02 FF`, `01:02:ff`, `01-02-ff`
/// or `0x0102ff`; the empty text is no octets. Nil for anything else (a digit that is not
/// hex, an odd count of digits).
public func parseHexBytes(_ text: String) -> [UInt8]? {
    var digits = text.filter { !" :-_".contains($0) }
    if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits.removeFirst(2) }
    guard digits.count.isMultiple(of: 2), digits.allSatisfy(\.isHexDigit) else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
        bytes.append(byte)
        index = next
    }
    return bytes
}
