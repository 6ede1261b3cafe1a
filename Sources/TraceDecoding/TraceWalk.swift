import BluetoothCore
import HCI
import L2CAP

/// The one walk through a recording every trace tool takes: records decoded to HCI packets,
/// the links connection events announce and disconnections end, ACL reassembled per handle
/// and direction into L2CAP PDUs, and the dynamic channels signaling opens on each link.
/// ``TraceSummary``, ``TraceFormatter``, ``TraceCheck`` and the reconstruction behind
/// `mock:` each take its steps and keep only what they make of them, so they agree on
/// which handles are links, where a PDU ends and what a channel carries.
///
/// Which handles are *followed* (signaling read, channels tracked): the links announced so
/// far, and the handles given at creation (nil: every handle). A capture started
/// mid-connection announces nothing, so everything is followed; in a capture that
/// announces its links, ACL on another handle is often vendor data (Qualcomm's 0x0EDC),
/// framed as L2CAP but not read as signaling.
///
/// Everything the walk knows of a handle is one record, made when the handle first shows
/// and dropped when its link ends or a new one takes the handle: its reassembly in each
/// direction, its channels, and the link's serial number, which names that link (not the
/// handle, which a later link may take) to a walk's user that keeps something of its own
/// per link (the reconstruction behind `mock:`).
package struct TraceWalk: Sendable {
    /// What one record is, after the walk has taken it.
    package enum Step: Sendable {
        /// A btsnoop monitor record (no HCI packet).
        case monitor(opcode: UInt16, index: UInt16, data: ArraySlice<UInt8>)
        /// A record whose packet type byte is no HCI packet type.
        case unknownType(UInt8, ArraySlice<UInt8>)
        /// An HCI packet that does not decode.
        case malformed(H4PacketType, ArraySlice<UInt8>, DecodingError)
        /// A decoded packet; an ACL packet with what reassembly made of it.
        case packet(HCIPacket, acl: ACLStep?)
    }

    /// An ACL packet's share of a PDU.
    package struct ACLStep: Sendable {
        /// The whole PDU this packet completed, if it did.
        package var frame: BasicFrame?
        /// What went wrong with reassembly on this packet (an abandoned PDU, a fragment
        /// longer than declared, …).
        package var problem: ReassemblyProblem?
        /// Whether it travelled from the controller to the host.
        package var received: Bool
        /// Whether its handle is followed (see ``TraceWalk``).
        package var followed: Bool
        /// What the PDU carries, by its channel, when it is whole and its handle followed.
        var content: ChannelTracker.Content?
    }

    /// What the walk keeps of one handle.
    private struct LinkRecord: Sendable {
        /// The link's number: the records made before it.
        let serial: Int
        /// PDUs under way from the controller to the host, and from the host.
        var received = Reassembler(), sent = Reassembler()
        var channels: ChannelTracker
    }

    private var links: [ConnectionHandle: LinkRecord] = [:]
    private var recordsMade = 0
    /// Links announced and not ended.
    private(set) package var liveHandles: Set<ConnectionHandle> = []
    /// Every handle a connection event has announced so far.
    private(set) package var announcedHandles: Set<ConnectionHandle> = []
    private let alsoFollowed: Set<ConnectionHandle>?

    /// A walk that follows, besides the links it sees announced, `followedHandles` (every
    /// handle when nil).
    package init(followedHandles: Set<ConnectionHandle>?) {
        alsoFollowed = followedHandles
    }

    /// A walk of `file` that follows what the trace tools follow there: the handles its
    /// connection events announce, or every handle when it announces none.
    package init(file: BTSnoopFile) {
        self.init(followedHandles: TraceCheck.announcedHandles(file))
    }

    /// Whether frames of `handle` are read for signaling and channels.
    package func isFollowed(_ handle: ConnectionHandle) -> Bool {
        liveHandles.contains(handle) || alsoFollowed.map { $0.contains(handle) } ?? true
    }

    /// The kind of the link on `handle`, when its announcement or its channels said.
    package func linkType(_ handle: ConnectionHandle) -> LinkType? { links[handle]?.channels.type }

    /// The serial number of the link on `handle` (0 for the first record the walk made, and
    /// so on), or nil when the walk has no record of the handle.
    package func serial(_ handle: ConnectionHandle) -> Int? { links[handle]?.serial }

    /// The serial number of the link on `handle`, its record made now if it has none.
    package mutating func makeSerial(_ handle: ConnectionHandle) -> Int {
        if let serial = links[handle]?.serial { return serial }
        links[handle] = newRecord()
        return recordsMade - 1
    }

    /// A record of a link of kind `type` (nil: unknown until its signaling says).
    private mutating func newRecord(type: LinkType? = nil) -> LinkRecord {
        defer { recordsMade += 1 }
        return LinkRecord(serial: recordsMade, channels: ChannelTracker(type: type))
    }

    /// Takes `handle` for an announced link without its event (a packet shown on its own).
    package mutating func assumeAnnounced(_ handle: ConnectionHandle) {
        liveHandles.insert(handle)
        announcedHandles.insert(handle)
    }

    /// Takes one record.
    package mutating func step(_ record: BTSnoopRecord) -> Step {
        switch record.content {
        case let .monitor(opcode, index, data):
            return .monitor(opcode: opcode, index: index, data: data)
        case let .unknownType(byte, data):
            return .unknownType(byte, data)
        case let .packet(type, body):
            let packet: HCIPacket
            do { packet = try HCIPacket(type: type, body: body) } catch {
                return .malformed(type, body, error)
            }
            return step(packet, received: record.direction == .received)
        }
    }

    /// Takes one decoded packet travelling the way `received` says.
    package mutating func step(_ packet: HCIPacket, received: Bool) -> Step {
        switch packet {
        case .event(let event):
            follow(event)
            return .packet(packet, acl: nil)
        case .acl(let acl):
            let followed = isFollowed(acl.handle)
            if links[acl.handle] == nil { links[acl.handle] = newRecord() }
            let (frame, problem, content) = Self.reassemble(
                acl, received: received, followed: followed, in: &links[acl.handle]!)
            return .packet(
                packet,
                acl: ACLStep(frame: frame, problem: problem, received: received, followed: followed, content: content))
        case .command, .sco, .iso:
            return .packet(packet, acl: nil)
        }
    }

    /// Adds `acl` to its direction's PDU under way in `link`; a PDU it completes on a
    /// followed handle is read by the link's channels.
    private static func reassemble(_ acl: ACLDataPacket, received: Bool, followed: Bool, in link: inout LinkRecord)
        -> (BasicFrame?, ReassemblyProblem?, ChannelTracker.Content?)
    {
        let (frame, problem) = received ? link.received.append(acl) : link.sent.append(acl)
        let content = frame.flatMap { followed ? link.channels.process($0, received: received) : nil }
        return (frame, problem, content)
    }

    /// Links begin with their connection events and end with a successful disconnection;
    /// a link's record (its PDUs in progress, its channels, its serial) goes with it.
    private mutating func follow(_ event: HCIEventPacket) {
        if let announcement = LinkAnnouncement(event) {
            links[announcement.handle] = newRecord(type: announcement.type)
            liveHandles.insert(announcement.handle)
            announcedHandles.insert(announcement.handle)
        } else if event.code == DisconnectionComplete.code,
            case let .disconnectionComplete(disconnection)? = try? HCIEvent(event),
            disconnection.status.isSuccess
        {
            links[disconnection.handle] = nil
            liveHandles.remove(disconnection.handle)
        }
    }
}
