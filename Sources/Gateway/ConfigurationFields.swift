import Bluejay
import Foundation
import HCI
import Logging
import Yams

/// A topic level given in the file (gateway id, prefix): no `/`, `+`, `#` or NUL.
enum TopicLevel {
    static func make(_ text: String) throws(FieldError) -> String {
        guard !text.isEmpty, !text.contains(where: { "/+#\0".contains($0) }) else {
            throw FieldError("'\(text)' is not one topic level (no /, +, # or an empty string)")
        }
        return text
    }
}

/// A mapping of the file, read key by key with the line and the path of each for errors.
struct Fields {
    let node: Node
    let mapping: Node.Mapping
    let path: String
    var line: Int? { node.mark?.line }

    init(_ node: Node, path: String) throws(ConfigurationError) {
        guard let mapping = node.mapping else {
            throw ConfigurationError(
                line: node.mark?.line, field: path.isEmpty ? nil : path,
                message: "expected a mapping (key: value lines)")
        }
        self.node = node
        self.mapping = mapping
        self.path = path
    }

    private func field(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func value(_ key: String) -> Node? {
        mapping.first { $0.key.string == key }?.value
    }

    func required<T>(_ key: String, _ convert: (String) throws(FieldError) -> T) throws(ConfigurationError) -> T {
        guard let result = try optional(key, convert) else {
            throw ConfigurationError(line: line, field: field(key), message: "missing")
        }
        return result
    }

    func optional<T>(_ key: String, _ convert: (String) throws(FieldError) -> T) throws(ConfigurationError) -> T? {
        guard let node = value(key) else { return nil }
        guard let scalar = node.scalar else {
            throw ConfigurationError(line: node.mark?.line, field: field(key), message: "expected a single value")
        }
        if node.null != nil { return nil }
        do { return try convert(scalar.string) } catch {
            throw ConfigurationError(line: node.mark?.line, field: field(key), message: error.message)
        }
    }

    func requiredList<T>(_ key: String, _ make: (Node, String) throws(ConfigurationError) -> T)
        throws(ConfigurationError) -> [T]
    {
        let list = try optionalList(key, make)
        guard value(key) != nil else { throw ConfigurationError(line: line, field: field(key), message: "missing") }
        guard !list.isEmpty else {
            throw ConfigurationError(line: value(key)?.mark?.line, field: field(key), message: "empty")
        }
        return list
    }

    func optionalList<T>(_ key: String, _ make: (Node, String) throws(ConfigurationError) -> T)
        throws(ConfigurationError) -> [T]
    {
        guard let node = value(key) else { return [] }
        guard let sequence = node.sequence else {
            throw ConfigurationError(line: node.mark?.line, field: field(key), message: "expected a list (- lines)")
        }
        var result: [T] = []
        for (index, element) in sequence.enumerated() { result.append(try make(element, "\(field(key))[\(index)]")) }
        return result
    }

    /// A mapping of scalars (`keys: {ADDRESS: HEX}`), each pair converted; a bad pair is
    /// named by its key (`keys.AA:BB:CC:DD:EE:FF`).
    func optionalMapping<K: Hashable, V>(_ key: String, _ convert: (String, String) throws(FieldError) -> (K, V))
        throws(ConfigurationError) -> [K: V]
    {
        guard let node = value(key) else { return [:] }
        if node.null != nil { return [:] }
        guard let mapping = node.mapping else {
            throw ConfigurationError(
                line: node.mark?.line, field: field(key), message: "expected a mapping (key: value lines)")
        }
        var result: [K: V] = [:]
        for (name, value) in mapping {
            let path = "\(field(key)).\(name.string ?? "?")"
            guard let text = name.string, let scalar = value.scalar else {
                throw ConfigurationError(line: name.mark?.line, field: path, message: "expected a single value")
            }
            do throws(FieldError) {
                let (converted, convertedValue) = try convert(text, scalar.string)
                guard result.updateValue(convertedValue, forKey: converted) == nil else {
                    throw FieldError("given twice")
                }
            } catch {
                throw ConfigurationError(line: name.mark?.line, field: path, message: error.message)
            }
        }
        return result
    }

    func rejectUnknown(_ known: Set<String>) throws(ConfigurationError) {
        for (key, _) in mapping {
            guard let name = key.string else {
                throw ConfigurationError(
                    line: key.mark?.line, field: path.isEmpty ? nil : path, message: "a key must be a plain word")
            }
            if !known.contains(name) {
                throw ConfigurationError(
                    line: key.mark?.line, field: field(name),
                    message: "unknown key (known here: \(known.sorted().joined(separator: ", ")))")
            }
        }
    }

    static func nonEmpty(_ text: String) throws(FieldError) -> String {
        guard !text.isEmpty else { throw FieldError("empty") }
        return text
    }

    /// A transport string as `bluejay` takes it, checked here: one that cannot work must fail
    /// `--check` (the unit's ExecStartPre), not every start, where systemd would restart the
    /// gateway forever.
    static func transport(_ text: String) throws(FieldError) -> String {
        do { _ = try TransportSpec(parsing: text) } catch { throw FieldError("\(error)") }
        return text
    }

    /// `ADDRESS: HEX` of a mapping of 16-byte keys (`keys:`, `irks:`): the address with or
    /// without its type, the key 32 hex digits; `name` says which key in the error.
    static func addressKey(_ name: String) -> (String, String) throws(FieldError) -> (BluetoothAddress, [UInt8]) {
        { (addressText: String, keyText: String) throws(FieldError) in
            guard let address = try? BluetoothAddress.parse(typed: addressText).address else {
                throw FieldError("'\(addressText)' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
            }
            guard let key = Hex.decode(keyText), key.count == 16 else {
                throw FieldError("the \(name) must be 16 bytes, 32 hex digits")
            }
            return (address, key)
        }
    }

    static func uuid(_ text: String) throws(FieldError) -> BluetoothUUID {
        guard let uuid = BluetoothUUID(text) else {
            throw FieldError(
                "'\(text)' is not a UUID (16-bit like 180D, 32-bit like 0000180D, or 128-bit like 0000180D-0000-1000-8000-00805F9B34FB)"
            )
        }
        return uuid
    }

    static func count(_ range: ClosedRange<Int>) -> (String) throws(FieldError) -> Int {
        { text throws(FieldError) in
            guard let value = Int(text), range.contains(value) else {
                throw FieldError("'\(text)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return value
        }
    }

    /// `60s`, `500ms`, `5m`, `1h`, or a number of seconds.
    static func duration(_ text: String) throws(FieldError) -> Duration {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(text.trimmingCharacters(in: .whitespaces)), scale = 1.0
        for (suffix, factor) in units where number.hasSuffix(suffix) {
            number = number.dropLast(suffix.count)
            scale = factor
            break
        }
        guard let value = Double(number), value > 0, value * scale <= 86_400 * 7 else {
            throw FieldError("'\(text)' is not a duration such as 500ms, 60s, 5m or 1h (above zero, at most a week)")
        }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
    }

    /// `log_level:`: the names swift-log and syslog share, least severe first.
    static func logLevel(_ text: String) throws(FieldError) -> Logger.Level {
        switch text.lowercased() {
        case "debug": return .debug
        case "info": return .info
        case "notice": return .notice
        case "warning": return .warning
        case "error": return .error
        default: throw FieldError("'\(text)' is not debug, info, notice, warning or error")
        }
    }

    /// `on` or `off` (also true/false, yes/no).
    static func onOff(_ text: String) throws(FieldError) -> Bool {
        switch text.lowercased() {
        case "on", "true", "yes": return true
        case "off", "false", "no": return false
        default: throw FieldError("'\(text)' is not on or off")
        }
    }

    /// `homeassistant: off` or a discovery prefix (`homeassistant`).
    static func homeAssistant(_ text: String) throws(FieldError) -> String? {
        switch text.lowercased() {
        case "off", "false", "no": return nil
        case "on", "true", "yes": return "homeassistant"
        default: return try TopicLevel.make(text)
        }
    }
}
