import BluetoothCore
import HCI

/// A C-frame of the BR/EDR signaling channel (CID 0x0001): one or more signaling commands
/// back to back. Core Vol 3, Part A, 4 allows several commands in one C-frame on CID
/// 0x0001 (on the LE channel, 0x0005, only one), so every one of them must be walked.
///
/// A command that does not fit what is left of the frame ends the walk: the commands before
/// it are kept, and it is reported as ``damaged`` with its code when at least that arrived
/// (a trace names it, as Wireshark does, before flagging it).
public struct ControlFrame: Sendable, Equatable {
    /// A command cut short by the end of the frame.
    public struct DamagedCommand: Sendable, Equatable {
        /// Its code, when the frame holds at least that octet.
        public var code: SignalingCode?
        /// What is wrong: fewer than the 4 header octets, or less data than its length says.
        public var error: DecodingError
    }

    /// The whole commands, in frame order.
    public var commands: [SignalingCommand]
    /// The command after the last whole one, when the frame ends inside it.
    public var damaged: DamagedCommand?

    /// Walks every command of a C-frame's payload.
    public init(payload: ArraySlice<UInt8>) {
        var reader = ByteReader(payload)
        commands = []
        damaged = nil
        while !reader.isAtEnd {
            let code = reader.remaining.first.map { SignalingCode(rawValue: $0) }
            do throws(DecodingError) {
                commands.append(try Self.command(from: &reader))
            } catch {
                damaged = DamagedCommand(code: code, error: error)
                return
            }
        }
    }

    /// Reads one command, header and data.
    private static func command(from reader: inout ByteReader) throws(DecodingError) -> SignalingCommand {
        // The header whole, or the command is reported as short of its header.
        guard reader.count >= 4 else { throw .truncated(needed: 4, available: reader.count) }
        return try SignalingCommand(from: &reader)
    }
}
