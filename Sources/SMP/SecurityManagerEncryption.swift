import BluetoothCore
import BluetoothCrypto
import HCI
import L2CAP
import Storage

/// Encrypting a link with a key, and the controller's word on it.
extension SecurityManager {
    /// LE Enable Encryption, then Encryption Change (or Key Refresh Complete) for `handle`.
    ///
    /// The LTK leaves `SecretBytes` here: the HCI command and its packet hold copies that
    /// nothing zeroes.
    func startEncryption(_ handle: ConnectionHandle, ltk: SecretBytes, ediv: UInt16, random: [UInt8])
        async throws(SMPError)
    {
        guard links[handle, default: LinkRecord()].encryption == nil else {
            throw .protocolError("encryption already starting")
        }
        // Registered before the command: its Command Status and the event may come in one read.
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, SMPError>, Never>) in
            links[handle, default: LinkRecord()].encryption = continuation
            Task { @BluetoothActor [weak self] in
                do throws(HCIError) {
                    _ = try await self?.controller.send(
                        LEEnableEncryption(handle: handle, random: random, ediv: ediv, longTermKey: ltk.bytes))
                } catch {
                    self?.links[handle]?.encryption?.resume(returning: .failure(Self.encryptionError(error)))
                    self?.links[handle]?.encryption = nil
                }
            }
        }
        try result.get()
    }

    /// A refused LE Enable Encryption, by status.
    static func encryptionError(_ error: HCIError) -> SMPError {
        if case let .commandFailed(_, status) = error { return .encryptionFailed(status) }
        return .hci(error)
    }

    func encryptionEnded(_ handle: ConnectionHandle, _ status: HCIStatus, enabled: Bool) {
        guard let waiter = links[handle]?.encryption else {
            if !enabled {
                links[handle]?.state = .unencrypted
                links[handle]?.storedKey = false
            } else if status.isSuccess, links[handle]?.storedKey == true, let bond = bond(for: handle) {
                onEncryptedWithBond?(handle, bond)
            }
            return
        }
        links[handle]?.encryption = nil
        if status.isSuccess, enabled {
            if case .unencrypted = links[handle]?.state { links[handle]?.state = .encrypted(authenticated: false) }
            waiter.resume(returning: .success(()))
        } else {
            waiter.resume(returning: .failure(.encryptionFailed(status.isSuccess ? .pinOrKeyMissing : status)))
        }
    }
}
