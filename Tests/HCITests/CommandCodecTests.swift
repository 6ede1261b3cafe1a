import BluetoothCore
import HCI
import HCITestSupport
import Testing

// Every command this stack sends, and what its Command Complete returns, against byte
// layouts written out from the Core specification (Vol 4, Part E, 5.4.1 and 7.x): the
// expected bytes are typed from the spec, not produced by the encoder under test.

/// Checks a command against its H4 bytes from the spec: encoding, decoding back through
/// `HCIPacket(h4:)`, the parameters on their own, and every truncation of the packet.
private func expectCommand<C: HCICommand>(
    _ command: C, h4 expected: [UInt8],
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let packet = HCIPacket.command(command.packet)
    #expect(packet.encodeH4().hexDump == expected.hexDump, "H4 bytes of \(C.self)", sourceLocation: sourceLocation)
    guard case .command(let decoded) = try HCIPacket(h4: expected[...]) else {
        Issue.record("\(C.self) did not decode as a command", sourceLocation: sourceLocation)
        return
    }
    #expect(decoded.opcode == C.opcode, sourceLocation: sourceLocation)
    #expect(try C(decoding: decoded.parameters) == command, sourceLocation: sourceLocation)
    // The parameters alone: 1 indicator + 2 opcode + 1 length bytes come first.
    try expectFixedSizeRoundTrip(command, Array(expected.dropFirst(4)), sourceLocation: sourceLocation)
    expectEveryPrefixRejected(h4: expected, sourceLocation: sourceLocation)
}

/// Checks return parameters against the whole Command Complete event that carries them
/// (status 0x00 Success in front), in both directions.
private func expectReturn<C: HCICommand>(
    _: C.Type, _ value: C.ReturnParameters, commandComplete expected: [UInt8],
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let event = HCIEvent.commandComplete(
        CommandComplete(numHCICommandPackets: 1, opcode: C.opcode, returnParameters: ([0x00] + value.encoded())[...]))
    #expect(
        HCIPacket.event(event.packet).encodeH4().hexDump == expected.hexDump,
        "Command Complete for \(C.self)", sourceLocation: sourceLocation)

    guard case .event(let packet) = try HCIPacket(h4: expected[...]),
        case .commandComplete(let complete) = try HCIEvent(packet)
    else {
        Issue.record("Command Complete for \(C.self) did not decode as one", sourceLocation: sourceLocation)
        return
    }
    #expect(complete.opcode == C.opcode, sourceLocation: sourceLocation)
    #expect(complete.returnParameters.first == HCIStatus.success.rawValue, sourceLocation: sourceLocation)
    #expect(
        try C.ReturnParameters(decoding: complete.returnParameters.dropFirst()) == value, sourceLocation: sourceLocation
    )
    // Return parameters after: 1 indicator, 1 code, 1 length, 1 credits, 2 opcode, 1 status.
    try expectFixedSizeRoundTrip(value, Array(expected.dropFirst(7)), sourceLocation: sourceLocation)
}

@Suite("Command codecs")
struct CommandCodecTests {
    @Test("Reset is 01 03 0c 00 and completes with 04 0e 04 01 03 0c 00")
    func reset() throws {
        try expectCommand(Reset(), h4: bytes("01 03 0c 00"))
        try expectReturn(Reset.self, NoParameters(), commandComplete: bytes("04 0e 04 01 03 0c 00"))
        #expect(Reset.completion == .commandComplete)
    }

    @Test("Set_Event_Mask puts each named event on its spec bit (7.3.1)")
    func setEventMask() throws {
        // leHost: bits 4, 7 (byte 0 = 0x90), 11, 15 (byte 1 = 0x88), 25 (byte 3 = 0x02),
        // 47 (byte 5 = 0x80), 61 (byte 7 = 0x20).
        try expectCommand(SetEventMask(mask: .leHost), h4: bytes("01 01 0c 08 90 88 00 02 00 80 00 20"))
        // BlueZ's default mask for an LE-capable controller, as btmon prints it.
        try expectCommand(
            SetEventMask(mask: EventMask(rawValue: 0x3DBF_F807_FFFB_FFFF)),
            h4: bytes("01 01 0c 08 ff ff fb ff 07 f8 bf 3d"))
    }

