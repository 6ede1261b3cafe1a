import BluetoothCore
@testable import HCI
import Testing

// HCINames held against a list typed from the section index of the Bluetooth Core
// Specification 6.0, Vol 4, Part E, §7 — not against any trace. Each entry is (section,
// opcode or code, name); the versions of a command or event that have codes of their own
// share its section (§7.8.2 is LE_Read_Buffer_Size and LE_Read_Buffer_Size_v2). Sections the
// specification marks "no longer used" are absent (7.1.37–7.1.44, 7.2.4–7.2.5, 7.3.7, …):
// what they named is in HCINames' withdrawn part, which this list does not cover.
//
// Three names are kept as this project first spelled them, which the shared trace counts
// use, where Core 6.0 titles the section differently: 7.8.3 LE_Read_Local_Supported_Features
// and 7.8.21 LE_Read_Remote_Features (6.0: ..._Page_0), 7.7.65.4
// LE_Read_Remote_Features_Complete (6.0: LE_Read_Remote_Features_Page_0_Complete).

/// §7.7 but §7.7.65.x: every event of Core 6.0.
private let specificationEvents: [(section: String, code: UInt8, name: String)] = [
    ("7.7.1", 0x01, "Inquiry_Complete"),
    ("7.7.2", 0x02, "Inquiry_Result"),
    ("7.7.3", 0x03, "Connection_Complete"),
    ("7.7.4", 0x04, "Connection_Request"),
    ("7.7.5", 0x05, "Disconnection_Complete"),
    ("7.7.6", 0x06, "Authentication_Complete"),
    ("7.7.7", 0x07, "Remote_Name_Request_Complete"),
    ("7.7.8", 0x08, "Encryption_Change"),
    ("7.7.8", 0x59, "Encryption_Change_v2"),
    ("7.7.9", 0x09, "Change_Connection_Link_Key_Complete"),
    ("7.7.10", 0x0A, "Link_Key_Type_Changed"),
    ("7.7.11", 0x0B, "Read_Remote_Supported_Features_Complete"),
    ("7.7.12", 0x0C, "Read_Remote_Version_Information_Complete"),
    ("7.7.13", 0x0D, "QoS_Setup_Complete"),
    ("7.7.14", 0x0E, "Command_Complete"),
    ("7.7.15", 0x0F, "Command_Status"),
    ("7.7.16", 0x10, "Hardware_Error"),
    ("7.7.17", 0x11, "Flush_Occurred"),
    ("7.7.18", 0x12, "Role_Change"),
    ("7.7.19", 0x13, "Number_Of_Completed_Packets"),
    ("7.7.20", 0x14, "Mode_Change"),
    ("7.7.21", 0x15, "Return_Link_Keys"),
    ("7.7.22", 0x16, "PIN_Code_Request"),
    ("7.7.23", 0x17, "Link_Key_Request"),
    ("7.7.24", 0x18, "Link_Key_Notification"),
    ("7.7.25", 0x19, "Loopback_Command"),
    ("7.7.26", 0x1A, "Data_Buffer_Overflow"),
    ("7.7.27", 0x1B, "Max_Slots_Change"),
    ("7.7.28", 0x1C, "Read_Clock_Offset_Complete"),
    ("7.7.29", 0x1D, "Connection_Packet_Type_Changed"),
    ("7.7.30", 0x1E, "QoS_Violation"),
    ("7.7.31", 0x20, "Page_Scan_Repetition_Mode_Change"),
    ("7.7.32", 0x21, "Flow_Specification_Complete"),
    ("7.7.33", 0x22, "Inquiry_Result_with_RSSI"),
    ("7.7.34", 0x23, "Read_Remote_Extended_Features_Complete"),
    ("7.7.35", 0x2C, "Synchronous_Connection_Complete"),
    ("7.7.36", 0x2D, "Synchronous_Connection_Changed"),
    ("7.7.37", 0x2E, "Sniff_Subrating"),
    ("7.7.38", 0x2F, "Extended_Inquiry_Result"),
    ("7.7.39", 0x30, "Encryption_Key_Refresh_Complete"),
    ("7.7.40", 0x31, "IO_Capability_Request"),
    ("7.7.41", 0x32, "IO_Capability_Response"),
    ("7.7.42", 0x33, "User_Confirmation_Request"),
    ("7.7.43", 0x34, "User_Passkey_Request"),
    ("7.7.44", 0x35, "Remote_OOB_Data_Request"),
    ("7.7.45", 0x36, "Simple_Pairing_Complete"),
    ("7.7.46", 0x38, "Link_Supervision_Timeout_Changed"),
    ("7.7.47", 0x39, "Enhanced_Flush_Complete"),
    ("7.7.48", 0x3B, "User_Passkey_Notification"),
    ("7.7.49", 0x3C, "Keypress_Notification"),
    ("7.7.50", 0x3D, "Remote_Host_Supported_Features_Notification"),
    ("7.7.59", 0x48, "Number_Of_Completed_Data_Blocks"),
    ("7.7.65", 0x3E, "LE_Meta"),
    ("7.7.66", 0x4E, "Triggered_Clock_Capture"),
    ("7.7.67", 0x4F, "Synchronization_Train_Complete"),
    ("7.7.68", 0x50, "Synchronization_Train_Received"),
    ("7.7.69", 0x51, "Connectionless_Peripheral_Broadcast_Receive"),
    ("7.7.70", 0x52, "Connectionless_Peripheral_Broadcast_Timeout"),
    ("7.7.71", 0x53, "Truncated_Page_Complete"),
    ("7.7.72", 0x54, "Peripheral_Page_Response_Timeout"),
    ("7.7.73", 0x55, "Connectionless_Peripheral_Broadcast_Channel_Map_Change"),
    ("7.7.74", 0x56, "Inquiry_Response_Notification"),
    ("7.7.75", 0x57, "Authenticated_Payload_Timeout_Expired"),
    ("7.7.76", 0x58, "SAM_Status_Change"),
]

