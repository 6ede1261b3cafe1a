/// What a BTHome object id carries (bthome.io/format): a scaled number, a binary sensor, an
/// event, a variable-length text or raw value, or device information.
enum BTHomeObjectKind: Sendable {
    /// A measurement or count, scaled.
    case number(NumericField)
    /// A binary sensor: one octet, 0 off, 1 on.
    case binary(String)
    /// A button event (object 0x3A): one octet.
    case button
    /// A dimmer event (object 0x3C): the event and a number of steps.
    case dimmer
    /// A command (object 0x3B): argument length, opcode, arguments.
    case command
    /// UTF-8 text (object 0x53): a length octet, then the text.
    case text
    /// Raw bytes (object 0x54): a length octet, then the bytes.
    case raw
    /// The device type id (object 0xF0), little-endian.
    case deviceTypeID
    /// The firmware version (objects 0xF1 and 0xF2): one number per octet, most significant last.
    case firmware(width: Int)

    /// Octets after the object id, nil for the variable-length kinds.
    var fixedWidth: Int? {
        switch self {
        case let .number(field): field.width
        case .binary, .button: 1
        case .dimmer, .deviceTypeID: 2
        case let .firmware(width): width
        case .command, .text, .raw: nil
        }
    }
}

/// BTHome's object ids (bthome.io/format, the tables "Sensor data", "Binary sensor data",
/// "Events", "Device information" and "Misc data"), one row each. Names follow the spec's
/// property names in lower snake case; where the spec gives a binary sensor the name of a
/// measurement (battery, power, moisture, gas) the binary one says what it means
/// (`battery_low`, `power_on`, `moisture_detected`, `gas_detected`) so the two can share an
/// advertisement. The packet id is `packet_counter`, as in every other format here.
enum BTHomeObjects {
    private static func n(
        _ name: String, _ width: Int, signed: Bool = false, _ multiplier: Int64 = 1,
        _ exponent: Int = 0
    ) -> BTHomeObjectKind {
        .number(NumericField(name, width: width, signed: signed, multiplier: multiplier, exponent: exponent))
    }