    @Test("Read_Local_Version_Information and its five fields")
    func readLocalVersionInformation() throws {
        try expectCommand(ReadLocalVersionInformation(), h4: bytes("01 01 10 00"))
        // HCI 5.4 (0x0d) rev 0x1234, LMP 5.4 rev 0x5678, Broadcom (0x000f).
        let value = ReadLocalVersionInformation.ReturnParameters(
            hciVersion: 0x0D, hciSubversion: 0x1234, lmpVersion: 0x0D, companyIdentifier: 0x000F, lmpSubversion: 0x5678)
        try expectReturn(
            ReadLocalVersionInformation.self, value,
            commandComplete: bytes("04 0e 0c 01 01 10 00 0d 34 12 0d 0f 00 78 56"))
    }

    @Test("Read_Local_Supported_Commands returns 64 octets with commands on their spec bits (6.27)")
    func readLocalSupportedCommands() throws {
        try expectCommand(ReadLocalSupportedCommands(), h4: bytes("01 02 10 00"))
        // Disconnect octet 0 bit 5, Reset octet 5 bit 7, LE_Read_Buffer_Size octet 25 bit 1,
        // LE_Read_Buffer_Size_v2 octet 41 bit 5.
        var octets = [UInt8](repeating: 0, count: 64)
        octets[0] = 0x20
        octets[5] = 0x80
        octets[25] = 0x02
        octets[41] = 0x20
        let commands = SupportedCommands.with([
            Disconnect.opcode, Reset.opcode, LEReadBufferSize.opcode,
            LEReadBufferSizeV2.opcode,
        ])
        #expect(commands.octets == octets)
        #expect(commands.count == 4)
        #expect(commands.supports(Reset.self))
        #expect(!commands.supports(ReadBDADDR.self))
        #expect(commands.supports(HCIOpcode(rawValue: 0xFC61)) == nil, "a position the table lacks is unknown")

        let value = ReadLocalSupportedCommands.ReturnParameters(commands: commands)
        try expectReturn(
            ReadLocalSupportedCommands.self, value,
            commandComplete: bytes("04 0e 44 01 02 10 00") + octets)
    }

    @Test("A short supported-commands mask is padded to 64 octets")
    func supportedCommandsPadding() {
        let commands = SupportedCommands(octets: [0x20])
        #expect(commands.octets.count == 64)
        #expect(commands.supports(Disconnect.opcode) == true)
        #expect(commands.supports(Reset.opcode) == false)
    }

    @Test("Read_Local_Supported_Features: LE Supported (Controller) is bit 38")
    func readLocalSupportedFeatures() throws {
        try expectCommand(ReadLocalSupportedFeatures(), h4: bytes("01 03 10 00"))
        let value = ReadLocalSupportedFeatures.ReturnParameters(features: [.leSupportedController, .brEdrNotSupported])
        try expectReturn(
            ReadLocalSupportedFeatures.self, value,
            commandComplete: bytes("04 0e 0c 01 03 10 00 00 00 00 00 60 00 00 00"))
    }

    @Test("Read_Buffer_Size: 2-byte ACL length, 1-byte SCO length, two 2-byte counts")
    func readBufferSize() throws {
        try expectCommand(ReadBufferSize(), h4: bytes("01 05 10 00"))
        let value = ReadBufferSize.ReturnParameters(
            aclDataPacketLength: 1021, synchronousDataPacketLength: 0x40,
            totalNumACLDataPackets: 8, totalNumSynchronousDataPackets: 0)
        try expectReturn(
            ReadBufferSize.self, value, commandComplete: bytes("04 0e 0b 01 05 10 00 fd 03 40 08 00 00 00"))
    }

    @Test("Read_BD_ADDR returns the address least significant byte first")
    func readBDADDR() throws {
        try expectCommand(ReadBDADDR(), h4: bytes("01 09 10 00"))
        let address = try #require(BluetoothAddress("00:1A:7D:DA:71:13"))
        try expectReturn(
            ReadBDADDR.self, ReadBDADDR.ReturnParameters(address: address),
            commandComplete: bytes("04 0e 0a 01 09 10 00 13 71 da 7d 1a 00"))
    }

    @Test("Disconnect: handle and reason, answered by Command Status")
    func disconnect() throws {
        try expectCommand(Disconnect(handle: 0x0040), h4: bytes("01 06 04 03 40 00 13"))
        try expectCommand(
            Disconnect(handle: 0x0EFF, reason: .connectionTerminatedByLocalHost),
            h4: bytes("01 06 04 03 ff 0e 16"))
        #expect(Disconnect.completion == .commandStatus)
        #expect(Disconnect(handle: 1).reason == .remoteUserTerminatedConnection)
    }

