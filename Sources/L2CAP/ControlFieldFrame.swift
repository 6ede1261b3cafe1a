import BluetoothCore
import HCI

/// A frame of a BR/EDR channel in a mode other than basic (Enhanced Retransmission,
/// Streaming, or the legacy Retransmission and Flow Control modes): after the basic header,
/// a control field, then for an I-frame an optional SDU length and the information, and a
/// Frame Check Sequence unless both sides turned it off (Core Vol 3, Part A, 3.3).
///
/// Only the control field's layout depends on configuration: the standard field is 16 bits,
/// the extended one (chosen by the Extended Window Size option) 32 bits.
public enum ControlFieldFrame: Sendable, Equatable {
    /// An I-frame: a segment of an SDU.
    case information(InformationFrame)
    /// An S-frame: acknowledgement and flow control, no data.
    case supervisory(SupervisoryFrame)

    /// An I-frame's fields.
    public struct InformationFrame: Sendable, Equatable {
        /// Its sequence number.
        public var txSeq: UInt16
        /// The next sequence number the sender expects (acknowledges everything before).
        public var reqSeq: UInt16
        /// The F-bit (the R-bit in the legacy modes).
        public var final: Bool
        /// Which part of an SDU it carries.
        public var sar: SegmentationAndReassembly
        /// The whole SDU's length, present on a start segment only.
        public var sduLength: UInt16?
        /// The segment of the SDU.
        public var information: ArraySlice<UInt8>
    }

    /// An S-frame's fields.
    public struct SupervisoryFrame: Sendable, Equatable {
        /// RR, REJ, RNR or SREJ.
        public var function: SupervisoryFunction
        /// The next sequence number the sender expects.
        public var reqSeq: UInt16
        /// The P-bit.
        public var poll: Bool
        /// The F-bit.
        public var final: Bool
    }

    /// The SAR field of an I-frame; printed by its case's name (`unsegmented`, `start`, …).
    public enum SegmentationAndReassembly: UInt8, Sendable, Equatable {
        /// 0b00: a whole SDU.
        case unsegmented = 0
        /// 0b01: the first segment; an SDU length field precedes the information.
        case start = 1
        /// 0b10: the last segment.
        case end = 2
        /// 0b11: a middle segment.
        case continuation = 3
    }

    /// The S field of an S-frame.
    public enum SupervisoryFunction: UInt8, Sendable, Equatable, CustomStringConvertible {
        /// 0b00 Receiver Ready.
        case receiverReady = 0
        /// 0b01 Reject.
        case reject = 1
        /// 0b10 Receiver Not Ready.
        case receiverNotReady = 2
        /// 0b11 Selective Reject.
        case selectiveReject = 3

        /// `RR`, `REJ`, `RNR`, `SREJ`, as the specification abbreviates them.
        public var description: String {
            switch self {
            case .receiverReady: "RR"
            case .reject: "REJ"
            case .receiverNotReady: "RNR"
            case .selectiveReject: "SREJ"
            }
        }
    }

    /// Decodes `frame`'s payload and checks its FCS. `fcsValid` is nil when the channel has
    /// none; a receiver would drop a frame whose FCS does not match, a trace shows the frame
    /// and says so.
    public static func decode(_ frame: BasicFrame, extendedControl: Bool, hasFCS: Bool)
        throws(DecodingError) -> (frame: ControlFieldFrame, fcsValid: Bool?)
    {
        var body = frame.payload
        var fcsValid: Bool?
        if hasFCS {
            guard body.count >= 2 else { throw .truncated(needed: 2, available: body.count) }
            let fcsStart = body.endIndex - 2
            let received = UInt16(body[fcsStart]) | UInt16(body[fcsStart + 1]) << 8
            body = body[..<fcsStart]
            var header = ByteWriter(capacity: 4)
            header.write(UInt16(frame.payload.count))
            header.write(frame.channel.rawValue)
            fcsValid = FrameCheckSequence.compute(header.bytes + body) == received
        }
        var reader = ByteReader(body)
        let control = extendedControl ? try reader.readUInt32() : UInt32(try reader.readUInt16())
        let isSupervisory = control & 1 == 1
        if isSupervisory {
            let supervisory =
                extendedControl
                ? SupervisoryFrame(
                    function: SupervisoryFunction(rawValue: UInt8(control >> 16 & 3))!,
                    reqSeq: UInt16(control >> 2 & 0x3FFF),
                    poll: control >> 18 & 1 == 1, final: control >> 1 & 1 == 1)
                : SupervisoryFrame(
                    function: SupervisoryFunction(rawValue: UInt8(control >> 2 & 3))!,
                    reqSeq: UInt16(control >> 8 & 0x3F),
                    poll: control >> 4 & 1 == 1, final: control >> 7 & 1 == 1)
            return (.supervisory(supervisory), fcsValid)
        }
        let sar =
            extendedControl
            ? SegmentationAndReassembly(rawValue: UInt8(control >> 16 & 3))!
            : SegmentationAndReassembly(rawValue: UInt8(control >> 14 & 3))!
        let sduLength = sar == .start ? try reader.readUInt16() : nil
        let information = InformationFrame(
            txSeq: extendedControl ? UInt16(control >> 18 & 0x3FFF) : UInt16(control >> 1 & 0x3F),
            reqSeq: extendedControl ? UInt16(control >> 2 & 0x3FFF) : UInt16(control >> 8 & 0x3F),
            final: extendedControl ? control >> 1 & 1 == 1 : control >> 7 & 1 == 1,
            sar: sar, sduLength: sduLength, information: reader.readRest())
        return (.information(information), fcsValid)
    }
}

/// The Frame Check Sequence of Core Vol 3, Part A, 3.3.5: a CRC-16 with generator
/// D^16 + D^15 + D^2 + 1 and initial value zero, over the basic header, the control field,
/// the SDU length and the information.
public enum FrameCheckSequence {
    /// The FCS of `bytes`.
    public static func compute(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte)
            // The generator bit-reversed (0xA001), as the FCS is sent least significant bit first.
            for _ in 0..<8 { crc = crc & 1 == 1 ? crc >> 1 ^ 0xA001 : crc >> 1 }
        }
        return crc
    }
}
