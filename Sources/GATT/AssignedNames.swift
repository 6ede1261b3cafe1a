import BluetoothCore
import HCI

/// Names of SIG-assigned UUIDs (Bluetooth Assigned Numbers): the GATT declarations and
/// descriptors, and the services and characteristics most often met on real devices.
extension BluetoothUUID {
    private static let assignedNames: [UInt16: String] = [
        // Declarations and descriptors.
        0x2800: "Primary Service", 0x2801: "Secondary Service", 0x2802: "Include", 0x2803: "Characteristic",
        0x2900: "Characteristic Extended Properties", 0x2901: "Characteristic User Description",
        0x2902: "Client Characteristic Configuration", 0x2903: "Server Characteristic Configuration",
        0x2904: "Characteristic Presentation Format", 0x2905: "Characteristic Aggregate Format",
        0x2906: "Valid Range", 0x2907: "External Report Reference", 0x2908: "Report Reference",
        // Services.
        0x1800: "Generic Access", 0x1801: "Generic Attribute", 0x1802: "Immediate Alert", 0x1803: "Link Loss",
        0x1804: "Tx Power", 0x1805: "Current Time", 0x1809: "Health Thermometer", 0x180A: "Device Information",
        0x180D: "Heart Rate", 0x180F: "Battery", 0x1810: "Blood Pressure", 0x1812: "Human Interface Device",
        0x1814: "Running Speed and Cadence", 0x1816: "Cycling Speed and Cadence", 0x1818: "Cycling Power",
        0x1819: "Location and Navigation", 0x181A: "Environmental Sensing", 0x181C: "User Data",
        0x181D: "Weight Scale", 0x1822: "Pulse Oximeter", 0x1826: "Fitness Machine", 0x183B: "Binary Sensor",
        0xFE59: "Nordic DFU",
        // Characteristics.
        0x2A00: "Device Name", 0x2A01: "Appearance", 0x2A02: "Peripheral Privacy Flag", 0x2A03: "Reconnection Address",
        0x2A04: "Peripheral Preferred Connection Parameters", 0x2A05: "Service Changed", 0x2A06: "Alert Level",
        0x2A07: "Tx Power Level", 0x2A19: "Battery Level", 0x2A1C: "Temperature Measurement",
        0x2A23: "System ID", 0x2A24: "Model Number String", 0x2A25: "Serial Number String",
        0x2A26: "Firmware Revision String", 0x2A27: "Hardware Revision String", 0x2A28: "Software Revision String",
        0x2A29: "Manufacturer Name String", 0x2A2B: "Current Time", 0x2A35: "Blood Pressure Measurement",
        0x2A37: "Heart Rate Measurement", 0x2A38: "Body Sensor Location", 0x2A39: "Heart Rate Control Point",
        0x2A4A: "HID Information", 0x2A4B: "Report Map", 0x2A4C: "HID Control Point", 0x2A4D: "Report",
        0x2A4E: "Protocol Mode", 0x2A50: "PnP ID", 0x2A53: "RSC Measurement", 0x2A5B: "CSC Measurement",
        0x2A63: "Cycling Power Measurement", 0x2A6E: "Temperature", 0x2A6F: "Humidity",
        0x2A9D: "Weight Measurement", 0x2AA6: "Central Address Resolution", 0x2AC9: "Resolvable Private Address Only",
        0x2B29: "Client Supported Features", 0x2B2A: "Database Hash", 0x2B3A: "Server Supported Features",
    ]

    /// The SIG-assigned name (`Heart Rate Measurement`), when this is a 16-bit UUID we know.
    public var assignedName: String? { shortValue.flatMap { Self.assignedNames[$0] } }

    /// `2A37 Heart Rate Measurement` for known SIG UUIDs, else the UUID alone.
    public var nameAndValue: String { assignedName.map { "\(description) \($0)" } ?? description }
}
