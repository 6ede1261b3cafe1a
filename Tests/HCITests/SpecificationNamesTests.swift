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

/// §7.1–7.6 and §7.8: every command of Core 6.0.
private let specificationCommands: [(section: String, opcode: UInt16, name: String)] = [
    ("7.1.1", 0x0401, "Inquiry"),
    ("7.1.2", 0x0402, "Inquiry_Cancel"),
    ("7.1.3", 0x0403, "Periodic_Inquiry_Mode"),
    ("7.1.4", 0x0404, "Exit_Periodic_Inquiry_Mode"),
    ("7.1.5", 0x0405, "Create_Connection"),
    ("7.1.6", 0x0406, "Disconnect"),
    ("7.1.7", 0x0408, "Create_Connection_Cancel"),
    ("7.1.8", 0x0409, "Accept_Connection_Request"),
    ("7.1.9", 0x040A, "Reject_Connection_Request"),
    ("7.1.10", 0x040B, "Link_Key_Request_Reply"),
    ("7.1.11", 0x040C, "Link_Key_Request_Negative_Reply"),
    ("7.1.12", 0x040D, "PIN_Code_Request_Reply"),
    ("7.1.13", 0x040E, "PIN_Code_Request_Negative_Reply"),
    ("7.1.14", 0x040F, "Change_Connection_Packet_Type"),
    ("7.1.15", 0x0411, "Authentication_Requested"),
    ("7.1.16", 0x0413, "Set_Connection_Encryption"),
    ("7.1.17", 0x0415, "Change_Connection_Link_Key"),
    ("7.1.18", 0x0417, "Link_Key_Selection"),
    ("7.1.19", 0x0419, "Remote_Name_Request"),
    ("7.1.20", 0x041A, "Remote_Name_Request_Cancel"),
    ("7.1.21", 0x041B, "Read_Remote_Supported_Features"),
    ("7.1.22", 0x041C, "Read_Remote_Extended_Features"),
    ("7.1.23", 0x041D, "Read_Remote_Version_Information"),
    ("7.1.24", 0x041F, "Read_Clock_Offset"),
    ("7.1.25", 0x0420, "Read_LMP_Handle"),
    ("7.1.26", 0x0428, "Setup_Synchronous_Connection"),
    ("7.1.27", 0x0429, "Accept_Synchronous_Connection_Request"),
    ("7.1.28", 0x042A, "Reject_Synchronous_Connection_Request"),
    ("7.1.29", 0x042B, "IO_Capability_Request_Reply"),
    ("7.1.30", 0x042C, "User_Confirmation_Request_Reply"),
    ("7.1.31", 0x042D, "User_Confirmation_Request_Negative_Reply"),
    ("7.1.32", 0x042E, "User_Passkey_Request_Reply"),
    ("7.1.33", 0x042F, "User_Passkey_Request_Negative_Reply"),
    ("7.1.34", 0x0430, "Remote_OOB_Data_Request_Reply"),
    ("7.1.35", 0x0433, "Remote_OOB_Data_Request_Negative_Reply"),
    ("7.1.36", 0x0434, "IO_Capability_Request_Negative_Reply"),
    ("7.1.45", 0x043D, "Enhanced_Setup_Synchronous_Connection"),
    ("7.1.46", 0x043E, "Enhanced_Accept_Synchronous_Connection_Request"),
    ("7.1.47", 0x043F, "Truncated_Page"),
    ("7.1.48", 0x0440, "Truncated_Page_Cancel"),
    ("7.1.49", 0x0441, "Set_Connectionless_Peripheral_Broadcast"),
    ("7.1.50", 0x0442, "Set_Connectionless_Peripheral_Broadcast_Receive"),
    ("7.1.51", 0x0443, "Start_Synchronization_Train"),
    ("7.1.52", 0x0444, "Receive_Synchronization_Train"),
    ("7.1.53", 0x0445, "Remote_OOB_Extended_Data_Request_Reply"),
    ("7.2.1", 0x0801, "Hold_Mode"),
    ("7.2.2", 0x0803, "Sniff_Mode"),
    ("7.2.3", 0x0804, "Exit_Sniff_Mode"),
    ("7.2.6", 0x0807, "QoS_Setup"),
    ("7.2.7", 0x0809, "Role_Discovery"),
    ("7.2.8", 0x080B, "Switch_Role"),
    ("7.2.9", 0x080C, "Read_Link_Policy_Settings"),
    ("7.2.10", 0x080D, "Write_Link_Policy_Settings"),
    ("7.2.11", 0x080E, "Read_Default_Link_Policy_Settings"),
    ("7.2.12", 0x080F, "Write_Default_Link_Policy_Settings"),
    ("7.2.13", 0x0810, "Flow_Specification"),
    ("7.2.14", 0x0811, "Sniff_Subrating"),
    ("7.3.1", 0x0C01, "Set_Event_Mask"),
    ("7.3.2", 0x0C03, "Reset"),
    ("7.3.3", 0x0C05, "Set_Event_Filter"),
    ("7.3.4", 0x0C08, "Flush"),
    ("7.3.5", 0x0C09, "Read_PIN_Type"),
    ("7.3.6", 0x0C0A, "Write_PIN_Type"),
    ("7.3.8", 0x0C0D, "Read_Stored_Link_Key"),
    ("7.3.9", 0x0C11, "Write_Stored_Link_Key"),
    ("7.3.10", 0x0C12, "Delete_Stored_Link_Key"),
    ("7.3.11", 0x0C13, "Write_Local_Name"),
    ("7.3.12", 0x0C14, "Read_Local_Name"),
    ("7.3.13", 0x0C15, "Read_Connection_Accept_Timeout"),
    ("7.3.14", 0x0C16, "Write_Connection_Accept_Timeout"),
    ("7.3.15", 0x0C17, "Read_Page_Timeout"),
    ("7.3.16", 0x0C18, "Write_Page_Timeout"),
    ("7.3.17", 0x0C19, "Read_Scan_Enable"),
    ("7.3.18", 0x0C1A, "Write_Scan_Enable"),
    ("7.3.19", 0x0C1B, "Read_Page_Scan_Activity"),
    ("7.3.20", 0x0C1C, "Write_Page_Scan_Activity"),
    ("7.3.21", 0x0C1D, "Read_Inquiry_Scan_Activity"),
    ("7.3.22", 0x0C1E, "Write_Inquiry_Scan_Activity"),
    ("7.3.23", 0x0C1F, "Read_Authentication_Enable"),
    ("7.3.24", 0x0C20, "Write_Authentication_Enable"),
    ("7.3.25", 0x0C23, "Read_Class_Of_Device"),
    ("7.3.26", 0x0C24, "Write_Class_Of_Device"),
    ("7.3.27", 0x0C25, "Read_Voice_Setting"),
    ("7.3.28", 0x0C26, "Write_Voice_Setting"),
    ("7.3.29", 0x0C27, "Read_Automatic_Flush_Timeout"),
    ("7.3.30", 0x0C28, "Write_Automatic_Flush_Timeout"),
    ("7.3.31", 0x0C29, "Read_Num_Broadcast_Retransmissions"),
    ("7.3.32", 0x0C2A, "Write_Num_Broadcast_Retransmissions"),
    ("7.3.33", 0x0C2B, "Read_Hold_Mode_Activity"),
    ("7.3.34", 0x0C2C, "Write_Hold_Mode_Activity"),
    ("7.3.35", 0x0C2D, "Read_Transmit_Power_Level"),
    ("7.3.36", 0x0C2E, "Read_Synchronous_Flow_Control_Enable"),
    ("7.3.37", 0x0C2F, "Write_Synchronous_Flow_Control_Enable"),
    ("7.3.38", 0x0C31, "Set_Controller_To_Host_Flow_Control"),
    ("7.3.39", 0x0C33, "Host_Buffer_Size"),
    ("7.3.40", 0x0C35, "Host_Number_Of_Completed_Packets"),
    ("7.3.41", 0x0C36, "Read_Link_Supervision_Timeout"),
    ("7.3.42", 0x0C37, "Write_Link_Supervision_Timeout"),
    ("7.3.43", 0x0C38, "Read_Number_Of_Supported_IAC"),
    ("7.3.44", 0x0C39, "Read_Current_IAC_LAP"),
    ("7.3.45", 0x0C3A, "Write_Current_IAC_LAP"),
    ("7.3.46", 0x0C3F, "Set_AFH_Host_Channel_Classification"),
    ("7.3.47", 0x0C42, "Read_Inquiry_Scan_Type"),
    ("7.3.48", 0x0C43, "Write_Inquiry_Scan_Type"),
    ("7.3.49", 0x0C44, "Read_Inquiry_Mode"),
    ("7.3.50", 0x0C45, "Write_Inquiry_Mode"),
    ("7.3.51", 0x0C46, "Read_Page_Scan_Type"),
    ("7.3.52", 0x0C47, "Write_Page_Scan_Type"),
    ("7.3.53", 0x0C48, "Read_AFH_Channel_Assessment_Mode"),
    ("7.3.54", 0x0C49, "Write_AFH_Channel_Assessment_Mode"),
    ("7.3.55", 0x0C51, "Read_Extended_Inquiry_Response"),
    ("7.3.56", 0x0C52, "Write_Extended_Inquiry_Response"),
    ("7.3.57", 0x0C53, "Refresh_Encryption_Key"),
    ("7.3.58", 0x0C55, "Read_Simple_Pairing_Mode"),
    ("7.3.59", 0x0C56, "Write_Simple_Pairing_Mode"),
    ("7.3.60", 0x0C57, "Read_Local_OOB_Data"),
    ("7.3.61", 0x0C58, "Read_Inquiry_Response_Transmit_Power_Level"),
    ("7.3.62", 0x0C59, "Write_Inquiry_Transmit_Power_Level"),
    ("7.3.63", 0x0C60, "Send_Keypress_Notification"),
    ("7.3.64", 0x0C5A, "Read_Default_Erroneous_Data_Reporting"),
    ("7.3.65", 0x0C5B, "Write_Default_Erroneous_Data_Reporting"),
    ("7.3.66", 0x0C5F, "Enhanced_Flush"),
    ("7.3.69", 0x0C63, "Set_Event_Mask_Page_2"),
    ("7.3.72", 0x0C66, "Read_Flow_Control_Mode"),
    ("7.3.73", 0x0C67, "Write_Flow_Control_Mode"),
    ("7.3.74", 0x0C68, "Read_Enhanced_Transmit_Power_Level"),
    ("7.3.78", 0x0C6C, "Read_LE_Host_Support"),
    ("7.3.79", 0x0C6D, "Write_LE_Host_Support"),
    ("7.3.80", 0x0C6E, "Set_MWS_Channel_Parameters"),
    ("7.3.81", 0x0C6F, "Set_External_Frame_Configuration"),
    ("7.3.82", 0x0C70, "Set_MWS_Signaling"),
    ("7.3.83", 0x0C71, "Set_MWS_Transport_Layer"),
    ("7.3.84", 0x0C72, "Set_MWS_Scan_Frequency_Table"),
    ("7.3.85", 0x0C73, "Set_MWS_PATTERN_Configuration"),
    ("7.3.86", 0x0C74, "Set_Reserved_LT_ADDR"),
    ("7.3.87", 0x0C75, "Delete_Reserved_LT_ADDR"),
    ("7.3.88", 0x0C76, "Set_Connectionless_Peripheral_Broadcast_Data"),
    ("7.3.89", 0x0C77, "Read_Synchronization_Train_Parameters"),
    ("7.3.90", 0x0C78, "Write_Synchronization_Train_Parameters"),
    ("7.3.91", 0x0C79, "Read_Secure_Connections_Host_Support"),
    ("7.3.92", 0x0C7A, "Write_Secure_Connections_Host_Support"),
    ("7.3.93", 0x0C7B, "Read_Authenticated_Payload_Timeout"),
    ("7.3.94", 0x0C7C, "Write_Authenticated_Payload_Timeout"),
    ("7.3.95", 0x0C7D, "Read_Local_OOB_Extended_Data"),
    ("7.3.96", 0x0C7E, "Read_Extended_Page_Timeout"),
    ("7.3.97", 0x0C7F, "Write_Extended_Page_Timeout"),
    ("7.3.98", 0x0C80, "Read_Extended_Inquiry_Length"),
    ("7.3.99", 0x0C81, "Write_Extended_Inquiry_Length"),
    ("7.3.100", 0x0C82, "Set_Ecosystem_Base_Interval"),
    ("7.3.101", 0x0C83, "Configure_Data_Path"),
    ("7.3.102", 0x0C84, "Set_Min_Encryption_Key_Size"),
    ("7.4.1", 0x1001, "Read_Local_Version_Information"),
    ("7.4.2", 0x1002, "Read_Local_Supported_Commands"),
    ("7.4.3", 0x1003, "Read_Local_Supported_Features"),
    ("7.4.4", 0x1004, "Read_Local_Extended_Features"),
    ("7.4.5", 0x1005, "Read_Buffer_Size"),
    ("7.4.6", 0x1009, "Read_BD_ADDR"),
    ("7.4.7", 0x100A, "Read_Data_Block_Size"),
    ("7.4.8", 0x100B, "Read_Local_Supported_Codecs"),
    ("7.4.8", 0x100D, "Read_Local_Supported_Codecs_v2"),
    ("7.4.9", 0x100C, "Read_Local_Simple_Pairing_Options"),
    ("7.4.10", 0x100E, "Read_Local_Supported_Codec_Capabilities"),
    ("7.4.11", 0x100F, "Read_Local_Supported_Controller_Delay"),
    ("7.5.1", 0x1401, "Read_Failed_Contact_Counter"),
    ("7.5.2", 0x1402, "Reset_Failed_Contact_Counter"),
    ("7.5.3", 0x1403, "Read_Link_Quality"),
    ("7.5.4", 0x1405, "Read_RSSI"),
    ("7.5.5", 0x1406, "Read_AFH_Channel_Map"),
    ("7.5.6", 0x1407, "Read_Clock"),
    ("7.5.7", 0x1408, "Read_Encryption_Key_Size"),
    ("7.5.11", 0x140C, "Get_MWS_Transport_Layer_Configuration"),
    ("7.5.12", 0x140D, "Set_Triggered_Clock_Capture"),
    ("7.6.1", 0x1801, "Read_Loopback_Mode"),
    ("7.6.2", 0x1802, "Write_Loopback_Mode"),
    ("7.6.3", 0x1803, "Enable_Implementation_Under_Test_Mode"),
    ("7.6.4", 0x1804, "Write_Simple_Pairing_Debug_Mode"),
    ("7.6.8", 0x180A, "Write_Secure_Connections_Test_Mode"),
    ("7.8.1", 0x2001, "LE_Set_Event_Mask"),
    ("7.8.2", 0x2002, "LE_Read_Buffer_Size"),
    ("7.8.2", 0x2060, "LE_Read_Buffer_Size_v2"),
    ("7.8.3", 0x2003, "LE_Read_Local_Supported_Features"),
    ("7.8.4", 0x2005, "LE_Set_Random_Address"),
    ("7.8.5", 0x2006, "LE_Set_Advertising_Parameters"),
    ("7.8.6", 0x2007, "LE_Read_Advertising_Physical_Channel_Tx_Power"),
    ("7.8.7", 0x2008, "LE_Set_Advertising_Data"),
    ("7.8.8", 0x2009, "LE_Set_Scan_Response_Data"),
    ("7.8.9", 0x200A, "LE_Set_Advertising_Enable"),
    ("7.8.10", 0x200B, "LE_Set_Scan_Parameters"),
    ("7.8.11", 0x200C, "LE_Set_Scan_Enable"),
    ("7.8.12", 0x200D, "LE_Create_Connection"),
    ("7.8.13", 0x200E, "LE_Create_Connection_Cancel"),
    ("7.8.14", 0x200F, "LE_Read_Filter_Accept_List_Size"),
    ("7.8.15", 0x2010, "LE_Clear_Filter_Accept_List"),
    ("7.8.16", 0x2011, "LE_Add_Device_To_Filter_Accept_List"),
    ("7.8.17", 0x2012, "LE_Remove_Device_From_Filter_Accept_List"),
    ("7.8.18", 0x2013, "LE_Connection_Update"),
    ("7.8.19", 0x2014, "LE_Set_Host_Channel_Classification"),
    ("7.8.20", 0x2015, "LE_Read_Channel_Map"),
    ("7.8.21", 0x2016, "LE_Read_Remote_Features"),
    ("7.8.22", 0x2017, "LE_Encrypt"),
    ("7.8.23", 0x2018, "LE_Rand"),
    ("7.8.24", 0x2019, "LE_Enable_Encryption"),
    ("7.8.25", 0x201A, "LE_Long_Term_Key_Request_Reply"),
    ("7.8.26", 0x201B, "LE_Long_Term_Key_Request_Negative_Reply"),
    ("7.8.27", 0x201C, "LE_Read_Supported_States"),
    ("7.8.28", 0x201D, "LE_Receiver_Test"),
    ("7.8.28", 0x2033, "LE_Receiver_Test_v2"),
    ("7.8.28", 0x204F, "LE_Receiver_Test_v3"),
    ("7.8.29", 0x201E, "LE_Transmitter_Test"),
    ("7.8.29", 0x2034, "LE_Transmitter_Test_v2"),
    ("7.8.29", 0x2050, "LE_Transmitter_Test_v3"),
    ("7.8.29", 0x207B, "LE_Transmitter_Test_v4"),
    ("7.8.30", 0x201F, "LE_Test_End"),
    ("7.8.31", 0x2020, "LE_Remote_Connection_Parameter_Request_Reply"),
    ("7.8.32", 0x2021, "LE_Remote_Connection_Parameter_Request_Negative_Reply"),
    ("7.8.33", 0x2022, "LE_Set_Data_Length"),
    ("7.8.34", 0x2023, "LE_Read_Suggested_Default_Data_Length"),
    ("7.8.35", 0x2024, "LE_Write_Suggested_Default_Data_Length"),
    ("7.8.36", 0x2025, "LE_Read_Local_P-256_Public_Key"),
    ("7.8.37", 0x2026, "LE_Generate_DHKey"),
    ("7.8.37", 0x205E, "LE_Generate_DHKey_v2"),
    ("7.8.38", 0x2027, "LE_Add_Device_To_Resolving_List"),
    ("7.8.39", 0x2028, "LE_Remove_Device_From_Resolving_List"),
    ("7.8.40", 0x2029, "LE_Clear_Resolving_List"),
    ("7.8.41", 0x202A, "LE_Read_Resolving_List_Size"),
    ("7.8.42", 0x202B, "LE_Read_Peer_Resolvable_Address"),
    ("7.8.43", 0x202C, "LE_Read_Local_Resolvable_Address"),
    ("7.8.44", 0x202D, "LE_Set_Address_Resolution_Enable"),
    ("7.8.45", 0x202E, "LE_Set_Resolvable_Private_Address_Timeout"),
    ("7.8.46", 0x202F, "LE_Read_Maximum_Data_Length"),
    ("7.8.47", 0x2030, "LE_Read_PHY"),
    ("7.8.48", 0x2031, "LE_Set_Default_PHY"),
    ("7.8.49", 0x2032, "LE_Set_PHY"),
    ("7.8.52", 0x2035, "LE_Set_Advertising_Set_Random_Address"),
    ("7.8.53", 0x2036, "LE_Set_Extended_Advertising_Parameters"),
    ("7.8.53", 0x207F, "LE_Set_Extended_Advertising_Parameters_v2"),
    ("7.8.54", 0x2037, "LE_Set_Extended_Advertising_Data"),
    ("7.8.55", 0x2038, "LE_Set_Extended_Scan_Response_Data"),
    ("7.8.56", 0x2039, "LE_Set_Extended_Advertising_Enable"),
    ("7.8.57", 0x203A, "LE_Read_Maximum_Advertising_Data_Length"),
    ("7.8.58", 0x203B, "LE_Read_Number_of_Supported_Advertising_Sets"),
    ("7.8.59", 0x203C, "LE_Remove_Advertising_Set"),
    ("7.8.60", 0x203D, "LE_Clear_Advertising_Sets"),
    ("7.8.61", 0x203E, "LE_Set_Periodic_Advertising_Parameters"),
    ("7.8.61", 0x2086, "LE_Set_Periodic_Advertising_Parameters_v2"),
    ("7.8.62", 0x203F, "LE_Set_Periodic_Advertising_Data"),
    ("7.8.63", 0x2040, "LE_Set_Periodic_Advertising_Enable"),
    ("7.8.64", 0x2041, "LE_Set_Extended_Scan_Parameters"),
    ("7.8.65", 0x2042, "LE_Set_Extended_Scan_Enable"),
    ("7.8.66", 0x2043, "LE_Extended_Create_Connection"),
    ("7.8.66", 0x2085, "LE_Extended_Create_Connection_v2"),
    ("7.8.67", 0x2044, "LE_Periodic_Advertising_Create_Sync"),
    ("7.8.68", 0x2045, "LE_Periodic_Advertising_Create_Sync_Cancel"),
    ("7.8.69", 0x2046, "LE_Periodic_Advertising_Terminate_Sync"),
    ("7.8.70", 0x2047, "LE_Add_Device_To_Periodic_Advertiser_List"),
    ("7.8.71", 0x2048, "LE_Remove_Device_From_Periodic_Advertiser_List"),
    ("7.8.72", 0x2049, "LE_Clear_Periodic_Advertiser_List"),
    ("7.8.73", 0x204A, "LE_Read_Periodic_Advertiser_List_Size"),
    ("7.8.74", 0x204B, "LE_Read_Transmit_Power"),
    ("7.8.75", 0x204C, "LE_Read_RF_Path_Compensation"),
    ("7.8.76", 0x204D, "LE_Write_RF_Path_Compensation"),
    ("7.8.77", 0x204E, "LE_Set_Privacy_Mode"),
    ("7.8.80", 0x2051, "LE_Set_Connectionless_CTE_Transmit_Parameters"),
    ("7.8.81", 0x2052, "LE_Set_Connectionless_CTE_Transmit_Enable"),
    ("7.8.82", 0x2053, "LE_Set_Connectionless_IQ_Sampling_Enable"),
    ("7.8.83", 0x2054, "LE_Set_Connection_CTE_Receive_Parameters"),
    ("7.8.84", 0x2055, "LE_Set_Connection_CTE_Transmit_Parameters"),
    ("7.8.85", 0x2056, "LE_Connection_CTE_Request_Enable"),
    ("7.8.86", 0x2057, "LE_Connection_CTE_Response_Enable"),
    ("7.8.87", 0x2058, "LE_Read_Antenna_Information"),
    ("7.8.88", 0x2059, "LE_Set_Periodic_Advertising_Receive_Enable"),
    ("7.8.89", 0x205A, "LE_Periodic_Advertising_Sync_Transfer"),
    ("7.8.90", 0x205B, "LE_Periodic_Advertising_Set_Info_Transfer"),
    ("7.8.91", 0x205C, "LE_Set_Periodic_Advertising_Sync_Transfer_Parameters"),
    ("7.8.92", 0x205D, "LE_Set_Default_Periodic_Advertising_Sync_Transfer_Parameters"),
    ("7.8.94", 0x205F, "LE_Modify_Sleep_Clock_Accuracy"),
    ("7.8.96", 0x2061, "LE_Read_ISO_TX_Sync"),
    ("7.8.97", 0x2062, "LE_Set_CIG_Parameters"),
    ("7.8.98", 0x2063, "LE_Set_CIG_Parameters_Test"),
    ("7.8.99", 0x2064, "LE_Create_CIS"),
    ("7.8.100", 0x2065, "LE_Remove_CIG"),
    ("7.8.101", 0x2066, "LE_Accept_CIS_Request"),
    ("7.8.102", 0x2067, "LE_Reject_CIS_Request"),
    ("7.8.103", 0x2068, "LE_Create_BIG"),
    ("7.8.104", 0x2069, "LE_Create_BIG_Test"),
    ("7.8.105", 0x206A, "LE_Terminate_BIG"),
    ("7.8.106", 0x206B, "LE_BIG_Create_Sync"),
    ("7.8.107", 0x206C, "LE_BIG_Terminate_Sync"),
    ("7.8.108", 0x206D, "LE_Request_Peer_SCA"),
    ("7.8.109", 0x206E, "LE_Setup_ISO_Data_Path"),
    ("7.8.110", 0x206F, "LE_Remove_ISO_Data_Path"),
    ("7.8.111", 0x2070, "LE_ISO_Transmit_Test"),
    ("7.8.112", 0x2071, "LE_ISO_Receive_Test"),
    ("7.8.113", 0x2072, "LE_ISO_Read_Test_Counters"),
    ("7.8.114", 0x2073, "LE_ISO_Test_End"),
    ("7.8.115", 0x2074, "LE_Set_Host_Feature"),
    ("7.8.115", 0x2097, "LE_Set_Host_Feature_v2"),
    ("7.8.116", 0x2075, "LE_Read_ISO_Link_Quality"),
    ("7.8.117", 0x2076, "LE_Enhanced_Read_Transmit_Power_Level"),
    ("7.8.118", 0x2077, "LE_Read_Remote_Transmit_Power_Level"),
    ("7.8.119", 0x2078, "LE_Set_Path_Loss_Reporting_Parameters"),
    ("7.8.120", 0x2079, "LE_Set_Path_Loss_Reporting_Enable"),
    ("7.8.121", 0x207A, "LE_Set_Transmit_Power_Reporting_Enable"),
    ("7.8.122", 0x207C, "LE_Set_Data_Related_Address_Changes"),
    ("7.8.123", 0x207D, "LE_Set_Default_Subrate"),
    ("7.8.124", 0x207E, "LE_Subrate_Request"),
    ("7.8.125", 0x2082, "LE_Set_Periodic_Advertising_Subevent_Data"),
    ("7.8.126", 0x2083, "LE_Set_Periodic_Advertising_Response_Data"),
    ("7.8.127", 0x2084, "LE_Set_Periodic_Sync_Subevent"),
    ("7.8.128", 0x2087, "LE_Read_All_Local_Supported_Features"),
    ("7.8.129", 0x2088, "LE_Read_All_Remote_Features"),
    ("7.8.130", 0x2089, "LE_CS_Read_Local_Supported_Capabilities"),
    ("7.8.131", 0x208A, "LE_CS_Read_Remote_Supported_Capabilities"),
    ("7.8.132", 0x208B, "LE_CS_Write_Cached_Remote_Supported_Capabilities"),
    ("7.8.133", 0x208C, "LE_CS_Security_Enable"),
    ("7.8.134", 0x208D, "LE_CS_Set_Default_Settings"),
    ("7.8.135", 0x208E, "LE_CS_Read_Remote_FAE_Table"),
    ("7.8.136", 0x208F, "LE_CS_Write_Cached_Remote_FAE_Table"),
    ("7.8.137", 0x2090, "LE_CS_Create_Config"),
    ("7.8.138", 0x2091, "LE_CS_Remove_Config"),
    ("7.8.139", 0x2092, "LE_CS_Set_Channel_Classification"),
    ("7.8.140", 0x2093, "LE_CS_Set_Procedure_Parameters"),
    ("7.8.141", 0x2094, "LE_CS_Procedure_Enable"),
    ("7.8.142", 0x2095, "LE_CS_Test"),
    ("7.8.143", 0x2096, "LE_CS_Test_End"),
    ("7.8.144", 0x2080, "LE_Set_Decision_Data"),
    ("7.8.145", 0x2081, "LE_Set_Decision_Instructions"),
    ("7.8.146", 0x209C, "LE_Enable_Monitoring_Advertisers"),
    ("7.8.147", 0x2098, "LE_Add_Device_To_Monitored_Advertisers_List"),
    ("7.8.148", 0x2099, "LE_Remove_Device_From_Monitored_Advertisers_List"),
    ("7.8.149", 0x209A, "LE_Clear_Monitored_Advertisers_List"),
    ("7.8.150", 0x209B, "LE_Read_Monitored_Advertisers_List_Size"),
    ("7.8.151", 0x209D, "LE_Frame_Space_Update"),
]

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
            #expect(HCINames.command(HCIOpcode(rawValue: entry.opcode)) == entry.name,
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
        for (code, name) in HCINames.coreEventNames where !specificationEvents.contains(where: { $0.code == code && $0.name == name }) {
            Issue.record("event \(hex(code, digits: 2)) \(name) is in the Core 6.0 table but not in the list")
        }
    }

    @Test("The whole tables are the Core 6.0, withdrawn and vendor parts, which do not overlap")
    func partsMakeTheTables() {
        let commandParts: [[UInt16: String]] = [HCINames.coreCommandNames, HCINames.withdrawnCommandNames, HCINames.vendorCommandNames]
        let commandCount: Int = commandParts.map(\.count).reduce(0, +)
        #expect(commandCount == HCINames.commandNames.count, "command parts overlap")
        for part in commandParts {
            for (opcode, name) in part { #expect(HCINames.commandNames[opcode] == name) }
        }
        let eventParts: [[UInt8: String]] = [HCINames.coreEventNames, HCINames.withdrawnEventNames, HCINames.vendorEventNames]
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
        let groupOfOGF: [UInt8: String] = [0x01: "7.1.", 0x02: "7.2.", 0x03: "7.3.", 0x04: "7.4.", 0x05: "7.5.", 0x06: "7.6.",
                                           0x08: "7.8."]
        for entry in specificationCommands {
            let ogf = HCIOpcode(rawValue: entry.opcode).ogf
            #expect(groupOfOGF[ogf].map { entry.section.hasPrefix($0) } == true, "§\(entry.section) \(entry.name) has OGF \(ogf)")
        }
        for entry in specificationEvents {
            #expect(entry.section.hasPrefix("7.7.") && (entry.section == "7.7.65" || !entry.section.hasPrefix("7.7.65")), "§\(entry.section)")
        }
        #expect(specificationLESubevents.allSatisfy { $0.section.hasPrefix("7.7.65.") })
        // No code twice; a section shared only by the versions of one name.
        #expect(Set(specificationCommands.map(\.opcode)).count == specificationCommands.count)
        #expect(Set(specificationEvents.map(\.code)).count == specificationEvents.count)
        #expect(Set(specificationLESubevents.map(\.code)).count == specificationLESubevents.count)
        let all = specificationCommands.map { ($0.section, $0.name) } + specificationEvents.map { ($0.section, $0.name) }
            + specificationLESubevents.map { ($0.section, $0.name) }
        for (section, entries) in Dictionary(grouping: all, by: { $0.0 }) where entries.count > 1 {
            let bases = Set(entries.map { unversioned($0.1) })
            #expect(bases.count == 1, "§\(section) holds \(entries.map(\.1))")
        }
        // The spelling: no HCI_ prefix, words joined by underscores, versions as _v2.
        for (section, name) in all {
            #expect(!name.hasPrefix("HCI_") && !name.contains(" ") && !name.contains("__") && !name.contains("[v"), "§\(section) \(name)")
        }
    }

    /// A name without its `_vN` suffix.
    private func unversioned(_ name: String) -> String {
        guard let range = name.range(of: "_v", options: .backwards),
              !name[range.upperBound...].isEmpty, name[range.upperBound...].allSatisfy(\.isNumber) else { return name }
        return String(name[..<range.lowerBound])
    }
}
