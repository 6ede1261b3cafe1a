import BluetoothCore
import HCI
import Testing

// Names as trace summaries spell them, the specification's (SpecificationNamesTests holds
// the whole table against its section index): the keys of trace summaries.

@Suite("HCI names")
struct NamesTests {
    @Test(
        "Command keys as the trace summaries spell them",
        arguments: [
            (UInt16(0x0C03), "0x0c03 (ogf 0x03 ocf 0x003) Reset"),
            (0x200B, "0x200b (ogf 0x08 ocf 0x00b) LE_Set_Scan_Parameters"),
            (0x041D, "0x041d (ogf 0x01 ocf 0x01d) Read_Remote_Version_Information"),
            (0x080F, "0x080f (ogf 0x02 ocf 0x00f) Write_Default_Link_Policy_Settings"),
            (0x1009, "0x1009 (ogf 0x04 ocf 0x009) Read_BD_ADDR"),
            (0x2043, "0x2043 (ogf 0x08 ocf 0x043) LE_Extended_Create_Connection"),
            (0x2025, "0x2025 (ogf 0x08 ocf 0x025) LE_Read_Local_P-256_Public_Key"),
            (0x2060, "0x2060 (ogf 0x08 ocf 0x060) LE_Read_Buffer_Size_v2"),
            // BR/EDR commands (expected-counts.json, older than the table, calls these Unknown).
            (0x0C1C, "0x0c1c (ogf 0x03 ocf 0x01c) Write_Page_Scan_Activity"),
            (0x0C3A, "0x0c3a (ogf 0x03 ocf 0x03a) Write_Current_IAC_LAP"),
            (0x0803, "0x0803 (ogf 0x02 ocf 0x003) Sniff_Mode"),
            (0x0411, "0x0411 (ogf 0x01 ocf 0x011) Authentication_Requested"),
            (0x042B, "0x042b (ogf 0x01 ocf 0x02b) IO_Capability_Request_Reply"),
            (0x1803, "0x1803 (ogf 0x06 ocf 0x003) Enable_Implementation_Under_Test_Mode"),
            (0x1408, "0x1408 (ogf 0x05 ocf 0x008) Read_Encryption_Key_Size"),
            // Versions with opcodes of their own, and Core 6.0's newest.
            (0x207F, "0x207f (ogf 0x08 ocf 0x07f) LE_Set_Extended_Advertising_Parameters_v2"),
            (0x207B, "0x207b (ogf 0x08 ocf 0x07b) LE_Transmitter_Test_v4"),
            (0x2089, "0x2089 (ogf 0x08 ocf 0x089) LE_CS_Read_Local_Supported_Capabilities"),
            (0x209D, "0x209d (ogf 0x08 ocf 0x09d) LE_Frame_Space_Update"),
            // Withdrawn before 6.0, still named for old traces.
            (0x0435, "0x0435 (ogf 0x01 ocf 0x035) Create_Physical_Link"),
            (0x0C3D, "0x0c3d (ogf 0x03 ocf 0x03d) Read_Page_Scan_Mode"),
            // Unassigned: in a group the specification defines, and in groups it does not.
            (0x2004, "0x2004 (ogf 0x08 ocf 0x004) Unknown"),
            (0x20FF, "0x20ff (ogf 0x08 ocf 0x0ff) Unknown"),
            (0x0C00, "0x0c00 (ogf 0x03 ocf 0x000) Unknown"),
            (0x1C01, "0x1c01 (ogf 0x07 ocf 0x001) Unknown"),
            (0xF801, "0xf801 (ogf 0x3e ocf 0x001) Unknown"),
            // Vendor-specific (OGF 0x3F): Android's named ones, the rest "Vendor".
            (0xFC61, "0xfc61 (ogf 0x3f ocf 0x061) Vendor"),
            (0xFD53, "0xfd53 (ogf 0x3f ocf 0x153) Android_LE_Get_Vendor_Capabilities"),
            (0xFD54, "0xfd54 (ogf 0x3f ocf 0x154) Android_LE_Multi_Advertising"),
            (0xFD5A, "0xfd5a (ogf 0x3f ocf 0x15a) Android_LE_Extended_Scan_Params"),
            (0xFD5E, "0xfd5e (ogf 0x3f ocf 0x15e) Android_Bluetooth_Quality_Report"),
            (0x0000, "0x0000 (ogf 0x00 ocf 0x000) Unknown"),
            (0xFFFF, "0xffff (ogf 0x3f ocf 0x3ff) Vendor"),
        ])
    func commandKeys(opcode: UInt16, key: String) {
        #expect(HCINames.commandKey(HCIOpcode(rawValue: opcode)) == key)
    }

    @Test("Every command this stack sends has its spec name")
    func commandNames() {
        let named: [(HCIOpcode, String)] = [
            (Reset.opcode, "Reset"), (SetEventMask.opcode, "Set_Event_Mask"),
            (ReadLocalVersionInformation.opcode, "Read_Local_Version_Information"),
            (ReadLocalSupportedCommands.opcode, "Read_Local_Supported_Commands"),
            (ReadLocalSupportedFeatures.opcode, "Read_Local_Supported_Features"),
            (ReadBufferSize.opcode, "Read_Buffer_Size"), (ReadBDADDR.opcode, "Read_BD_ADDR"),
            (Disconnect.opcode, "Disconnect"), (LESetEventMask.opcode, "LE_Set_Event_Mask"),
            (LEReadBufferSize.opcode, "LE_Read_Buffer_Size"), (LEReadBufferSizeV2.opcode, "LE_Read_Buffer_Size_v2"),
            (LEReadLocalSupportedFeatures.opcode, "LE_Read_Local_Supported_Features"),
            (LEReadMaximumDataLength.opcode, "LE_Read_Maximum_Data_Length"),
            (LERemoteConnectionParameterRequestReply.opcode, "LE_Remote_Connection_Parameter_Request_Reply"),
            (
                LERemoteConnectionParameterRequestNegativeReply.opcode,
                "LE_Remote_Connection_Parameter_Request_Negative_Reply"
            ),
        ]
        for (opcode, name) in named {
            #expect(opcode.name == name)
            #expect(HCINames.command(opcode) == name)
        }
    }