    /// By object id.
    static let table: [UInt8: BTHomeObjectKind] = {
        let rows: [(UInt8, BTHomeObjectKind)] = [
            (0x00, n("packet_counter", 1)),
            (0x01, n("battery", 1)),  // %
            (0x02, n("temperature", 2, signed: true, 1, -2)),  // °C
            (0x03, n("humidity", 2, 1, -2)),  // %
            (0x04, n("pressure", 3, 1, -2)),  // hPa
            (0x05, n("illuminance", 3, 1, -2)),  // lx
            (0x06, n("mass_kg", 2, 1, -2)),  // kg
            (0x07, n("mass_lb", 2, 1, -2)),  // lb
            (0x08, n("dewpoint", 2, signed: true, 1, -2)),  // °C
            (0x09, n("count", 1)),
            (0x0A, n("energy", 3, 1, -3)),  // kWh
            (0x0B, n("power", 3, 1, -2)),  // W
            (0x0C, n("voltage", 2, 1, -3)),  // V
            (0x0D, n("pm25", 2)),  // µg/m³
            (0x0E, n("pm10", 2)),  // µg/m³
            (0x0F, .binary("generic_boolean")),
            (0x10, .binary("power_on")),
            (0x11, .binary("opening")),
            (0x12, n("co2", 2)),  // ppm
            (0x13, n("tvoc", 2)),  // µg/m³
            (0x14, n("moisture", 2, 1, -2)),  // %
            (0x15, .binary("battery_low")),
            (0x16, .binary("battery_charging")),
            (0x17, .binary("carbon_monoxide")),
            (0x18, .binary("cold")),
            (0x19, .binary("connectivity")),
            (0x1A, .binary("door")),
            (0x1B, .binary("garage_door")),
            (0x1C, .binary("gas_detected")),
            (0x1D, .binary("heat")),
            (0x1E, .binary("light")),
            (0x1F, .binary("lock")),  // true: unlocked
            (0x20, .binary("moisture_detected")),
            (0x21, .binary("motion")),
            (0x22, .binary("moving")),
            (0x23, .binary("occupancy")),
            (0x24, .binary("plug")),
            (0x25, .binary("presence")),
            (0x26, .binary("problem")),
            (0x27, .binary("running")),
            (0x28, .binary("safety")),
            (0x29, .binary("smoke")),
            (0x2A, .binary("sound")),
            (0x2B, .binary("tamper")),
            (0x2C, .binary("vibration")),
            (0x2D, .binary("window")),
            (0x2E, n("humidity", 1)),  // %
            (0x2F, n("moisture", 1)),  // %
            (0x3A, .button),
            (0x3B, .command),
            (0x3C, .dimmer),
            (0x3D, n("count", 2)),
            (0x3E, n("count", 4)),
            (0x3F, n("rotation", 2, signed: true, 1, -1)),  // °
            (0x40, n("distance_mm", 2)),  // mm
            (0x41, n("distance_m", 2, 1, -1)),  // m
            (0x42, n("duration", 3, 1, -3)),  // s
            (0x43, n("current", 2, 1, -3)),  // A
            (0x44, n("speed", 2, 1, -2)),  // m/s
            (0x45, n("temperature", 2, signed: true, 1, -1)),  // °C
            (0x46, n("uv_index", 1, 1, -1)),
            (0x47, n("volume", 2, 1, -1)),  // L
            (0x48, n("volume_ml", 2)),  // mL
            (0x49, n("volume_flow_rate", 2, 1, -3)),  // m³/h
            (0x4A, n("voltage", 2, 1, -1)),  // V
            (0x4B, n("gas", 3, 1, -3)),  // m³
            (0x4C, n("gas", 4, 1, -3)),  // m³
            (0x4D, n("energy", 4, 1, -3)),  // kWh
            (0x4E, n("volume", 4, 1, -3)),  // L
            (0x4F, n("water", 4, 1, -3)),  // L
            (0x50, n("timestamp", 4)),  // s since 1970-01-01 UTC
            (0x51, n("acceleration", 2, 1, -3)),  // m/s²
            (0x52, n("gyroscope", 2, 1, -3)),  // °/s
            (0x53, .text),
            (0x54, .raw),
            (0x55, n("volume_storage", 4, 1, -3)),  // L
            (0x56, n("conductivity", 2)),  // µS/cm
            (0x57, n("temperature", 1, signed: true)),  // °C
            (0x58, n("temperature", 1, signed: true, 35, -2)),  // °C, factor 0.35
            (0x59, n("count", 1, signed: true)),
            (0x5A, n("count", 2, signed: true)),
            (0x5B, n("count", 4, signed: true)),
            (0x5C, n("power", 4, signed: true, 1, -2)),  // W
            (0x5D, n("current", 2, signed: true, 1, -3)),  // A
            (0x5E, n("direction", 2, 1, -2)),  // °
            (0x5F, n("precipitation", 2, 1, -1)),  // mm
            (0x60, n("channel", 1)),
            (0x61, n("rotational_speed", 2)),  // rpm
            (0x62, n("speed", 4, signed: true, 1, -6)),  // m/s
            (0x63, n("acceleration", 4, signed: true, 1, -6)),  // m/s²
            (0x64, n("light_level", 1)),  // 0 dark, 1 twilight, 2 bright
            (0x65, n("settings_revision", 1)),
            (0xF0, .deviceTypeID),
            (0xF1, .firmware(width: 4)),
            (0xF2, .firmware(width: 3)),
        ]
        return Dictionary(rows, uniquingKeysWith: { first, _ in first })
    }()

    /// Button events (object 0x3A) by event id; 0x00 is «no event» for that button.
    static let buttonEvents: [UInt8: String] = [
        0x01: "press", 0x02: "double_press", 0x03: "triple_press", 0x04: "long_press",
        0x05: "long_double_press", 0x06: "long_triple_press", 0x80: "hold_press",
    ]

    /// Dimmer events (object 0x3C) by event id; 0x00 is «no event».
    static let dimmerEvents: [UInt8: String] = [0x01: "rotate_left", 0x02: "rotate_right"]

    /// Command opcodes (object 0x3B).
    static let commands: [UInt8: String] = [
        0x00: "off", 0x01: "on", 0x02: "toggle", 0x03: "step_up", 0x04: "step_down",
    ]
}
