import Bluejay
import Foundation

/// The SIG characteristics the gateway decodes to `…/CHARACTERISTIC/json` (formats from the
/// GATT Specification Supplement) and describes to Home Assistant.
public enum KnownCharacteristic: String, Sendable, CaseIterable {
    /// 0x2A19 Battery Level: uint8, percent.
    case batteryLevel = "2A19"
    /// 0x2A37 Heart Rate Measurement: flags, uint8 or uint16 bpm, energy expended, RR-intervals.
    case heartRate = "2A37"
    /// 0x2A6E Temperature: sint16, 0.01 °C (0x8000: unknown).
    case temperature = "2A6E"
    /// 0x2A6F Humidity: uint16, 0.01 % (0xFFFF: unknown).
    case humidity = "2A6F"

    /// The one for `uuid`, if it is one of these.
    public init?(_ uuid: BluetoothUUID) {
        guard let match = Self.allCases.first(where: { BluetoothUUID($0.rawValue) == uuid }) else { return nil }
        self = match
    }

    /// The JSON field that carries the main reading (Home Assistant's value template reads it).
    public var field: String {
        switch self {
        case .batteryLevel: "battery_level"
        case .heartRate: "heart_rate"
        case .temperature: "temperature"
        case .humidity: "humidity"
        }
    }

    /// The reading's unit, as Home Assistant spells it.
    public var unit: String {
        switch self {
        case .batteryLevel: "%"
        case .heartRate: "bpm"
        case .temperature: "°C"
        case .humidity: "%"
        }
    }

    /// Home Assistant's device class (nil: none fits).
    public var deviceClass: String? {
        switch self {
        case .batteryLevel: "battery"
        case .heartRate: nil
        case .temperature: "temperature"
        case .humidity: "humidity"
        }
    }

    /// A readable name.
    public var name: String {
        switch self {
        case .batteryLevel: "Battery Level"
        case .heartRate: "Heart Rate"
        case .temperature: "Temperature"
        case .humidity: "Humidity"
        }
    }

    /// The value's fields, or nil when the bytes are not this characteristic's format.
    public func decode(_ value: [UInt8]) -> [String: Any]? {
        guard let fields = fields(value) else { return nil }
        var object: [String: Any] = [:]
        for (key, field) in fields {
            switch field {
            case .integer(let number): object[key] = number
            case .bool(let flag): object[key] = flag
            case .number(let number): object[key] = number.map { $0 as Any } ?? NSNull()
            case .numbers(let numbers): object[key] = numbers
            }
        }
        return object
    }

    /// `…/json`'s payload for `value`: what `JSONText.encode(decode(value))` writes, written
    /// directly as UTF-8, keys in sorted order (nil when ``decode(_:)`` is). JSONSerialization's
    /// boxing of every field cost more than all the rest of a value's way to the broker.
    public func json(_ value: [UInt8]) -> [UInt8]? {
        var text: [UInt8] = []
        text.reserveCapacity(32)
        switch self {
        case .batteryLevel, .temperature, .humidity:
            guard let (_, field) = fields(value)?.first else { return nil }
            Self.write(key: self.field, field, first: true, to: &text)
        case .heartRate:
            guard let measurement = HeartRateMeasurement(value) else { return nil }
            // The keys' sorted order: energy_expended, heart_rate, rr_intervals, sensor_contact.
            if let energy = measurement.energyExpended {
                Self.write(key: "energy_expended", .integer(energy), first: true, to: &text)
            }
            Self.write(key: "heart_rate", .integer(measurement.heartRate), first: text.isEmpty, to: &text)
            if let intervals = measurement.rrIntervals {
                Self.write(key: "rr_intervals", .numbers(intervals), first: false, to: &text)
            }
            if let contact = measurement.sensorContact {
                Self.write(key: "sensor_contact", .bool(contact), first: false, to: &text)
            }
        }
        text.append(UInt8(ascii: "}"))
        return text
    }

