import FoundationEssentials
import HCI
import L2CAP

@_exported import class L2CAP.CreditBasedChannel
@_exported import enum L2CAP.CreditBasedChannelError
@_exported import struct L2CAP.CreditBasedChannelParameters
@_exported import struct L2CAP.CreditBasedConnectionResult
@_exported import struct L2CAP.PSM

/// An L2CAP connection-oriented channel to a peripheral (iOS's `CBL2CAPChannel`): an LE
/// credit based channel with async `CreditBasedChannel.send(_:)` and an `AsyncSequence`
/// of received SDUs, `CreditBasedChannel.sdus`. Credits, segmentation and reassembly are
/// the stack's; `CreditBasedChannel.disconnect()` closes it.
public typealias L2CAPChannel = CreditBasedChannel

extension Bluejay {
    /// Opens an L2CAP LE credit based channel to `psm` on the connected peripheral, as
    /// `CBPeripheral.openL2CAPChannel(_:)` does on iOS. `parameters` are what this end
    /// receives (MTU, MPS, initial credits). A PSM the peripheral refuses throws
    /// `CreditBasedChannelError.refused` with the result by name (`SPSM not supported
    /// (0x0002)`); a refusal for want of security pairs (or encrypts with the bond) and asks
    /// once more, as a read does.
    public func openL2CAPChannel(psm: UInt16, parameters: CreditBasedChannelParameters = .init()) async throws
        -> L2CAPChannel
    {
        guard let host else { throw BluejayError.bluetoothUnavailable }
        guard let connection, followed?.link.state == .connected else { throw BluejayError.notConnected }
        return try await host.openL2CAPChannel(psm: psm, on: connection.handle, parameters: parameters)
    }
}

extension Peripheral {
    /// Opens an L2CAP LE credit based channel to `psm` on this peripheral's link, as
    /// ``Bluejay/openL2CAPChannel(psm:parameters:)`` does for Bluejay's one peripheral. The
    /// channel ends with the link (a reconnection does not reopen it).
    public func openL2CAPChannel(psm: UInt16, parameters: CreditBasedChannelParameters = .init()) async throws
        -> L2CAPChannel
    {
        guard let handle, state == .connected else { throw BluejayError.notConnected }
        return try await host.openL2CAPChannel(psm: psm, on: handle, parameters: parameters)
    }
}

extension BluetoothHost {
    /// Opens an LE credit based channel on link `handle`; a refusal for want of security
    /// secures the link through the Security Manager and asks once more.
    func openL2CAPChannel(psm: UInt16, on handle: ConnectionHandle, parameters: CreditBasedChannelParameters)
        async throws(CreditBasedChannelError) -> L2CAPChannel
    {
        let channels = channels.creditBased
        if channels.onSecurityRequired == nil {
            channels.onSecurityRequired = { [weak security = self.security] handle, result in
                await security?.securityRequired(handle, for: result) ?? false
            }
        }
        return try await channels.open(psm: PSM(rawValue: psm), on: handle, parameters: parameters)
    }
}

extension CreditBasedChannel {
    /// Sends `data` as one SDU (see `CreditBasedChannel.send(_:)`).
    public func send(data: Data) async throws(CreditBasedChannelError) { try await send([UInt8](data)) }
}
