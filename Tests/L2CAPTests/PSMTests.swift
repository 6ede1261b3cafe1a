import BluetoothCore
import HCI
import L2CAP
import Testing

// PSM names from the Assigned Numbers, and the signaling codes' names on each signaling
// channel (Core Vol 3, Part A, 4, Table 4.2).

@Suite("PSMs and signaling code names")
struct PSMTests {
    @Test(
        "Assigned PSMs are named as the Assigned Numbers name them",
        arguments: [
            (UInt16(0x0001), "SDP"), (0x0003, "RFCOMM"), (0x0005, "TCS-BIN"), (0x0007, "TCS-BIN-CORDLESS"),
            (0x000F, "BNEP"), (0x0011, "HID_Control"), (0x0013, "HID_Interrupt"), (0x0015, "UPnP"),
            (0x0017, "AVCTP"), (0x0019, "AVDTP"), (0x001B, "AVCTP_Browsing"), (0x001D, "UDI_C-Plane"),
            (0x001F, "ATT"), (0x0021, "3DSP"), (0x0023, "LE_PSM_IPSP"), (0x0025, "OTS"), (0x0027, "EATT"),
        ])
    func assignedNames(value: UInt16, name: String) {
        let psm = PSM(rawValue: value)
        #expect(psm.name == name)
        #expect(psm.description == "PSM \(hex(value, digits: 4)) \(name)")
    }

    @Test(
        "Dynamic and unassigned PSMs have no name",
        arguments: [UInt16(0x0000), 0x0002, 0x0029, 0x0080, 0x00FF, 0x1001, 0xFFFF])
    func unnamed(value: UInt16) {
        #expect(PSM(rawValue: value).name == nil)
        #expect(PSM(rawValue: value).description == "PSM \(hex(value, digits: 4))")
    }

    @Test("Only ATT and EATT carry ATT")
    func carriesATT() {
        #expect(PSM.att.carriesATT)
        #expect(PSM.eatt.carriesATT)
        #expect(!PSM.sdp.carriesATT)
        #expect(!PSM(rawValue: 0x0080).carriesATT)
    }

    @Test(
        "BR/EDR names: every code ACL-U allows",
        arguments: [
            (UInt8(0x01), "Command_Reject"), (0x02, "Connection_Req"), (0x03, "Connection_Rsp"),
            (0x04, "Configuration_Req"),
            (0x05, "Configuration_Rsp"), (0x06, "Disconnection_Req"), (0x07, "Disconnection_Rsp"), (0x08, "Echo_Req"),
            (0x09, "Echo_Rsp"), (0x0A, "Information_Req"), (0x0B, "Information_Rsp"), (0x0C, "Create_Channel_Req"),
            (0x0D, "Create_Channel_Rsp"), (0x0E, "Move_Channel_Req"), (0x0F, "Move_Channel_Rsp"),
            (0x10, "Move_Channel_Confirmation_Req"), (0x11, "Move_Channel_Confirmation_Rsp"),
            (0x16, "Flow_Control_Credit_Ind"),
            (0x17, "Credit_Based_Connection_Req"), (0x18, "Credit_Based_Connection_Rsp"),
            (0x19, "Credit_Based_Reconfigure_Req"),
            (0x1A, "Credit_Based_Reconfigure_Rsp"),
            // LE only, and undefined.
            (0x12, "Unknown"), (0x13, "Unknown"), (0x14, "Unknown"), (0x15, "Unknown"), (0x00, "Unknown"),
            (0x1B, "Unknown"),
        ])
    func bredrNames(code: UInt8, name: String) {
        #expect(SignalingCode(rawValue: code).bredrName == name)
        #expect(SignalingCode(rawValue: code).bredrDescription == "\(hex(code, digits: 2)) \(name)")
    }

    @Test(
        "LE names are as they were: BR/EDR-only codes stay Unknown there",
        arguments: [
            (UInt8(0x01), "Command_Reject"), (0x02, "Unknown"), (0x05, "Unknown"), (0x06, "Disconnection_Req"),
            (0x0B, "Unknown"), (0x11, "Unknown"), (0x12, "Connection_Parameter_Update_Req"),
            (0x14, "LE_Credit_Based_Connection_Req"),
            (0x17, "Credit_Based_Connection_Req"), (0x1A, "Credit_Based_Reconfigure_Rsp"),
        ])
    func leNames(code: UInt8, name: String) {
        #expect(SignalingCode(rawValue: code).name == name)
    }

    @Test("Channel identifiers: signaling, dynamic range, names")
    func channelIdentifiers() {
        #expect(ChannelIdentifier.signaling.rawValue == 0x0001)
        #expect(!ChannelIdentifier(rawValue: 0x003F).isDynamic)
        #expect(ChannelIdentifier(rawValue: 0x0040).isDynamic)
        #expect(ChannelIdentifier(rawValue: 0xFFFF).isDynamic)
        #expect(ChannelIdentifier(rawValue: 0x0002).description == "connectionless (0x0002)")
        #expect(ChannelIdentifier(rawValue: 0x0007).description == "BR/EDR SMP (0x0007)")
    }
}
