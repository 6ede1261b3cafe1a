import BluetoothCore
import HCI

/// The fields of the main BR/EDR events in words, for the trace printer: the events of
/// connecting, authenticating and pairing a BR/EDR link, as LE's have theirs (Core Vol 4,
/// Part E, 7.7). The HCI layer keeps these events raw (the host drives LE links only); a
/// trace of a phone shows them all the same.
///
/// The fields ``HCISecretFields`` names (link keys, passkeys) print as `<redacted N octets>`
/// unless `showingSecrets`. Numeric comparison values are not secret: both screens show
/// them, and they are of no use to an attacker.
enum BREDREventDescription {
    /// The event's fields as `status 0x00 success, handle 0x000b, …`; nil for an event this
    /// does not describe. Throws when the parameters are too short for the fields. `shown`
    /// counts the secret fields printed in clear.
    static func describe(code: UInt8, parameters: ArraySlice<UInt8>, showingSecrets: Bool = false, shown: inout Int)
        throws(DecodingError) -> String?
    {
        var reader = ByteReader(parameters)
        let secrets = HCISecretFields.event(code: code, parameters: parameters)
        /// `clear`, or `<redacted N octets>` when the `length` octets just read are secret.
        func field(_ length: Int, _ clear: String) -> String {
            let start = parameters.count - reader.count - length
            guard secrets.contains(where: { $0.range.overlaps(start..<(start + length)) }) else { return clear }
            guard showingSecrets else { return "<redacted \(length) octets>" }
            shown += 1
            return clear
        }
        switch code {
        case 0x02, 0x22:
            // Inquiry Result (with RSSI): the fields come as arrays, one entry per response.
            let count = Int(try reader.readUInt8())
            let addresses = try (0..<count).map { _ throws(DecodingError) in try BluetoothAddress(from: &reader) }
            return "\(count) response(s)"
                + (addresses.isEmpty ? "" : ": " + addresses.map(\.description).joined(separator: ", "))
        case 0x2F:
            // Extended Inquiry Result: always one response, then its extended inquiry response.
            let count = try reader.readUInt8()
            let address = try BluetoothAddress(from: &reader)
            _ = try reader.readBytes(2)  // page scan repetition mode, reserved
            let deviceClass = try reader.readUInt24()
            _ = try reader.readUInt16()  // clock offset
            let rssi = Int8(bitPattern: try reader.readUInt8())
            let name = AdvertisingData(parsing: reader.remaining).localName
            return "\(count) response(s): \(address), class \(hex(deviceClass, digits: 6)), RSSI \(rssi) dBm"
                + (name.map { ", name \(quoted($0))" } ?? "")
        case 0x03:
            let status = HCIStatus(rawValue: try reader.readUInt8())
            let handle = try reader.readUInt16() & 0x0FFF
            let address = try BluetoothAddress(from: &reader)
            let linkType = try reader.readUInt8()
            let encryption = try reader.readUInt8()
            return
                "status \(status), handle \(hex(handle, digits: 4)), peer \(address), link type \(Self.linkType(linkType)), "
                + "encryption \(encryption == 0 ? "off" : encryption == 1 ? "on" : hex(encryption, digits: 2))"
        case 0x04:
            let address = try BluetoothAddress(from: &reader)
            let deviceClass = try reader.readUInt24()
            return
                "peer \(address), class \(hex(deviceClass, digits: 6)), link type \(linkType(try reader.readUInt8()))"
        case 0x06, 0x30:
            // Authentication Complete, Encryption Key Refresh Complete: status and handle.
            return try statusAndHandle(&reader)
        case 0x07:
            let status = HCIStatus(rawValue: try reader.readUInt8())
            let address = try BluetoothAddress(from: &reader)
            // Remote_Name: UTF-8, up to 248 octets, ended by a zero octet when shorter.
            let name = String(decoding: reader.remaining.prefix { $0 != 0 }, as: UTF8.self)
            return "status \(status), peer \(address), name \(quoted(name))"
        case 0x0C:
            let head = try statusAndHandle(&reader)
            let version = try reader.readUInt8()
            let company = try reader.readUInt16()
            let subversion = try reader.readUInt16()
            return head
                + ", version \(hex(version, digits: 2)), company \(hex(company, digits: 4)), subversion \(hex(subversion, digits: 4))"
        case 0x12:
            let status = HCIStatus(rawValue: try reader.readUInt8())
            let address = try BluetoothAddress(from: &reader)
            let role = try reader.readUInt8()
            return
                "status \(status), peer \(address), role \(role == 0 ? "central" : role == 1 ? "peripheral" : hex(role, digits: 2))"
        case 0x14:
            let head = try statusAndHandle(&reader)
            let mode = try reader.readUInt8()
            let interval = try reader.readUInt16()
            let modeName =
                switch mode {
                case 0x00: "active"
                case 0x01: "hold"
                case 0x02: "sniff"
                default: hex(mode, digits: 2)
                }
            // The interval counts baseband slots of 0.625 ms.
            return head + ", mode \(modeName), interval \(interval) slots (\(Double(interval) * 0.625) ms)"
        case 0x17, 0x31:
            // Link Key Request, IO Capability Request: the peer only.
            return "peer \(try BluetoothAddress(from: &reader))"
        case 0x18:
            let address = try BluetoothAddress(from: &reader)
            let key = field(16, try reader.readBytes(16).hexString())
            let keyType = try reader.readUInt8()
            return "peer \(address), key \(key), key type \(Self.keyType(keyType))"
        case 0x1B:
            let handle = try reader.readUInt16() & 0x0FFF
            return "handle \(hex(handle, digits: 4)), max slots \(try reader.readUInt8())"
        case 0x23:
            let head = try statusAndHandle(&reader)
            let page = try reader.readUInt8()
            let maximumPage = try reader.readUInt8()
            let features = try reader.readUInt64()
            return head + ", page \(page) of \(maximumPage), features \(hex(features, digits: 16))"
        case 0x2C:
            let head = try statusAndHandle(&reader)
            let address = try BluetoothAddress(from: &reader)
            let linkType = try reader.readUInt8()
            let interval = try reader.readUInt8()
            let window = try reader.readUInt8()
            let receiveLength = try reader.readUInt16()
            let transmitLength = try reader.readUInt16()
            let airMode = try reader.readUInt8()
            return head
                + ", peer \(address), link type \(Self.linkType(linkType)), interval \(interval) slots, window \(window) slots, "
                + "rx \(receiveLength) tx \(transmitLength) octets, air mode \(Self.airMode(airMode))"
        case 0x32:
            let address = try BluetoothAddress(from: &reader)
            let capability = try reader.readUInt8()
            let oob = try reader.readUInt8()
            let authentication = try reader.readUInt8()
            return
                "peer \(address), IO capability \(ioCapability(capability)), OOB data \(oob == 0 ? "absent" : "present"), "
                + "authentication \(authenticationRequirements(authentication))"
        case 0x33, 0x3B:
            // User Confirmation Request (its numeric value), User Passkey Notification.
            let address = try BluetoothAddress(from: &reader)
            let value = try reader.readUInt32()
            let digits = String(value)
            return
                "peer \(address), \(code == 0x33 ? "value" : "passkey") \(field(4, String(repeating: "0", count: max(0, 6 - digits.count)) + digits))"
        case 0x36:
            let status = HCIStatus(rawValue: try reader.readUInt8())
            return "status \(status), peer \(try BluetoothAddress(from: &reader))"
        default:
            return nil
        }
    }

