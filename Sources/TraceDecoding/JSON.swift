/// A small JSON value with a writer that matches Python's
/// `json.dumps(value, indent=1, sort_keys=True)` byte for byte, so summaries compare
/// textually with `expected-counts.json`.
public indirect enum JSONValue: Sendable, Equatable {
    /// An object; its keys are written sorted.
    case object([String: JSONValue])
    /// An array.
    case array([JSONValue])
    /// A string, written ASCII-only with `\u` escapes.
    case string(String)
    /// An integer.
    case number(Int)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null

    /// The value as indented JSON text with sorted keys.
    public func rendered(indent: Int = 1) -> String {
        var output = ""
        write(to: &output, level: 0, indent: indent)
        return output
    }

    /// The value on one line with sorted keys (`{"a": 1, "b": [2, 3]}`), as Python's
    /// `json.dumps(sort_keys=True)` writes it: one JSON object per line for scripts.
    public var compact: String {
        switch self {
        case .object(let members):
            let keys = members.keys.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
            return "{" + keys.map { Self.quote($0) + ": " + members[$0]!.compact }.joined(separator: ", ") + "}"
        case .array(let elements):
            return "[" + elements.map(\.compact).joined(separator: ", ") + "]"
        default:
            return rendered()
        }
    }

    private func write(to output: inout String, level: Int, indent: Int) {
        let pad = String(repeating: " ", count: (level + 1) * indent)
        let closePad = String(repeating: " ", count: level * indent)
        switch self {
        case .object(let members):
            if members.isEmpty { output += "{}"; return }
            output += "{\n"
            let keys = members.keys.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
            for (index, key) in keys.enumerated() {
                output += pad + Self.quote(key) + ": "
                members[key]!.write(to: &output, level: level + 1, indent: indent)
                output += index == keys.count - 1 ? "\n" : ",\n"
            }
            output += closePad + "}"
        case .array(let elements):
            if elements.isEmpty { output += "[]"; return }
            output += "[\n"
            for (index, element) in elements.enumerated() {
                output += pad
                element.write(to: &output, level: level + 1, indent: indent)
                output += index == elements.count - 1 ? "\n" : ",\n"
            }
            output += closePad + "]"
        case .string(let text): output += Self.quote(text)
        case .number(let value): output += String(value)
        case .bool(let value): output += value ? "true" : "false"
        case .null: output += "null"
        }
    }

    /// Quotes a string as Python's `json` does with `ensure_ascii=True`.
    public static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            // Python writes these two with short escapes too, not as \u0008 and \u000c.
            case "\u{8}": result += "\\b"
            case "\u{C}": result += "\\f"
            default:
                if scalar.value < 0x20 || scalar.value > 0x7E {
                    for unit in String(scalar).utf16 {
                        let digits = String(unit, radix: 16)
                        result += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
                    }
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
