import BluetoothCore

/// Bringing a controller up (Core Vol 4, Part E, 7): Reset, then what the host must know of
/// it (version, supported commands and features, address, buffer sizes) and the event masks
/// it must set, each command answered before the next goes.
extension HCIController {
    /// Runs the bring-up sequence and returns what it learned.
    func bringUp() async throws -> ControllerInfo {
        try await send(Reset())
        let version = try await send(ReadLocalVersionInformation())
        // A 1.1-era controller lacks the mask: assume what we need and let each command
        // answer for itself.
        let commands =
            try await ifKnown(ReadLocalSupportedCommands())?.commands
            ?? SupportedCommands(octets: Array(repeating: 0xFF, count: 64))
        let lmpFeatures = try await send(ReadLocalSupportedFeatures()).features
        guard let leFeatures = try await ifKnown(LEReadLocalSupportedFeatures())?.features else {
            throw HCIError.unsupported("Bluetooth Low Energy (LE Read Local Supported Features is unknown to it)")
        }
        let address = try await send(ReadBDADDR()).address
        let eventMask = EventMask.leHost
        try await send(SetEventMask(mask: eventMask))
        var leEventMask = LEEventMask.central(for: leFeatures)
        let leMaskResult = await sendForResult(LESetEventMask(mask: leEventMask))
        if case let .failure(.commandFailed(opcode, status)) = leMaskResult {
            // Some controllers reject bits they do not know; the default mask is always valid.
            logger.log(
                .warning,
                "\(opcode.name) with \(hex(leEventMask.rawValue, digits: 16)) rejected (\(status)); using the default mask"
            )
            leEventMask = .default
            try await send(LESetEventMask(mask: leEventMask))
        } else {
            _ = try leMaskResult.get()
        }
        let (aclBuffers, isoBuffers) = try await readBufferSizes(commands)
        var maximumDataLength: LEReadMaximumDataLength.ReturnParameters?
        if commands.supports(LEReadMaximumDataLength.self), leFeatures.contains(.dataPacketLengthExtension) {
            maximumDataLength = try await send(LEReadMaximumDataLength())
        }
        return ControllerInfo(
            version: version, address: address, supportedCommands: commands, lmpFeatures: lmpFeatures,
            leFeatures: leFeatures, aclBuffers: aclBuffers, isoBuffers: isoBuffers,
            maximumDataLength: maximumDataLength, eventMask: eventMask, leEventMask: leEventMask)
    }

    /// Sends `command`; `nil` when the controller answers Unknown HCI Command.
    private func ifKnown<C: HCICommand>(_ command: C) async throws(HCIError) -> C.ReturnParameters? {
        switch await sendForResult(command) {
        case .success(let value): return value
        case .failure(.commandFailed(_, .unknownHCICommand)): return nil
        case .failure(let error): throw error
        }
    }

    private func sendForResult<C: HCICommand>(_ command: C) async -> Result<C.ReturnParameters, HCIError> {
        do { return .success(try await send(command)) } catch { return .failure(error) }
    }

    /// LE Read Buffer Size v2, else v1; a zero LE buffer means LE shares the BR/EDR
    /// buffers of Read Buffer Size.
    private func readBufferSizes(_ commands: SupportedCommands) async throws -> (
        ControllerInfo.BufferSize, ControllerInfo.BufferSize?
    ) {
        var le: ControllerInfo.BufferSize?
        var iso: ControllerInfo.BufferSize?
        if commands.supports(LEReadBufferSizeV2.opcode) == true {
            let v2 = try await send(LEReadBufferSizeV2())
            le = .init(
                length: Int(v2.leACLDataPacketLength), count: Int(v2.totalNumLEACLDataPackets),
                source: LEReadBufferSizeV2.opcode)
            if v2.totalNumISODataPackets > 0 {
                iso = .init(
                    length: Int(v2.isoDataPacketLength), count: Int(v2.totalNumISODataPackets),
                    source: LEReadBufferSizeV2.opcode)
            }
        } else {
            let v1 = try await send(LEReadBufferSize())
            le = .init(
                length: Int(v1.leACLDataPacketLength), count: Int(v1.totalNumLEACLDataPackets),
                source: LEReadBufferSize.opcode)
        }
        if let le, le.length > 0, le.count > 0 { return (le, iso) }
        let shared = try await send(ReadBufferSize())
        guard shared.aclDataPacketLength > 0, shared.totalNumACLDataPackets > 0 else {
            throw HCIError.unsupported("ACL data: it reports no ACL buffers")
        }
        return (
            .init(
                length: Int(shared.aclDataPacketLength), count: Int(shared.totalNumACLDataPackets),
                source: ReadBufferSize.opcode), iso
        )
    }
}