    private static func statusAndHandle(_ reader: inout ByteReader) throws(DecodingError) -> String {
        let status = HCIStatus(rawValue: try reader.readUInt8())
        return "status \(status), handle \(hex(try reader.readUInt16() & 0x0FFF, digits: 4))"
    }

    private static func linkType(_ type: UInt8) -> String {
        switch type {
        case 0x00: "SCO"
        case 0x01: "ACL"
        case 0x02: "eSCO"
        default: hex(type, digits: 2)
        }
    }

    private static func keyType(_ type: UInt8) -> String {
        let name =
            switch type {
            case 0x00: " combination"
            case 0x03: " debug combination"
            case 0x04: " unauthenticated combination P-192"
            case 0x05: " authenticated combination P-192"
            case 0x06: " changed combination"
            case 0x07: " unauthenticated combination P-256"
            case 0x08: " authenticated combination P-256"
            default: ""
            }
        return hex(type, digits: 2) + name
    }

    private static func airMode(_ mode: UInt8) -> String {
        switch mode {
        case 0x00: "µ-law"
        case 0x01: "A-law"
        case 0x02: "CVSD"
        case 0x03: "transparent"
        default: hex(mode, digits: 2)
        }
    }

    private static func ioCapability(_ capability: UInt8) -> String {
        switch capability {
        case 0x00: "DisplayOnly"
        case 0x01: "DisplayYesNo"
        case 0x02: "KeyboardOnly"
        case 0x03: "NoInputNoOutput"
        default: hex(capability, digits: 2)
        }
    }

    private static func authenticationRequirements(_ value: UInt8) -> String {
        let name =
            switch value {
            case 0x00: " no bonding"
            case 0x01: " no bonding, MITM"
            case 0x02: " dedicated bonding"
            case 0x03: " dedicated bonding, MITM"
            case 0x04: " general bonding"
            case 0x05: " general bonding, MITM"
            default: ""
            }
        return hex(value, digits: 2) + name
    }

    /// A name from the air in quotes, control characters escaped, so a line stays one line.
    private static func quoted(_ text: String) -> String {
        let escaped = text.unicodeScalars.map { scalar in
            if scalar == "\"" || scalar == "\\" { return "\\" + String(scalar) }
            return scalar.value < 0x20 || scalar.value == 0x7F
                ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }
        return "\"" + escaped.joined() + "\""
    }
}
