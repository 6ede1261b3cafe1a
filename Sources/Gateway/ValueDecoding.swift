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
        switch self {
        case .batteryLevel:
            guard value.count == 1, value[0] <= 100 else { return nil }
            return [field: Int(value[0])]
        case .temperature:
            guard value.count == 2 else { return nil }
            let raw = Int16(bitPattern: UInt16(value[0]) | UInt16(value[1]) << 8)
            return [field: raw == Int16.min ? NSNull() : Double(raw) / 100 as Any]
        case .humidity:
            guard value.count == 2 else { return nil }
            let raw = UInt16(value[0]) | UInt16(value[1]) << 8
            return [field: raw == 0xFFFF ? NSNull() : Double(raw) / 100 as Any]
        case .heartRate:
            return Self.heartRate(value)
        }
    }

    /// Heart Rate Measurement: flags bit 0 uint16 value, bits 1–2 sensor contact, bit 3
    /// energy expended (uint16 kJ), bit 4 RR-intervals (uint16, 1/1024 s each).
    private static func heartRate(_ value: [UInt8]) -> [String: Any]? {
        guard let flags = value.first else { return nil }
        var index = 1
        func uint16() -> Int? {
            guard index + 2 <= value.count else { return nil }
            defer { index += 2 }
            return Int(value[index]) | Int(value[index + 1]) << 8
        }
        var fields: [String: Any] = [:]
        if flags & 0x01 != 0 {
            guard let bpm = uint16() else { return nil }
            fields["heart_rate"] = bpm
        } else {
            guard index < value.count else { return nil }
            fields["heart_rate"] = Int(value[index])
            index += 1
        }
        if flags & 0x04 != 0 { fields["sensor_contact"] = flags & 0x02 != 0 }
        if flags & 0x08 != 0 {
            guard let energy = uint16() else { return nil }
            fields["energy_expended"] = energy
        }
        if flags & 0x10 != 0 {
            var intervals: [Double] = []
            while index < value.count {
                guard let rr = uint16() else { return nil }
                intervals.append(Double(rr) / 1024)
            }
            fields["rr_intervals"] = intervals
        }
        return fields
    }
}

/// Compact JSON with sorted keys (one encoder for every payload the gateway builds).
enum JSONText {
    static func encode(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
