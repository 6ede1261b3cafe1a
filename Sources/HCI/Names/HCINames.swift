/// Names of HCI opcodes, events and LE subevents, spelled as in the Core specification
/// with underscores (`LE_Set_Scan_Parameters`) — the spelling trace summaries use.
public enum HCINames {
    /// The name of a command opcode: its specification name, `Vendor` for an unnamed
    /// vendor-specific opcode (OGF 0x3F), or `Unknown`.
    public static func command(_ opcode: HCIOpcode) -> String {
        if let name = commandNames[opcode.rawValue] { return name }
        return opcode.isVendorSpecific ? "Vendor" : "Unknown"
    }

    /// The name of an event code, or `Unknown`.
    public static func event(_ code: UInt8) -> String { eventNames[code] ?? "Unknown" }

    /// The name of an LE Meta subevent code, or `Unknown`.
    public static func leSubevent(_ code: UInt8) -> String { leSubeventNames[code] ?? "Unknown" }

    /// `0x200b (ogf 0x08 ocf 0x00b) LE_Set_Scan_Parameters`: the key of a command in a
    /// trace summary.
    public static func commandKey(_ opcode: HCIOpcode) -> String {
        "\(hex(opcode.rawValue, digits: 4)) (ogf \(hex(opcode.ogf, digits: 2)) ocf \(hex(opcode.ocf, digits: 3))) \(command(opcode))"
    }

    // Commands this table names. It is the table trace summaries are checked against
    // (../shared/traces/expected-counts.json), so a BR/EDR command that table reports as
    // "Unknown" (e.g. 0x0c1c) is deliberately absent here.
    static let commandNames: [UInt16: String] = [
        // Link control (OGF 0x01)
        0x0401: "Inquiry", 0x0402: "Inquiry_Cancel", 0x0405: "Create_Connection", 0x0406: "Disconnect",
        0x0408: "Create_Connection_Cancel", 0x0409: "Accept_Connection_Request",
        0x040A: "Reject_Connection_Request", 0x0419: "Remote_Name_Request",
        0x041B: "Read_Remote_Supported_Features", 0x041D: "Read_Remote_Version_Information",
        // Link policy (OGF 0x02)
        0x080F: "Write_Default_Link_Policy_Settings",
        // Controller and baseband (OGF 0x03)
        0x0C01: "Set_Event_Mask", 0x0C03: "Reset", 0x0C05: "Set_Event_Filter", 0x0C12: "Delete_Stored_Link_Key",
        0x0C13: "Write_Local_Name", 0x0C14: "Read_Local_Name", 0x0C18: "Write_Page_Timeout",
        0x0C1A: "Write_Scan_Enable", 0x0C1E: "Write_Inquiry_Scan_Activity", 0x0C24: "Write_Class_Of_Device",
        0x0C26: "Write_Voice_Setting", 0x0C31: "Set_Controller_To_Host_Flow_Control",
        0x0C33: "Host_Buffer_Size", 0x0C35: "Host_Number_Of_Completed_Packets",
        0x0C43: "Write_Inquiry_Scan_Type", 0x0C45: "Write_Inquiry_Mode", 0x0C47: "Write_Page_Scan_Type",
        0x0C52: "Write_Extended_Inquiry_Response", 0x0C56: "Write_Simple_Pairing_Mode",
        0x0C63: "Set_Event_Mask_Page_2", 0x0C6D: "Write_LE_Host_Support",
        0x0C7A: "Write_Secure_Connections_Host_Support",
        // Informational (OGF 0x04)
        0x1001: "Read_Local_Version_Information", 0x1002: "Read_Local_Supported_Commands",
        0x1003: "Read_Local_Supported_Features", 0x1004: "Read_Local_Extended_Features",
        0x1005: "Read_Buffer_Size", 0x1009: "Read_BD_ADDR", 0x100B: "Read_Local_Supported_Codecs",
        // Status (OGF 0x05)
        0x1405: "Read_RSSI",
        // LE controller (OGF 0x08)
        0x2001: "LE_Set_Event_Mask", 0x2002: "LE_Read_Buffer_Size", 0x2003: "LE_Read_Local_Supported_Features",
        0x2005: "LE_Set_Random_Address", 0x2006: "LE_Set_Advertising_Parameters",
        0x2007: "LE_Read_Advertising_Physical_Channel_Tx_Power", 0x2008: "LE_Set_Advertising_Data",
        0x2009: "LE_Set_Scan_Response_Data", 0x200A: "LE_Set_Advertising_Enable",
        0x200B: "LE_Set_Scan_Parameters", 0x200C: "LE_Set_Scan_Enable", 0x200D: "LE_Create_Connection",
        0x200E: "LE_Create_Connection_Cancel", 0x200F: "LE_Read_Filter_Accept_List_Size",
        0x2010: "LE_Clear_Filter_Accept_List", 0x2011: "LE_Add_Device_To_Filter_Accept_List",
        0x2012: "LE_Remove_Device_From_Filter_Accept_List", 0x2013: "LE_Connection_Update",
        0x2014: "LE_Set_Host_Channel_Classification", 0x2015: "LE_Read_Channel_Map",
        0x2016: "LE_Read_Remote_Features", 0x2017: "LE_Encrypt", 0x2018: "LE_Rand",
        0x2019: "LE_Enable_Encryption", 0x201A: "LE_Long_Term_Key_Request_Reply",
        0x201B: "LE_Long_Term_Key_Request_Negative_Reply", 0x201C: "LE_Read_Supported_States",
        0x2020: "LE_Remote_Connection_Parameter_Request_Reply",
        0x2021: "LE_Remote_Connection_Parameter_Request_Negative_Reply", 0x2022: "LE_Set_Data_Length",
        0x2023: "LE_Read_Suggested_Default_Data_Length", 0x2024: "LE_Write_Suggested_Default_Data_Length",
        0x2025: "LE_Read_Local_P-256_Public_Key", 0x2026: "LE_Generate_DHKey",
        0x2027: "LE_Add_Device_To_Resolving_List", 0x2028: "LE_Remove_Device_From_Resolving_List",
        0x2029: "LE_Clear_Resolving_List", 0x202A: "LE_Read_Resolving_List_Size",
        0x202B: "LE_Read_Peer_Resolvable_Address", 0x202C: "LE_Read_Local_Resolvable_Address",
        0x202D: "LE_Set_Address_Resolution_Enable", 0x202E: "LE_Set_Resolvable_Private_Address_Timeout",
        0x202F: "LE_Read_Maximum_Data_Length", 0x2030: "LE_Read_PHY", 0x2031: "LE_Set_Default_PHY",
        0x2032: "LE_Set_PHY", 0x2035: "LE_Set_Advertising_Set_Random_Address",
        0x2036: "LE_Set_Extended_Advertising_Parameters", 0x2037: "LE_Set_Extended_Advertising_Data",
        0x2038: "LE_Set_Extended_Scan_Response_Data", 0x2039: "LE_Set_Extended_Advertising_Enable",
        0x203A: "LE_Read_Maximum_Advertising_Data_Length",
        0x203B: "LE_Read_Number_of_Supported_Advertising_Sets", 0x203C: "LE_Remove_Advertising_Set",
        0x203D: "LE_Clear_Advertising_Sets", 0x2041: "LE_Set_Extended_Scan_Parameters",
        0x2042: "LE_Set_Extended_Scan_Enable", 0x2043: "LE_Extended_Create_Connection",
        0x204A: "LE_Read_Periodic_Advertiser_List_Size", 0x204B: "LE_Read_Transmit_Power",
        0x204E: "LE_Set_Privacy_Mode", 0x2060: "LE_Read_Buffer_Size_v2", 0x2074: "LE_Set_Host_Feature",
        // Vendor (OGF 0x3F): the Android vendor commands carry names; the rest are "Vendor".
        0xFD53: "Android_LE_Get_Vendor_Capabilities", 0xFD54: "Android_LE_Multi_Advertising",
        0xFD56: "Android_LE_Batch_Scan", 0xFD57: "Android_LE_Advertising_Packet_Content_Filter",
        0xFD59: "Android_LE_Energy_Info", 0xFD5A: "Android_LE_Extended_Scan_Params",
        0xFD5E: "Android_Bluetooth_Quality_Report", 0xFD5F: "Android_Dynamic_Audio_Buffer",
    ]