    @Test("Event and LE subevent names")
    func events() {
        #expect(HCINames.event(0x05) == "Disconnection_Complete")
        #expect(HCINames.event(0x0E) == "Command_Complete")
        #expect(HCINames.event(0x0F) == "Command_Status")
        #expect(HCINames.event(0x13) == "Number_Of_Completed_Packets")
        #expect(HCINames.event(0x3E) == "LE_Meta")
        #expect(HCINames.event(0x59) == "Encryption_Change_v2")
        #expect(HCINames.event(0xFF) == "Vendor_Specific")
        #expect(HCINames.event(0x99) == "Unknown")
        #expect(HCINames.event(0x0A) == "Link_Key_Type_Changed")
        #expect(HCINames.event(0x22) == "Inquiry_Result_with_RSSI")
        #expect(HCINames.event(0x48) == "Number_Of_Completed_Data_Blocks")
        #expect(HCINames.event(0x40) == "Physical_Link_Complete", "withdrawn (AMP), still named")
        #expect(HCINames.event(0x00) == "Unknown")
        #expect(HCINames.event(0x5A) == "Unknown")
        #expect(HCINames.leSubevent(0x01) == "LE_Connection_Complete")
        #expect(HCINames.leSubevent(0x02) == "LE_Advertising_Report")
        #expect(HCINames.leSubevent(0x0A) == "LE_Enhanced_Connection_Complete")
        #expect(HCINames.leSubevent(0x14) == "LE_Channel_Selection_Algorithm")
        #expect(HCINames.leSubevent(0x2A) == "LE_CIS_Established_v2")
        #expect(HCINames.leSubevent(0x31) == "LE_CS_Subevent_Result")
        #expect(HCINames.leSubevent(0x35) == "LE_Frame_Space_Update_Complete")
        #expect(HCINames.leSubevent(0x00) == "Unknown")
        #expect(HCINames.leSubevent(0x3F) == "Unknown")
    }

    @Test(
        "Status names of the common disconnection reasons",
        arguments: [
            (UInt8(0x08), "connectionTimeout"),
            (0x13, "remoteUserTerminatedConnection"),
            (0x16, "connectionTerminatedByLocalHost"),
            (0x3E, "connectionFailedToBeEstablished"),
            (0x00, "success"),
            (0x02, "unknownConnectionIdentifier"),
            (0x0C, "commandDisallowed"),
        ])
    func statusNames(code: UInt8, name: String) {
        let status = HCIStatus(rawValue: code)
        #expect(status.name == name)
        #expect(status.description == "\(hex(code, digits: 2)) \(name)")
    }

    @Test("Status constants carry their spec codes; unknown codes still print")
    func statusConstants() {
        #expect(HCIStatus.connectionTimeout.rawValue == 0x08)
        #expect(HCIStatus.remoteUserTerminatedConnection.rawValue == 0x13)
        #expect(HCIStatus.connectionTerminatedByLocalHost.rawValue == 0x16)
        #expect(HCIStatus.connectionFailedToBeEstablished.rawValue == 0x3E)
        #expect(HCIStatus.operationCancelledByHost.rawValue == 0x44)
        #expect(HCIStatus.success.isSuccess)
        #expect(!HCIStatus.commandDisallowed.isSuccess)
        #expect(HCIStatus(rawValue: 0xF0).name == nil)
        #expect(HCIStatus(rawValue: 0xF0).description == "0xf0 unknown")
        #expect(HCIStatus(rawValue: 0x2B).name == nil, "0x2b is reserved")
    }

    @Test("Every status constant's name matches the table")
    func statusConstantNames() {
        let constants: [(HCIStatus, String)] = [
            (.unknownHCICommand, "unknownHCICommand"), (.hardwareFailure, "hardwareFailure"),
            (.authenticationFailure, "authenticationFailure"), (.pinOrKeyMissing, "pinOrKeyMissing"),
            (.memoryCapacityExceeded, "memoryCapacityExceeded"), (.connectionLimitExceeded, "connectionLimitExceeded"),
            (.connectionAlreadyExists, "connectionAlreadyExists"),
            (.unsupportedFeatureOrParameterValue, "unsupportedFeatureOrParameterValue"),
            (.invalidHCICommandParameters, "invalidHCICommandParameters"),
            (.remoteDeviceTerminatedLowResources, "remoteDeviceTerminatedLowResources"),
            (.remoteDeviceTerminatedPowerOff, "remoteDeviceTerminatedPowerOff"),
            (.unsupportedRemoteFeature, "unsupportedRemoteFeature"), (.unspecifiedError, "unspecifiedError"),
            (.lmpLLResponseTimeout, "lmpLLResponseTimeout"), (.insufficientSecurity, "insufficientSecurity"),
            (.controllerBusy, "controllerBusy"),
            (.unacceptableConnectionParameters, "unacceptableConnectionParameters"),
            (.advertisingTimeout, "advertisingTimeout"),
            (.connectionTerminatedMICFailure, "connectionTerminatedMICFailure"),
            (.operationCancelledByHost, "operationCancelledByHost"),
        ]
        for (status, name) in constants { #expect(status.name == name) }
    }
}