/// §7.7.65.x: every LE Meta subevent of Core 6.0.
private let specificationLESubevents: [(section: String, code: UInt8, name: String)] = [
    ("7.7.65.1", 0x01, "LE_Connection_Complete"),
    ("7.7.65.2", 0x02, "LE_Advertising_Report"),
    ("7.7.65.3", 0x03, "LE_Connection_Update_Complete"),
    ("7.7.65.4", 0x04, "LE_Read_Remote_Features_Complete"),
    ("7.7.65.5", 0x05, "LE_Long_Term_Key_Request"),
    ("7.7.65.6", 0x06, "LE_Remote_Connection_Parameter_Request"),
    ("7.7.65.7", 0x07, "LE_Data_Length_Change"),
    ("7.7.65.8", 0x08, "LE_Read_Local_P-256_Public_Key_Complete"),
    ("7.7.65.9", 0x09, "LE_Generate_DHKey_Complete"),
    ("7.7.65.10", 0x0A, "LE_Enhanced_Connection_Complete"),
    ("7.7.65.10", 0x29, "LE_Enhanced_Connection_Complete_v2"),
    ("7.7.65.11", 0x0B, "LE_Directed_Advertising_Report"),
    ("7.7.65.12", 0x0C, "LE_PHY_Update_Complete"),
    ("7.7.65.13", 0x0D, "LE_Extended_Advertising_Report"),
    ("7.7.65.14", 0x0E, "LE_Periodic_Advertising_Sync_Established"),
    ("7.7.65.14", 0x24, "LE_Periodic_Advertising_Sync_Established_v2"),
    ("7.7.65.15", 0x0F, "LE_Periodic_Advertising_Report"),
    ("7.7.65.15", 0x25, "LE_Periodic_Advertising_Report_v2"),
    ("7.7.65.16", 0x10, "LE_Periodic_Advertising_Sync_Lost"),
    ("7.7.65.17", 0x11, "LE_Scan_Timeout"),
    ("7.7.65.18", 0x12, "LE_Advertising_Set_Terminated"),
    ("7.7.65.19", 0x13, "LE_Scan_Request_Received"),
    ("7.7.65.20", 0x14, "LE_Channel_Selection_Algorithm"),
    ("7.7.65.21", 0x15, "LE_Connectionless_IQ_Report"),
    ("7.7.65.22", 0x16, "LE_Connection_IQ_Report"),
    ("7.7.65.23", 0x17, "LE_CTE_Request_Failed"),
    ("7.7.65.24", 0x18, "LE_Periodic_Advertising_Sync_Transfer_Received"),
    ("7.7.65.24", 0x26, "LE_Periodic_Advertising_Sync_Transfer_Received_v2"),
    ("7.7.65.25", 0x19, "LE_CIS_Established"),
    ("7.7.65.25", 0x2A, "LE_CIS_Established_v2"),
    ("7.7.65.26", 0x1A, "LE_CIS_Request"),
    ("7.7.65.27", 0x1B, "LE_Create_BIG_Complete"),
    ("7.7.65.28", 0x1C, "LE_Terminate_BIG_Complete"),
    ("7.7.65.29", 0x1D, "LE_BIG_Sync_Established"),
    ("7.7.65.30", 0x1E, "LE_BIG_Sync_Lost"),
    ("7.7.65.31", 0x1F, "LE_Request_Peer_SCA_Complete"),
    ("7.7.65.32", 0x20, "LE_Path_Loss_Threshold"),
    ("7.7.65.33", 0x21, "LE_Transmit_Power_Reporting"),
    ("7.7.65.34", 0x22, "LE_BIGInfo_Advertising_Report"),
    ("7.7.65.35", 0x23, "LE_Subrate_Change"),
    ("7.7.65.36", 0x27, "LE_Periodic_Advertising_Subevent_Data_Request"),
    ("7.7.65.37", 0x28, "LE_Periodic_Advertising_Response_Report"),
    ("7.7.65.38", 0x2B, "LE_Read_All_Remote_Features_Complete"),
    ("7.7.65.39", 0x2C, "LE_CS_Read_Remote_Supported_Capabilities_Complete"),
    ("7.7.65.40", 0x2D, "LE_CS_Read_Remote_FAE_Table_Complete"),
    ("7.7.65.41", 0x2E, "LE_CS_Security_Enable_Complete"),
    ("7.7.65.42", 0x2F, "LE_CS_Config_Complete"),
    ("7.7.65.43", 0x30, "LE_CS_Procedure_Enable_Complete"),
    ("7.7.65.44", 0x31, "LE_CS_Subevent_Result"),
    ("7.7.65.45", 0x32, "LE_CS_Subevent_Result_Continue"),
    ("7.7.65.46", 0x33, "LE_CS_Test_End_Complete"),
    ("7.7.65.47", 0x34, "LE_Monitored_Advertisers_Report"),
    ("7.7.65.48", 0x35, "LE_Frame_Space_Update_Complete"),
]

