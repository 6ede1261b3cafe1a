import BluetoothCore

/// Names of HCI opcodes, events and LE subevents, spelled as in the Core specification
/// with underscores (`LE_Set_Scan_Parameters`) — the spelling trace summaries use.
///
/// The names are the specification's (Core 6.0, Vol 4, Part E, §7.1–7.8) without the
/// `HCI_` prefix, in its capitalisation; a command or event with several versions that have
/// codes of their own carries the version as `_v2`, `_v3`… (version 1 has no suffix). The
/// tables come in parts: what Core 6.0 defines, what earlier versions defined and 6.0 no
/// longer does (so old traces still read well), and vendor-specific codes.
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

    /// Every named opcode: Core 6.0's, the withdrawn ones, the vendor ones.
    static let commandNames: [UInt16: String] = merged(coreCommandNames, withdrawnCommandNames, vendorCommandNames)

    /// Every named event code: Core 6.0's, the withdrawn ones, the vendor one.
    static let eventNames: [UInt8: String] = merged(coreEventNames, withdrawnEventNames, vendorEventNames)

    /// The commands of Core 6.0, Vol 4, Part E, §7.1–7.6 and §7.8, by opcode.
    static let coreCommandNames: [UInt16: String] = [
        // Link Control (OGF 0x01), §7.1
        0x0401: "Inquiry", 0x0402: "Inquiry_Cancel", 0x0403: "Periodic_Inquiry_Mode",
        0x0404: "Exit_Periodic_Inquiry_Mode", 0x0405: "Create_Connection", 0x0406: "Disconnect",
        0x0408: "Create_Connection_Cancel", 0x0409: "Accept_Connection_Request", 0x040A: "Reject_Connection_Request",
        0x040B: "Link_Key_Request_Reply", 0x040C: "Link_Key_Request_Negative_Reply",
        0x040D: "PIN_Code_Request_Reply", 0x040E: "PIN_Code_Request_Negative_Reply",
        0x040F: "Change_Connection_Packet_Type", 0x0411: "Authentication_Requested",
        0x0413: "Set_Connection_Encryption", 0x0415: "Change_Connection_Link_Key", 0x0417: "Link_Key_Selection",
        0x0419: "Remote_Name_Request", 0x041A: "Remote_Name_Request_Cancel",
        0x041B: "Read_Remote_Supported_Features", 0x041C: "Read_Remote_Extended_Features",
        0x041D: "Read_Remote_Version_Information", 0x041F: "Read_Clock_Offset", 0x0420: "Read_LMP_Handle",
        0x0428: "Setup_Synchronous_Connection", 0x0429: "Accept_Synchronous_Connection_Request",
        0x042A: "Reject_Synchronous_Connection_Request", 0x042B: "IO_Capability_Request_Reply",
        0x042C: "User_Confirmation_Request_Reply", 0x042D: "User_Confirmation_Request_Negative_Reply",
        0x042E: "User_Passkey_Request_Reply", 0x042F: "User_Passkey_Request_Negative_Reply",
        0x0430: "Remote_OOB_Data_Request_Reply", 0x0433: "Remote_OOB_Data_Request_Negative_Reply",
        0x0434: "IO_Capability_Request_Negative_Reply", 0x043D: "Enhanced_Setup_Synchronous_Connection",
        0x043E: "Enhanced_Accept_Synchronous_Connection_Request", 0x043F: "Truncated_Page",
        0x0440: "Truncated_Page_Cancel", 0x0441: "Set_Connectionless_Peripheral_Broadcast",
        0x0442: "Set_Connectionless_Peripheral_Broadcast_Receive", 0x0443: "Start_Synchronization_Train",
        0x0444: "Receive_Synchronization_Train", 0x0445: "Remote_OOB_Extended_Data_Request_Reply",
        // Link Policy (OGF 0x02), §7.2
        0x0801: "Hold_Mode", 0x0803: "Sniff_Mode", 0x0804: "Exit_Sniff_Mode", 0x0807: "QoS_Setup",
        0x0809: "Role_Discovery", 0x080B: "Switch_Role", 0x080C: "Read_Link_Policy_Settings",
        0x080D: "Write_Link_Policy_Settings", 0x080E: "Read_Default_Link_Policy_Settings",
        0x080F: "Write_Default_Link_Policy_Settings", 0x0810: "Flow_Specification", 0x0811: "Sniff_Subrating",
        // Controller & Baseband (OGF 0x03), §7.3
        0x0C01: "Set_Event_Mask", 0x0C03: "Reset", 0x0C05: "Set_Event_Filter", 0x0C08: "Flush",
        0x0C09: "Read_PIN_Type", 0x0C0A: "Write_PIN_Type", 0x0C0D: "Read_Stored_Link_Key",
        0x0C11: "Write_Stored_Link_Key", 0x0C12: "Delete_Stored_Link_Key", 0x0C13: "Write_Local_Name",
        0x0C14: "Read_Local_Name", 0x0C15: "Read_Connection_Accept_Timeout",
        0x0C16: "Write_Connection_Accept_Timeout", 0x0C17: "Read_Page_Timeout", 0x0C18: "Write_Page_Timeout",
        0x0C19: "Read_Scan_Enable", 0x0C1A: "Write_Scan_Enable", 0x0C1B: "Read_Page_Scan_Activity",
        0x0C1C: "Write_Page_Scan_Activity", 0x0C1D: "Read_Inquiry_Scan_Activity",
        0x0C1E: "Write_Inquiry_Scan_Activity", 0x0C1F: "Read_Authentication_Enable",
        0x0C20: "Write_Authentication_Enable", 0x0C23: "Read_Class_Of_Device", 0x0C24: "Write_Class_Of_Device",
        0x0C25: "Read_Voice_Setting", 0x0C26: "Write_Voice_Setting", 0x0C27: "Read_Automatic_Flush_Timeout",
        0x0C28: "Write_Automatic_Flush_Timeout", 0x0C29: "Read_Num_Broadcast_Retransmissions",
        0x0C2A: "Write_Num_Broadcast_Retransmissions", 0x0C2B: "Read_Hold_Mode_Activity",
        0x0C2C: "Write_Hold_Mode_Activity", 0x0C2D: "Read_Transmit_Power_Level",
        0x0C2E: "Read_Synchronous_Flow_Control_Enable", 0x0C2F: "Write_Synchronous_Flow_Control_Enable",
        0x0C31: "Set_Controller_To_Host_Flow_Control", 0x0C33: "Host_Buffer_Size",
        0x0C35: "Host_Number_Of_Completed_Packets", 0x0C36: "Read_Link_Supervision_Timeout",
        0x0C37: "Write_Link_Supervision_Timeout", 0x0C38: "Read_Number_Of_Supported_IAC",
        0x0C39: "Read_Current_IAC_LAP", 0x0C3A: "Write_Current_IAC_LAP",
        0x0C3F: "Set_AFH_Host_Channel_Classification", 0x0C42: "Read_Inquiry_Scan_Type",
        0x0C43: "Write_Inquiry_Scan_Type", 0x0C44: "Read_Inquiry_Mode", 0x0C45: "Write_Inquiry_Mode",
        0x0C46: "Read_Page_Scan_Type", 0x0C47: "Write_Page_Scan_Type", 0x0C48: "Read_AFH_Channel_Assessment_Mode",
        0x0C49: "Write_AFH_Channel_Assessment_Mode", 0x0C51: "Read_Extended_Inquiry_Response",
        0x0C52: "Write_Extended_Inquiry_Response", 0x0C53: "Refresh_Encryption_Key",
        0x0C55: "Read_Simple_Pairing_Mode", 0x0C56: "Write_Simple_Pairing_Mode", 0x0C57: "Read_Local_OOB_Data",
        0x0C58: "Read_Inquiry_Response_Transmit_Power_Level", 0x0C59: "Write_Inquiry_Transmit_Power_Level",
        0x0C5A: "Read_Default_Erroneous_Data_Reporting", 0x0C5B: "Write_Default_Erroneous_Data_Reporting",
        0x0C5F: "Enhanced_Flush", 0x0C60: "Send_Keypress_Notification", 0x0C63: "Set_Event_Mask_Page_2",
        0x0C66: "Read_Flow_Control_Mode", 0x0C67: "Write_Flow_Control_Mode",
        0x0C68: "Read_Enhanced_Transmit_Power_Level", 0x0C6C: "Read_LE_Host_Support",
        0x0C6D: "Write_LE_Host_Support", 0x0C6E: "Set_MWS_Channel_Parameters",
        0x0C6F: "Set_External_Frame_Configuration", 0x0C70: "Set_MWS_Signaling", 0x0C71: "Set_MWS_Transport_Layer",
        0x0C72: "Set_MWS_Scan_Frequency_Table", 0x0C73: "Set_MWS_PATTERN_Configuration",
        0x0C74: "Set_Reserved_LT_ADDR", 0x0C75: "Delete_Reserved_LT_ADDR",
        0x0C76: "Set_Connectionless_Peripheral_Broadcast_Data", 0x0C77: "Read_Synchronization_Train_Parameters",
        0x0C78: "Write_Synchronization_Train_Parameters", 0x0C79: "Read_Secure_Connections_Host_Support",
        0x0C7A: "Write_Secure_Connections_Host_Support", 0x0C7B: "Read_Authenticated_Payload_Timeout",
        0x0C7C: "Write_Authenticated_Payload_Timeout", 0x0C7D: "Read_Local_OOB_Extended_Data",
        0x0C7E: "Read_Extended_Page_Timeout", 0x0C7F: "Write_Extended_Page_Timeout",
        0x0C80: "Read_Extended_Inquiry_Length", 0x0C81: "Write_Extended_Inquiry_Length",
        0x0C82: "Set_Ecosystem_Base_Interval", 0x0C83: "Configure_Data_Path", 0x0C84: "Set_Min_Encryption_Key_Size",
        // Informational Parameters (OGF 0x04), §7.4
        0x1001: "Read_Local_Version_Information", 0x1002: "Read_Local_Supported_Commands",
        0x1003: "Read_Local_Supported_Features", 0x1004: "Read_Local_Extended_Features", 0x1005: "Read_Buffer_Size",
        0x1009: "Read_BD_ADDR", 0x100A: "Read_Data_Block_Size", 0x100B: "Read_Local_Supported_Codecs",
        0x100C: "Read_Local_Simple_Pairing_Options", 0x100D: "Read_Local_Supported_Codecs_v2",
        0x100E: "Read_Local_Supported_Codec_Capabilities", 0x100F: "Read_Local_Supported_Controller_Delay",
        // Status Parameters (OGF 0x05), §7.5
        0x1401: "Read_Failed_Contact_Counter", 0x1402: "Reset_Failed_Contact_Counter", 0x1403: "Read_Link_Quality",
        0x1405: "Read_RSSI", 0x1406: "Read_AFH_Channel_Map", 0x1407: "Read_Clock",
        0x1408: "Read_Encryption_Key_Size", 0x140C: "Get_MWS_Transport_Layer_Configuration",
        0x140D: "Set_Triggered_Clock_Capture",
        // Testing (OGF 0x06), §7.6
        0x1801: "Read_Loopback_Mode", 0x1802: "Write_Loopback_Mode", 0x1803: "Enable_Implementation_Under_Test_Mode",
        0x1804: "Write_Simple_Pairing_Debug_Mode", 0x180A: "Write_Secure_Connections_Test_Mode",
        // LE Controller (OGF 0x08), §7.8
        0x2001: "LE_Set_Event_Mask", 0x2002: "LE_Read_Buffer_Size", 0x2003: "LE_Read_Local_Supported_Features",
        0x2005: "LE_Set_Random_Address", 0x2006: "LE_Set_Advertising_Parameters",
        0x2007: "LE_Read_Advertising_Physical_Channel_Tx_Power", 0x2008: "LE_Set_Advertising_Data",
        0x2009: "LE_Set_Scan_Response_Data", 0x200A: "LE_Set_Advertising_Enable", 0x200B: "LE_Set_Scan_Parameters",
        0x200C: "LE_Set_Scan_Enable", 0x200D: "LE_Create_Connection", 0x200E: "LE_Create_Connection_Cancel",
        0x200F: "LE_Read_Filter_Accept_List_Size", 0x2010: "LE_Clear_Filter_Accept_List",
        0x2011: "LE_Add_Device_To_Filter_Accept_List", 0x2012: "LE_Remove_Device_From_Filter_Accept_List",
        0x2013: "LE_Connection_Update", 0x2014: "LE_Set_Host_Channel_Classification", 0x2015: "LE_Read_Channel_Map",
        0x2016: "LE_Read_Remote_Features", 0x2017: "LE_Encrypt", 0x2018: "LE_Rand", 0x2019: "LE_Enable_Encryption",
        0x201A: "LE_Long_Term_Key_Request_Reply", 0x201B: "LE_Long_Term_Key_Request_Negative_Reply",
        0x201C: "LE_Read_Supported_States", 0x201D: "LE_Receiver_Test", 0x201E: "LE_Transmitter_Test",
        0x201F: "LE_Test_End", 0x2020: "LE_Remote_Connection_Parameter_Request_Reply",
        0x2021: "LE_Remote_Connection_Parameter_Request_Negative_Reply", 0x2022: "LE_Set_Data_Length",
        0x2023: "LE_Read_Suggested_Default_Data_Length", 0x2024: "LE_Write_Suggested_Default_Data_Length",
        0x2025: "LE_Read_Local_P-256_Public_Key", 0x2026: "LE_Generate_DHKey",
        0x2027: "LE_Add_Device_To_Resolving_List", 0x2028: "LE_Remove_Device_From_Resolving_List",
        0x2029: "LE_Clear_Resolving_List", 0x202A: "LE_Read_Resolving_List_Size",
        0x202B: "LE_Read_Peer_Resolvable_Address", 0x202C: "LE_Read_Local_Resolvable_Address",
        0x202D: "LE_Set_Address_Resolution_Enable", 0x202E: "LE_Set_Resolvable_Private_Address_Timeout",
        0x202F: "LE_Read_Maximum_Data_Length", 0x2030: "LE_Read_PHY", 0x2031: "LE_Set_Default_PHY",
        0x2032: "LE_Set_PHY", 0x2033: "LE_Receiver_Test_v2", 0x2034: "LE_Transmitter_Test_v2",
        0x2035: "LE_Set_Advertising_Set_Random_Address", 0x2036: "LE_Set_Extended_Advertising_Parameters",
        0x2037: "LE_Set_Extended_Advertising_Data", 0x2038: "LE_Set_Extended_Scan_Response_Data",
        0x2039: "LE_Set_Extended_Advertising_Enable", 0x203A: "LE_Read_Maximum_Advertising_Data_Length",
        0x203B: "LE_Read_Number_of_Supported_Advertising_Sets", 0x203C: "LE_Remove_Advertising_Set",
        0x203D: "LE_Clear_Advertising_Sets", 0x203E: "LE_Set_Periodic_Advertising_Parameters",
        0x203F: "LE_Set_Periodic_Advertising_Data", 0x2040: "LE_Set_Periodic_Advertising_Enable",
        0x2041: "LE_Set_Extended_Scan_Parameters", 0x2042: "LE_Set_Extended_Scan_Enable",
        0x2043: "LE_Extended_Create_Connection", 0x2044: "LE_Periodic_Advertising_Create_Sync",
        0x2045: "LE_Periodic_Advertising_Create_Sync_Cancel", 0x2046: "LE_Periodic_Advertising_Terminate_Sync",
        0x2047: "LE_Add_Device_To_Periodic_Advertiser_List",
        0x2048: "LE_Remove_Device_From_Periodic_Advertiser_List", 0x2049: "LE_Clear_Periodic_Advertiser_List",
        0x204A: "LE_Read_Periodic_Advertiser_List_Size", 0x204B: "LE_Read_Transmit_Power",
        0x204C: "LE_Read_RF_Path_Compensation", 0x204D: "LE_Write_RF_Path_Compensation",
        0x204E: "LE_Set_Privacy_Mode", 0x204F: "LE_Receiver_Test_v3", 0x2050: "LE_Transmitter_Test_v3",
        0x2051: "LE_Set_Connectionless_CTE_Transmit_Parameters", 0x2052: "LE_Set_Connectionless_CTE_Transmit_Enable",
        0x2053: "LE_Set_Connectionless_IQ_Sampling_Enable", 0x2054: "LE_Set_Connection_CTE_Receive_Parameters",
        0x2055: "LE_Set_Connection_CTE_Transmit_Parameters", 0x2056: "LE_Connection_CTE_Request_Enable",
        0x2057: "LE_Connection_CTE_Response_Enable", 0x2058: "LE_Read_Antenna_Information",
        0x2059: "LE_Set_Periodic_Advertising_Receive_Enable", 0x205A: "LE_Periodic_Advertising_Sync_Transfer",
        0x205B: "LE_Periodic_Advertising_Set_Info_Transfer",
        0x205C: "LE_Set_Periodic_Advertising_Sync_Transfer_Parameters",
        0x205D: "LE_Set_Default_Periodic_Advertising_Sync_Transfer_Parameters", 0x205E: "LE_Generate_DHKey_v2",
        0x205F: "LE_Modify_Sleep_Clock_Accuracy", 0x2060: "LE_Read_Buffer_Size_v2", 0x2061: "LE_Read_ISO_TX_Sync",
        0x2062: "LE_Set_CIG_Parameters", 0x2063: "LE_Set_CIG_Parameters_Test", 0x2064: "LE_Create_CIS",
        0x2065: "LE_Remove_CIG", 0x2066: "LE_Accept_CIS_Request", 0x2067: "LE_Reject_CIS_Request",
        0x2068: "LE_Create_BIG", 0x2069: "LE_Create_BIG_Test", 0x206A: "LE_Terminate_BIG",
        0x206B: "LE_BIG_Create_Sync", 0x206C: "LE_BIG_Terminate_Sync", 0x206D: "LE_Request_Peer_SCA",
        0x206E: "LE_Setup_ISO_Data_Path", 0x206F: "LE_Remove_ISO_Data_Path", 0x2070: "LE_ISO_Transmit_Test",
        0x2071: "LE_ISO_Receive_Test", 0x2072: "LE_ISO_Read_Test_Counters", 0x2073: "LE_ISO_Test_End",
        0x2074: "LE_Set_Host_Feature", 0x2075: "LE_Read_ISO_Link_Quality",
        0x2076: "LE_Enhanced_Read_Transmit_Power_Level", 0x2077: "LE_Read_Remote_Transmit_Power_Level",
        0x2078: "LE_Set_Path_Loss_Reporting_Parameters", 0x2079: "LE_Set_Path_Loss_Reporting_Enable",
        0x207A: "LE_Set_Transmit_Power_Reporting_Enable", 0x207B: "LE_Transmitter_Test_v4",
        0x207C: "LE_Set_Data_Related_Address_Changes", 0x207D: "LE_Set_Default_Subrate",
        0x207E: "LE_Subrate_Request", 0x207F: "LE_Set_Extended_Advertising_Parameters_v2",
        0x2080: "LE_Set_Decision_Data", 0x2081: "LE_Set_Decision_Instructions",
        0x2082: "LE_Set_Periodic_Advertising_Subevent_Data", 0x2083: "LE_Set_Periodic_Advertising_Response_Data",
        0x2084: "LE_Set_Periodic_Sync_Subevent", 0x2085: "LE_Extended_Create_Connection_v2",
        0x2086: "LE_Set_Periodic_Advertising_Parameters_v2", 0x2087: "LE_Read_All_Local_Supported_Features",
        0x2088: "LE_Read_All_Remote_Features", 0x2089: "LE_CS_Read_Local_Supported_Capabilities",
        0x208A: "LE_CS_Read_Remote_Supported_Capabilities",
        0x208B: "LE_CS_Write_Cached_Remote_Supported_Capabilities", 0x208C: "LE_CS_Security_Enable",
        0x208D: "LE_CS_Set_Default_Settings", 0x208E: "LE_CS_Read_Remote_FAE_Table",
        0x208F: "LE_CS_Write_Cached_Remote_FAE_Table", 0x2090: "LE_CS_Create_Config", 0x2091: "LE_CS_Remove_Config",
        0x2092: "LE_CS_Set_Channel_Classification", 0x2093: "LE_CS_Set_Procedure_Parameters",
        0x2094: "LE_CS_Procedure_Enable", 0x2095: "LE_CS_Test", 0x2096: "LE_CS_Test_End",
        0x2097: "LE_Set_Host_Feature_v2", 0x2098: "LE_Add_Device_To_Monitored_Advertisers_List",
        0x2099: "LE_Remove_Device_From_Monitored_Advertisers_List", 0x209A: "LE_Clear_Monitored_Advertisers_List",
        0x209B: "LE_Read_Monitored_Advertisers_List_Size", 0x209C: "LE_Enable_Monitoring_Advertisers",
        0x209D: "LE_Frame_Space_Update",
    ]

    /// Commands earlier versions of the specification defined and Core 6.0 no longer does
    /// (their sections are gone or "no longer used"): named so that old traces still read
    /// well. Not part of the 6.0 list.
    static let withdrawnCommandNames: [UInt16: String] = [
        // Removed long ago: their bits in the Supported Commands table read "previously used".
        0x0407: "Add_SCO_Connection", 0x0C0B: "Create_New_Unit_Key", 0x0C21: "Read_Encryption_Mode",
        0x0C22: "Write_Encryption_Mode", 0x0C3B: "Read_Page_Scan_Period_Mode", 0x0C3C: "Write_Page_Scan_Period_Mode",
        0x0C3D: "Read_Page_Scan_Mode", 0x0C3E: "Write_Page_Scan_Mode", 0x1007: "Read_Country_Code",
        // Park state (§7.2.4 and §7.2.5 are no longer used).
        0x0805: "Park_State", 0x0806: "Exit_Park_State",
        // AMP (Alternate MAC/PHY), removed in Core 5.3.
        0x0435: "Create_Physical_Link", 0x0436: "Accept_Physical_Link", 0x0437: "Disconnect_Physical_Link",
        0x0438: "Create_Logical_Link", 0x0439: "Accept_Logical_Link", 0x043A: "Disconnect_Logical_Link",
        0x043B: "Logical_Link_Cancel", 0x043C: "Flow_Spec_Modify", 0x0C61: "Read_Logical_Link_Accept_Timeout",
        0x0C62: "Write_Logical_Link_Accept_Timeout", 0x0C64: "Read_Location_Data", 0x0C65: "Write_Location_Data",
        0x0C69: "Read_Best_Effort_Flush_Timeout", 0x0C6A: "Write_Best_Effort_Flush_Timeout",
        0x0C6B: "Short_Range_Mode", 0x1409: "Read_Local_AMP_Info", 0x140A: "Read_Local_AMP_ASSOC",
        0x140B: "Write_Remote_AMP_ASSOC", 0x1807: "Enable_AMP_Receiver_Reports", 0x1808: "AMP_Test_End",
        0x1809: "AMP_Test",
    ]

    /// Vendor-specific commands (OGF 0x3F) with a name: Android's, from AOSP's "HCI
    /// requirements". Any other OGF 0x3F opcode is `Vendor`.
    static let vendorCommandNames: [UInt16: String] = [
        0xFD53: "Android_LE_Get_Vendor_Capabilities", 0xFD54: "Android_LE_Multi_Advertising",
        0xFD56: "Android_LE_Batch_Scan", 0xFD57: "Android_LE_Advertising_Packet_Content_Filter",
        0xFD59: "Android_LE_Energy_Info", 0xFD5A: "Android_LE_Extended_Scan_Params",
        0xFD5E: "Android_Bluetooth_Quality_Report", 0xFD5F: "Android_Dynamic_Audio_Buffer",
    ]

    /// The events of Core 6.0, Vol 4, Part E, §7.7, by code.
    static let coreEventNames: [UInt8: String] = [
        0x01: "Inquiry_Complete", 0x02: "Inquiry_Result", 0x03: "Connection_Complete", 0x04: "Connection_Request",
        0x05: "Disconnection_Complete", 0x06: "Authentication_Complete", 0x07: "Remote_Name_Request_Complete",
        0x08: "Encryption_Change", 0x09: "Change_Connection_Link_Key_Complete", 0x0A: "Link_Key_Type_Changed",
        0x0B: "Read_Remote_Supported_Features_Complete", 0x0C: "Read_Remote_Version_Information_Complete",
        0x0D: "QoS_Setup_Complete", 0x0E: "Command_Complete", 0x0F: "Command_Status", 0x10: "Hardware_Error",
        0x11: "Flush_Occurred", 0x12: "Role_Change", 0x13: "Number_Of_Completed_Packets", 0x14: "Mode_Change",
        0x15: "Return_Link_Keys", 0x16: "PIN_Code_Request", 0x17: "Link_Key_Request", 0x18: "Link_Key_Notification",
        0x19: "Loopback_Command", 0x1A: "Data_Buffer_Overflow", 0x1B: "Max_Slots_Change",
        0x1C: "Read_Clock_Offset_Complete", 0x1D: "Connection_Packet_Type_Changed", 0x1E: "QoS_Violation",
        0x20: "Page_Scan_Repetition_Mode_Change", 0x21: "Flow_Specification_Complete",
        0x22: "Inquiry_Result_with_RSSI", 0x23: "Read_Remote_Extended_Features_Complete",
        0x2C: "Synchronous_Connection_Complete", 0x2D: "Synchronous_Connection_Changed", 0x2E: "Sniff_Subrating",
        0x2F: "Extended_Inquiry_Result", 0x30: "Encryption_Key_Refresh_Complete", 0x31: "IO_Capability_Request",
        0x32: "IO_Capability_Response", 0x33: "User_Confirmation_Request", 0x34: "User_Passkey_Request",
        0x35: "Remote_OOB_Data_Request", 0x36: "Simple_Pairing_Complete", 0x38: "Link_Supervision_Timeout_Changed",
        0x39: "Enhanced_Flush_Complete", 0x3B: "User_Passkey_Notification", 0x3C: "Keypress_Notification",
        0x3D: "Remote_Host_Supported_Features_Notification", 0x3E: "LE_Meta",
        0x48: "Number_Of_Completed_Data_Blocks", 0x4E: "Triggered_Clock_Capture",
        0x4F: "Synchronization_Train_Complete", 0x50: "Synchronization_Train_Received",
        0x51: "Connectionless_Peripheral_Broadcast_Receive", 0x52: "Connectionless_Peripheral_Broadcast_Timeout",
        0x53: "Truncated_Page_Complete", 0x54: "Peripheral_Page_Response_Timeout",
        0x55: "Connectionless_Peripheral_Broadcast_Channel_Map_Change", 0x56: "Inquiry_Response_Notification",
        0x57: "Authenticated_Payload_Timeout_Expired", 0x58: "SAM_Status_Change", 0x59: "Encryption_Change_v2",
    ]

    /// Events earlier versions defined and Core 6.0 no longer does. Not part of the 6.0 list.
    static let withdrawnEventNames: [UInt8: String] = [
        // Removed long ago (§7.7.31 is now Page Scan Repetition Mode Change).
        0x1F: "Page_Scan_Mode_Change",
        // AMP (Alternate MAC/PHY), removed in Core 5.3.
        0x40: "Physical_Link_Complete", 0x41: "Channel_Selected", 0x42: "Disconnection_Physical_Link_Complete",
        0x43: "Physical_Link_Loss_Early_Warning", 0x44: "Physical_Link_Recovery", 0x45: "Logical_Link_Complete",
        0x46: "Disconnection_Logical_Link_Complete", 0x47: "Flow_Spec_Modify_Complete", 0x49: "AMP_Start_Test",
        0x4A: "AMP_Test_End", 0x4B: "AMP_Receiver_Report", 0x4C: "Short_Range_Mode_Change_Complete",
        0x4D: "AMP_Status_Change",
    ]

    /// The event code the specification leaves to vendor-specific events.
    static let vendorEventNames: [UInt8: String] = [0xFF: "Vendor_Specific"]

    /// The LE Meta event's subevents of Core 6.0, Vol 4, Part E, §7.7.65, by code.
    static let leSubeventNames: [UInt8: String] = [
        0x01: "LE_Connection_Complete", 0x02: "LE_Advertising_Report", 0x03: "LE_Connection_Update_Complete",
        0x04: "LE_Read_Remote_Features_Complete", 0x05: "LE_Long_Term_Key_Request",
        0x06: "LE_Remote_Connection_Parameter_Request", 0x07: "LE_Data_Length_Change",
        0x08: "LE_Read_Local_P-256_Public_Key_Complete", 0x09: "LE_Generate_DHKey_Complete",
        0x0A: "LE_Enhanced_Connection_Complete", 0x0B: "LE_Directed_Advertising_Report",
        0x0C: "LE_PHY_Update_Complete", 0x0D: "LE_Extended_Advertising_Report",
        0x0E: "LE_Periodic_Advertising_Sync_Established", 0x0F: "LE_Periodic_Advertising_Report",
        0x10: "LE_Periodic_Advertising_Sync_Lost", 0x11: "LE_Scan_Timeout", 0x12: "LE_Advertising_Set_Terminated",
        0x13: "LE_Scan_Request_Received", 0x14: "LE_Channel_Selection_Algorithm",
        0x15: "LE_Connectionless_IQ_Report", 0x16: "LE_Connection_IQ_Report", 0x17: "LE_CTE_Request_Failed",
        0x18: "LE_Periodic_Advertising_Sync_Transfer_Received", 0x19: "LE_CIS_Established", 0x1A: "LE_CIS_Request",
        0x1B: "LE_Create_BIG_Complete", 0x1C: "LE_Terminate_BIG_Complete", 0x1D: "LE_BIG_Sync_Established",
        0x1E: "LE_BIG_Sync_Lost", 0x1F: "LE_Request_Peer_SCA_Complete", 0x20: "LE_Path_Loss_Threshold",
        0x21: "LE_Transmit_Power_Reporting", 0x22: "LE_BIGInfo_Advertising_Report", 0x23: "LE_Subrate_Change",
        0x24: "LE_Periodic_Advertising_Sync_Established_v2", 0x25: "LE_Periodic_Advertising_Report_v2",
        0x26: "LE_Periodic_Advertising_Sync_Transfer_Received_v2",
        0x27: "LE_Periodic_Advertising_Subevent_Data_Request", 0x28: "LE_Periodic_Advertising_Response_Report",
        0x29: "LE_Enhanced_Connection_Complete_v2", 0x2A: "LE_CIS_Established_v2",
        0x2B: "LE_Read_All_Remote_Features_Complete", 0x2C: "LE_CS_Read_Remote_Supported_Capabilities_Complete",
        0x2D: "LE_CS_Read_Remote_FAE_Table_Complete", 0x2E: "LE_CS_Security_Enable_Complete",
        0x2F: "LE_CS_Config_Complete", 0x30: "LE_CS_Procedure_Enable_Complete", 0x31: "LE_CS_Subevent_Result",
        0x32: "LE_CS_Subevent_Result_Continue", 0x33: "LE_CS_Test_End_Complete",
        0x34: "LE_Monitored_Advertisers_Report", 0x35: "LE_Frame_Space_Update_Complete",
    ]

    /// One table of several whose keys do not overlap (the tests check that they do not).
    private static func merged<Code: Hashable>(_ tables: [Code: String]...) -> [Code: String] {
        tables.reduce(into: [:]) { all, table in all.merge(table) { first, _ in first } }
    }
}