    static let eventNames: [UInt8: String] = [
        0x01: "Inquiry_Complete", 0x02: "Inquiry_Result", 0x03: "Connection_Complete",
        0x04: "Connection_Request", 0x05: "Disconnection_Complete", 0x06: "Authentication_Complete",
        0x07: "Remote_Name_Request_Complete", 0x08: "Encryption_Change",
        0x0B: "Read_Remote_Supported_Features_Complete", 0x0C: "Read_Remote_Version_Information_Complete",
        0x0E: "Command_Complete", 0x0F: "Command_Status", 0x10: "Hardware_Error",
        0x13: "Number_Of_Completed_Packets", 0x1A: "Data_Buffer_Overflow",
        0x30: "Encryption_Key_Refresh_Complete", 0x3E: "LE_Meta", 0x57: "Authenticated_Payload_Timeout_Expired",
        0x59: "Encryption_Change_v2", 0xFF: "Vendor_Specific",
    ]

    static let leSubeventNames: [UInt8: String] = [
        0x01: "LE_Connection_Complete", 0x02: "LE_Advertising_Report", 0x03: "LE_Connection_Update_Complete",
        0x04: "LE_Read_Remote_Features_Complete", 0x05: "LE_Long_Term_Key_Request",
        0x06: "LE_Remote_Connection_Parameter_Request", 0x07: "LE_Data_Length_Change",
        0x08: "LE_Read_Local_P-256_Public_Key_Complete", 0x09: "LE_Generate_DHKey_Complete",
        0x0A: "LE_Enhanced_Connection_Complete", 0x0B: "LE_Directed_Advertising_Report",
        0x0C: "LE_PHY_Update_Complete", 0x0D: "LE_Extended_Advertising_Report",
        0x0E: "LE_Periodic_Advertising_Sync_Established", 0x0F: "LE_Periodic_Advertising_Report",
        0x10: "LE_Periodic_Advertising_Sync_Lost", 0x11: "LE_Scan_Timeout",
        0x12: "LE_Advertising_Set_Terminated", 0x13: "LE_Scan_Request_Received",
        0x14: "LE_Channel_Selection_Algorithm", 0x29: "LE_Enhanced_Connection_Complete_v2",
    ]
}