    /// Appends `"key":field` (after `{` when `first`, else after `,`).
    private static func write(key: String, _ field: Field, first: Bool, to text: inout [UInt8]) {
        text.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
        text.append(UInt8(ascii: "\""))
        text.append(contentsOf: key.utf8)
        text.append(contentsOf: "\":".utf8)
        switch field {
        case .integer(let number): text.append(contentsOf: String(number).utf8)
        case .bool(let flag): text.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): text.append(contentsOf: (number.map(jsonNumber) ?? "null").utf8)
        case .numbers(let numbers):
            text.append(UInt8(ascii: "["))
            for (index, number) in numbers.enumerated() {
                if index > 0 { text.append(UInt8(ascii: ",")) }
                text.append(contentsOf: jsonNumber(number).utf8)
            }
            text.append(UInt8(ascii: "]"))
        }
    }

    /// A Double as JSONSerialization writes it: its shortest description, without the `.0`
    /// of a whole number (`21.5`, `100`).
    static func jsonNumber(_ number: Double) -> String {
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    /// One decoded field (the keys are JSON-safe names, written unescaped).
    enum Field {
        case integer(Int)
        case bool(Bool)
        /// nil: the format's «unknown», JSON null.
        case number(Double?)
        case numbers([Double])
    }

    /// The fields of `value`, in no particular order, or nil when the bytes are not this
    /// characteristic's format: the one decoder behind ``decode(_:)`` and ``json(_:)``.
    func fields(_ value: [UInt8]) -> [(key: String, field: Field)]? {
        switch self {
        case .batteryLevel:
            guard value.count == 1, value[0] <= 100 else { return nil }
            return [(field, .integer(Int(value[0])))]
        case .temperature:
            guard value.count == 2 else { return nil }
            let raw = Int16(bitPattern: UInt16(value[0]) | UInt16(value[1]) << 8)
            return [(field, .number(raw == Int16.min ? nil : Double(raw) / 100))]
        case .humidity:
            guard value.count == 2 else { return nil }
            let raw = UInt16(value[0]) | UInt16(value[1]) << 8
            return [(field, .number(raw == 0xFFFF ? nil : Double(raw) / 100))]
        case .heartRate:
            return Self.heartRate(value)
        }
    }

    /// Heart Rate Measurement's fields.
    private static func heartRate(_ value: [UInt8]) -> [(key: String, field: Field)]? {
        guard let measurement = HeartRateMeasurement(value) else { return nil }
        var fields: [(key: String, field: Field)] = [("heart_rate", .integer(measurement.heartRate))]
        if let contact = measurement.sensorContact { fields.append(("sensor_contact", .bool(contact))) }
        if let energy = measurement.energyExpended { fields.append(("energy_expended", .integer(energy))) }
        if let intervals = measurement.rrIntervals { fields.append(("rr_intervals", .numbers(intervals))) }
        return fields
    }
}

/// A Heart Rate Measurement (0x2A37) taken apart: flags bit 0 uint16 value, bits 1–2 sensor
/// contact, bit 3 energy expended (uint16 kJ), bit 4 RR-intervals (uint16, 1/1024 s each).
struct HeartRateMeasurement {
    /// Beats per minute.
    var heartRate: Int
    /// Whether the sensor has contact, when it says (bit 2).
    var sensorContact: Bool?
    /// Kilojoules, when present (bit 3).
    var energyExpended: Int?
    /// Seconds, when present (bit 4).
    var rrIntervals: [Double]?

    /// Nil when `value` is too short for what its flags announce, or has an odd octet of RR.
    init?(_ value: [UInt8]) {
        guard let flags = value.first else { return nil }
        var index = 1
        func uint16() -> Int? {
            guard index + 2 <= value.count else { return nil }
            defer { index += 2 }
            return Int(value[index]) | Int(value[index + 1]) << 8
        }
        if flags & 0x01 != 0 {
            guard let bpm = uint16() else { return nil }
            heartRate = bpm
        } else {
            guard index < value.count else { return nil }
            heartRate = Int(value[index])
            index += 1
        }
        if flags & 0x04 != 0 { sensorContact = flags & 0x02 != 0 }
        if flags & 0x08 != 0 {
            guard let energy = uint16() else { return nil }
            energyExpended = energy
        }
        if flags & 0x10 != 0 {
            var intervals: [Double] = []
            while index < value.count {
                guard let rr = uint16() else { return nil }
                intervals.append(Double(rr) / 1024)
            }
            rrIntervals = intervals
        }
    }
}

/// Compact JSON with sorted keys (one encoder for every payload the gateway builds).
enum JSONText {
    static func encode(_ object: [String: Any]) -> String {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
