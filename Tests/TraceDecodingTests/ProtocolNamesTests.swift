import ATT
import SMP
import Testing

// ATT and SMP codes print in the spelling of expected-counts.json.

@Suite("ATT and SMP names")
struct ProtocolNamesTests {
    @Test(
        "ATT opcodes",
        arguments: [
            (UInt8(0x01), "Error_Rsp"), (0x02, "Exchange_MTU_Req"), (0x03, "Exchange_MTU_Rsp"),
            (0x04, "Find_Information_Req"), (0x05, "Find_Information_Rsp"), (0x06, "Find_By_Type_Value_Req"),
            (0x07, "Find_By_Type_Value_Rsp"), (0x08, "Read_By_Type_Req"), (0x09, "Read_By_Type_Rsp"),
            (0x0A, "Read_Req"), (0x0B, "Read_Rsp"), (0x0C, "Read_Blob_Req"), (0x0D, "Read_Blob_Rsp"),
            (0x0E, "Read_Multiple_Req"), (0x0F, "Read_Multiple_Rsp"), (0x10, "Read_By_Group_Type_Req"),
            (0x11, "Read_By_Group_Type_Rsp"), (0x12, "Write_Req"), (0x13, "Write_Rsp"), (0x16, "Prepare_Write_Req"),
            (0x17, "Prepare_Write_Rsp"), (0x18, "Execute_Write_Req"), (0x19, "Execute_Write_Rsp"),
            (0x1B, "Handle_Value_Notification"), (0x1D, "Handle_Value_Indication"), (0x1E, "Handle_Value_Confirmation"),
            (0x20, "Read_Multiple_Variable_Req"), (0x21, "Read_Multiple_Variable_Rsp"),
            (0x23, "Multiple_Handle_Value_Notification"), (0x52, "Write_Cmd"), (0xD2, "Signed_Write_Cmd"),
            (0x00, "Unknown"), (0x14, "Unknown"), (0x1C, "Unknown"), (0x53, "Unknown"), (0xFF, "Unknown"),
        ])
    func attNames(code: UInt8, name: String) {
        let opcode = ATTOpcode(rawValue: code)
        #expect(opcode.name == name)
        let digits = String(code, radix: 16)
        #expect(opcode.description == "0x\(code < 16 ? "0" : "")\(digits) \(name)")
    }

    @Test("ATT constants and the command flag")
    func attConstants() {
        #expect(ATTOpcode.exchangeMTURequest.rawValue == 0x02)
        #expect(ATTOpcode.handleValueNotification.description == "0x1b Handle_Value_Notification")
        #expect(ATTOpcode.writeCommand.isCommand)
        #expect(ATTOpcode.signedWriteCommand.isCommand)
        #expect(!ATTOpcode.writeRequest.isCommand)
        #expect(!ATTOpcode.handleValueNotification.isCommand)
    }

    @Test(
        "SMP codes",
        arguments: [
            (UInt8(0x01), "Pairing_Request"), (0x02, "Pairing_Response"), (0x03, "Pairing_Confirm"),
            (0x04, "Pairing_Random"), (0x05, "Pairing_Failed"), (0x06, "Encryption_Information"),
            (0x07, "Central_Identification"), (0x08, "Identity_Information"), (0x09, "Identity_Address_Information"),
            (0x0A, "Signing_Information"), (0x0B, "Security_Request"), (0x0C, "Pairing_Public_Key"),
            (0x0D, "Pairing_DHKey_Check"), (0x0E, "Pairing_Keypress_Notification"), (0x00, "Unknown"),
            (0x0F, "Unknown"),
        ])
    func smpNames(code: UInt8, name: String) {
        #expect(SMPCode(rawValue: code).name == name)
        #expect(SMPCode(rawValue: code).description.hasSuffix(" \(name)"))
    }

    @Test("SMP constants")
    func smpConstants() {
        #expect(SMPCode.pairingRequest.description == "0x01 Pairing_Request")
        #expect(SMPCode.pairingDHKeyCheck.rawValue == 0x0D)
        #expect(SMPCode.securityRequest.rawValue == 0x0B)
    }
}