@Suite("HCI names from the specification")
struct SpecificationNamesTests {
    @Test("Every command of Core 6.0 §7.1–7.8 has its name")
    func commands() {
        for entry in specificationCommands {
            #expect(
                HCINames.command(HCIOpcode(rawValue: entry.opcode)) == entry.name,
                "§\(entry.section) \(hex(entry.opcode, digits: 4))")
        }
    }

    @Test("Every event of Core 6.0 §7.7 has its name")
    func events() {
        for entry in specificationEvents {
            #expect(HCINames.event(entry.code) == entry.name, "§\(entry.section) \(hex(entry.code, digits: 2))")
        }
    }

    @Test("Every LE subevent of Core 6.0 §7.7.65 has its name")
    func leSubevents() {
        for entry in specificationLESubevents {
            #expect(HCINames.leSubevent(entry.code) == entry.name, "§\(entry.section) \(hex(entry.code, digits: 2))")
        }
    }

    @Test("The Core 6.0 part of each table holds the list and nothing else")
    func noUncheckedEntries() {
        #expect(Set(HCINames.coreCommandNames.keys) == Set(specificationCommands.map(\.opcode)))
        #expect(Set(HCINames.coreEventNames.keys) == Set(specificationEvents.map(\.code)))
        #expect(Set(HCINames.leSubeventNames.keys) == Set(specificationLESubevents.map(\.code)))
        for (opcode, name) in HCINames.coreCommandNames
        where !specificationCommands.contains(where: { $0.opcode == opcode && $0.name == name }) {
            Issue.record("\(hex(opcode, digits: 4)) \(name) is in the Core 6.0 table but not in the list")
        }
        for (code, name) in HCINames.coreEventNames
        where !specificationEvents.contains(where: { $0.code == code && $0.name == name }) {
            Issue.record("event \(hex(code, digits: 2)) \(name) is in the Core 6.0 table but not in the list")
        }
    }

    @Test("The whole tables are the Core 6.0, withdrawn and vendor parts, which do not overlap")
    func partsMakeTheTables() {
        let commandParts: [[UInt16: String]] = [
            HCINames.coreCommandNames, HCINames.withdrawnCommandNames, HCINames.vendorCommandNames,
        ]
        let commandCount: Int = commandParts.map(\.count).reduce(0, +)
        #expect(commandCount == HCINames.commandNames.count, "command parts overlap")
        for part in commandParts {
            for (opcode, name) in part { #expect(HCINames.commandNames[opcode] == name) }
        }
        let eventParts: [[UInt8: String]] = [
            HCINames.coreEventNames, HCINames.withdrawnEventNames, HCINames.vendorEventNames,
        ]
        let eventCount: Int = eventParts.map(\.count).reduce(0, +)
        #expect(eventCount == HCINames.eventNames.count, "event parts overlap")
        for part in eventParts {
            for (code, name) in part { #expect(HCINames.eventNames[code] == name) }
        }
        // Vendor opcodes are OGF 0x3F and nothing else is; the vendor event is 0xFF.
        #expect(HCINames.vendorCommandNames.keys.allSatisfy { HCIOpcode(rawValue: $0).isVendorSpecific })
        #expect(!HCINames.coreCommandNames.keys.contains { HCIOpcode(rawValue: $0).isVendorSpecific })
        #expect(!HCINames.withdrawnCommandNames.keys.contains { HCIOpcode(rawValue: $0).isVendorSpecific })
        #expect(HCINames.vendorEventNames == [0xFF: "Vendor_Specific"])
    }

    @Test("The list is consistent with the section index: groups, codes, versions")
    func listIsConsistent() {
        // §7.1–7.6 and §7.8 are the command groups of OGF 1–6 and 8.
        let groupOfOGF: [UInt8: String] = [
            0x01: "7.1.", 0x02: "7.2.", 0x03: "7.3.", 0x04: "7.4.", 0x05: "7.5.", 0x06: "7.6.",
            0x08: "7.8.",
        ]
        for entry in specificationCommands {
            let ogf = HCIOpcode(rawValue: entry.opcode).ogf
            #expect(
                groupOfOGF[ogf].map { entry.section.hasPrefix($0) } == true,
                "§\(entry.section) \(entry.name) has OGF \(ogf)")
        }
        for entry in specificationEvents {
            #expect(
                entry.section.hasPrefix("7.7.") && (entry.section == "7.7.65" || !entry.section.hasPrefix("7.7.65")),
                "§\(entry.section)")
        }
        #expect(specificationLESubevents.allSatisfy { $0.section.hasPrefix("7.7.65.") })
        // No code twice; a section shared only by the versions of one name.
        #expect(Set(specificationCommands.map(\.opcode)).count == specificationCommands.count)
        #expect(Set(specificationEvents.map(\.code)).count == specificationEvents.count)
        #expect(Set(specificationLESubevents.map(\.code)).count == specificationLESubevents.count)
        let all =
            specificationCommands.map { ($0.section, $0.name) } + specificationEvents.map { ($0.section, $0.name) }
            + specificationLESubevents.map { ($0.section, $0.name) }
        for (section, entries) in Dictionary(grouping: all, by: { $0.0 }) where entries.count > 1 {
            let bases = Set(entries.map { unversioned($0.1) })
            #expect(bases.count == 1, "§\(section) holds \(entries.map(\.1))")
        }
        // The spelling: no HCI_ prefix, words joined by underscores, versions as _v2.
        for (section, name) in all {
            #expect(
                !name.hasPrefix("HCI_") && !name.contains(" ") && !name.contains("__") && !name.contains("[v"),
                "§\(section) \(name)")
        }
    }

    /// A name without its `_vN` suffix.
    private func unversioned(_ name: String) -> String {
        guard let range = name.range(of: "_v", options: .backwards),
            !name[range.upperBound...].isEmpty, name[range.upperBound...].allSatisfy(\.isNumber)
        else { return name }
        return String(name[..<range.lowerBound])
    }
}