    @Test("LE_Set_Event_Mask: the default mask enables subevents 0x01-0x05")
    func leSetEventMask() throws {
        try expectCommand(LESetEventMask(mask: .default), h4: bytes("01 01 20 08 1f 00 00 00 00 00 00 00"))
        // Subevent N is bit N-1: 0x14 Channel Selection Algorithm is bit 19 (byte 2 = 0x08).
        try expectCommand(LESetEventMask(mask: .subevent(0x14)), h4: bytes("01 01 20 08 00 00 08 00 00 00 00 00"))
    }

    @Test("LE_Read_Buffer_Size v1: 1b 00 10 is 27 bytes × 16 buffers")
    func leReadBufferSize() throws {
        try expectCommand(LEReadBufferSize(), h4: bytes("01 02 20 00"))
        let value = LEReadBufferSize.ReturnParameters(leACLDataPacketLength: 27, totalNumLEACLDataPackets: 16)
        try expectReturn(LEReadBufferSize.self, value, commandComplete: bytes("04 0e 07 01 02 20 00 1b 00 10"))
        let decoded = try LEReadBufferSize.ReturnParameters(decoding: bytes("1b 00 10")[...])
        #expect(decoded.leACLDataPacketLength == 27)
        #expect(decoded.totalNumLEACLDataPackets == 16)
    }

    @Test("LE_Read_Buffer_Size v2 adds the ISO buffers")
    func leReadBufferSizeV2() throws {
        try expectCommand(LEReadBufferSizeV2(), h4: bytes("01 60 20 00"))
        let value = LEReadBufferSizeV2.ReturnParameters(
            leACLDataPacketLength: 251, totalNumLEACLDataPackets: 15,
            isoDataPacketLength: 0x03C0, totalNumISODataPackets: 6)
        try expectReturn(
            LEReadBufferSizeV2.self, value, commandComplete: bytes("04 0e 0a 01 60 20 00 fb 00 0f c0 03 06"))
    }

    @Test("LE_Read_Local_Supported_Features: eight octets, bit 0 is LE Encryption")
    func leReadLocalSupportedFeatures() throws {
        try expectCommand(LEReadLocalSupportedFeatures(), h4: bytes("01 03 20 00"))
        // Encryption (0), Data Packet Length Extension (5), 2M PHY (8), Extended Advertising (12).
        let value = LEReadLocalSupportedFeatures.ReturnParameters(
            features: [.encryption, .dataPacketLengthExtension, .twoMegabitPHY, .extendedAdvertising])
        try expectReturn(
            LEReadLocalSupportedFeatures.self, value,
            commandComplete: bytes("04 0e 0c 01 03 20 00 21 11 00 00 00 00 00 00"))
        #expect(
            value.features.names == [
                "LE Encryption", "LE Data Packet Length Extension", "LE 2M PHY",
                "LE Extended Advertising",
            ])
        #expect(LEFeatures(rawValue: 1 << 63).names == ["bit 63"])
    }

    @Test("LE_Read_Maximum_Data_Length: four 2-byte fields")
    func leReadMaximumDataLength() throws {
        try expectCommand(LEReadMaximumDataLength(), h4: bytes("01 2f 20 00"))
        let value = LEReadMaximumDataLength.ReturnParameters(
            supportedMaxTxOctets: 251, supportedMaxTxTime: 2120,
            supportedMaxRxOctets: 251, supportedMaxRxTime: 17040)
        try expectReturn(
            LEReadMaximumDataLength.self, value,
            commandComplete: bytes("04 0e 0c 01 2f 20 00 fb 00 48 08 fb 00 90 42"))
    }

    @Test("LE_Remote_Connection_Parameter_Request_Reply and Negative_Reply (7.8.31, 7.8.32)")
    func leRemoteConnectionParameterRequestReplies() throws {
        // Handle 0x0040, interval 0x0006-0x0C80, latency 0x01F3, timeout 0x0C80, CE 0x0002-0x0010.
        let reply = LERemoteConnectionParameterRequestReply(
            handle: 0x0040,
            parameters: .init(intervalMin: 6, intervalMax: 3200, latency: 499, supervisionTimeout: 3200),
            minCELength: 2, maxCELength: 16)
        try expectCommand(reply, h4: bytes("01 20 20 0e 40 00 06 00 80 0c f3 01 80 0c 02 00 10 00"))
        try expectReturn(
            LERemoteConnectionParameterRequestReply.self, .init(handle: 0x0040),
            commandComplete: bytes("04 0e 06 01 20 20 00 40 00"))
        #expect(LERemoteConnectionParameterRequestReply.completion == .commandComplete)

        try expectCommand(
            LERemoteConnectionParameterRequestNegativeReply(handle: 0x0EFF), h4: bytes("01 21 20 03 ff 0e 3b"))
        try expectCommand(
            LERemoteConnectionParameterRequestNegativeReply(handle: 1, reason: .unsupportedRemoteFeature),
            h4: bytes("01 21 20 03 01 00 1a"))
        try expectReturn(
            LERemoteConnectionParameterRequestNegativeReply.self, .init(handle: 0x0EFF),
            commandComplete: bytes("04 0e 06 01 21 20 00 ff 0e"))
        #expect(LERemoteConnectionParameterRequestNegativeReply.completion == .commandComplete)
    }

    @Test("A command that takes no parameters rejects any")
    func noParameters() throws {
        try expectFixedSizeRoundTrip(NoParameters(), [])
        #expect(throws: DecodingError.trailingBytes(2)) { try Reset(decoding: bytes("00 00")[...]) }
    }

    @Test("The LE central event mask follows the controller's features")
    func leCentralEventMask() {
        #expect(LEEventMask.central(for: []) == .default)
        let all = LEEventMask.central(for: [
            .connectionParametersRequest, .dataPacketLengthExtension, .llPrivacy,
            .twoMegabitPHY, .extendedAdvertising, .channelSelectionAlgorithm2,
        ])
        // Subevents 1-7, 0x0A, 0x0C, 0x0D, 0x11, 0x14 → bits 0-6, 9, 11, 12, 16, 19.
        #expect(all.rawValue == 0b1001_0001_1010_0111_1111)
        #expect(LEEventMask.subevent(0x0A).names == ["LE_Enhanced_Connection_Complete"])
        // Remote Connection Parameter Request (0x06) only when the controller can run the procedure.
        #expect(LEEventMask.central(for: [.connectionParametersRequest]).contains(.subevent(0x06)))
        #expect(!LEEventMask.central(for: [.dataPacketLengthExtension]).contains(.subevent(0x06)))
        #expect(LEEventMask.subevent(0x06).names == ["LE_Remote_Connection_Parameter_Request"])
    }
}

/// The advertising commands (Core Vol 4, Part E, 7.8.4–7.8.9, 7.8.52–7.8.60), each against
/// its bytes typed from the spec's parameter tables.
@Suite("Advertising command codecs")
struct AdvertisingCommandCodecTests {
    @Test("LE_Set_Advertising_Parameters: two intervals, type, addresses, channel map, policy (7.8.5)")
    func legacyParameters() throws {
        try expectCommand(
            LESetAdvertisingParameters(
                intervalMin: 0x0020, intervalMax: 0x4000, advertisingType: .scannableUndirected, ownAddressType: 1),
            h4: bytes("01 06 20 0f 20 00 00 40 02 01 00 00 00 00 00 00 00 07 00"))
        #expect(LESetAdvertisingParameters.completion == .commandComplete)
    }

    @Test("LE_Set_Advertising_Data and LE_Set_Scan_Response_Data: a length, then 31 octets zero-padded (7.8.7, 7.8.8)")
    func legacyData() throws {
        try expectCommand(
            LESetAdvertisingData(data: [0x02, 0x01, 0x06]),
            h4: bytes("01 08 20 20 03 02 01 06") + Array(repeating: 0, count: 28))
        try expectCommand(LESetScanResponseData(data: []), h4: bytes("01 09 20 20 00") + Array(repeating: 0, count: 31))
        // A length past 31 is refused.
        #expect(throws: DecodingError.self) {
            try LESetAdvertisingData(decoding: ([0x20] + Array(repeating: 0, count: 31))[...])
        }
    }

    @Test("LE_Set_Advertising_Enable, LE_Set_Random_Address, LE_Read_Advertising_Physical_Channel_Tx_Power")
    func legacyOthers() throws {
        try expectCommand(LESetAdvertisingEnable(enable: true), h4: bytes("01 0a 20 01 01"))
        try expectCommand(
            LESetRandomAddress(address: BluetoothAddress("C1:02:03:04:05:06")!),
            h4: bytes("01 05 20 06 06 05 04 03 02 c1"))
        try expectCommand(LEReadAdvertisingPhysicalChannelTxPower(), h4: bytes("01 07 20 00"))
        try expectReturn(
            LEReadAdvertisingPhysicalChannelTxPower.self, .init(txPowerLevel: -4),
            commandComplete: bytes("04 0e 05 01 07 20 00 fc"))
    }

    @Test("LE_Set_Extended_Advertising_Parameters: 3-octet intervals, TX power, PHYs, SID (7.8.53)")
    func extendedParameters() throws {
        try expectCommand(
            LESetExtendedAdvertisingParameters(
                advertisingHandle: 1, eventProperties: [.connectable, .scannable, .legacy],
                intervalMin: 0xA0, intervalMax: 0x0140, ownAddressType: 1, txPower: 0x7F,
                secondaryPHY: 1, sid: 2),
            h4: bytes("01 36 20 19 01 13 00 a0 00 00 40 01 00 07 01 00 00 00 00 00 00 00 00 7f 01 00 01 02 00"))
        try expectReturn(
            LESetExtendedAdvertisingParameters.self, .init(selectedTxPower: -7),
            commandComplete: bytes("04 0e 05 01 36 20 00 f9"))
    }

    @Test("LE_Set_Extended_Advertising_Data, Scan_Response_Data, Enable, and the set commands (7.8.54–7.8.60)")
    func extendedOthers() throws {
        try expectCommand(
            LESetExtendedAdvertisingData(advertisingHandle: 0, operation: .complete, data: [0x02, 0x01, 0x06]),
            h4: bytes("01 37 20 07 00 03 01 03 02 01 06"))
        try expectCommand(
            LESetExtendedScanResponseData(
                advertisingHandle: 2, operation: .firstFragment, fragmentPreference: 0, data: [0x01, 0xFF]),
            h4: bytes("01 38 20 06 02 01 00 02 01 ff"))
        try expectCommand(
            LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 1, duration: 0x01F4)]),
            h4: bytes("01 39 20 06 01 01 01 f4 01 00"))
        try expectCommand(LESetExtendedAdvertisingEnable(enable: false, sets: []), h4: bytes("01 39 20 02 00 00"))
        try expectCommand(
            LESetAdvertisingSetRandomAddress(advertisingHandle: 3, address: BluetoothAddress("C1:02:03:04:05:06")!),
            h4: bytes("01 35 20 07 03 06 05 04 03 02 c1"))
        try expectCommand(LEReadMaximumAdvertisingDataLength(), h4: bytes("01 3a 20 00"))
        try expectReturn(
            LEReadMaximumAdvertisingDataLength.self, .init(maximumLength: 0x0672),
            commandComplete: bytes("04 0e 06 01 3a 20 00 72 06"))
        try expectCommand(LEReadNumberOfSupportedAdvertisingSets(), h4: bytes("01 3b 20 00"))
        try expectCommand(LERemoveAdvertisingSet(advertisingHandle: 1), h4: bytes("01 3c 20 01 01"))
        try expectCommand(LEClearAdvertisingSets(), h4: bytes("01 3d 20 00"))
    }

    @Test("Advertising data longer than one command goes in 251-octet fragments")
    func fragments() {
        let data = Array(repeating: UInt8(1), count: 600)
        let parts = AdvertisingDataOperation.fragments(of: data)
        #expect(parts.map(\.0) == [.firstFragment, .intermediateFragment, .lastFragment])
        #expect(parts.map(\.1.count) == [251, 251, 98])
        #expect(AdvertisingDataOperation.fragments(of: [1, 2]).map(\.0) == [.complete])
    }

    @Test("The advertising commands sit on their supported-commands bits (6.27)")
    func supportedBits() {
        let mask = SupportedCommands(
            octets: Array(repeating: 0, count: 25) + [0xE0, 0x03] + Array(repeating: 0, count: 9) + [0xFE, 0x03])
        for command in [
            LESetAdvertisingParameters.opcode, LEReadAdvertisingPhysicalChannelTxPower.opcode,
            LESetAdvertisingData.opcode,
            LESetScanResponseData.opcode, LESetAdvertisingEnable.opcode, LESetAdvertisingSetRandomAddress.opcode,
            LESetExtendedAdvertisingParameters.opcode, LESetExtendedAdvertisingData.opcode,
            LESetExtendedScanResponseData.opcode,
            LESetExtendedAdvertisingEnable.opcode, LEReadMaximumAdvertisingDataLength.opcode,
            LEReadNumberOfSupportedAdvertisingSets.opcode, LERemoveAdvertisingSet.opcode, LEClearAdvertisingSets.opcode,
        ] {
            #expect(mask.supports(command) == true, "\(command.name)")
        }
        #expect(mask.supports(LESetRandomAddress.opcode) == false)
    }
}
