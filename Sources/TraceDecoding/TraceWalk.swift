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

    private struct ReassemblyKey: Hashable {
        var handle: ConnectionHandle
        var received: Bool
    }

    private var reassemblers: [ReassemblyKey: Reassembler] = [:]
    private var channels = ChannelTracker()
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
    package func linkType(_ handle: ConnectionHandle) -> LinkType? { channels.linkType(handle) }

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
            let (frame, problem) = reassemblers[
                ReassemblyKey(handle: acl.handle, received: received), default: Reassembler()
            ].append(acl)
            let followed = isFollowed(acl.handle)
            let content = frame.flatMap {
                followed ? channels.process($0, handle: acl.handle, received: received) : nil
            }
            return .packet(
                packet,
                acl: ACLStep(frame: frame, problem: problem, received: received, followed: followed, content: content))
        case .command, .sco, .iso:
            return .packet(packet, acl: nil)
        }
    }

    /// Links begin with their connection events and end with a successful disconnection;
    /// a link's PDUs in progress and its channels go with it.
    private mutating func follow(_ event: HCIEventPacket) {
        if let announcement = LinkAnnouncement(event) {
            forget(announcement.handle)
            liveHandles.insert(announcement.handle)
            announcedHandles.insert(announcement.handle)
            channels.announce(announcement)
        } else if event.code == DisconnectionComplete.code,
            case let .disconnectionComplete(disconnection)? = try? HCIEvent(event),
            disconnection.status.isSuccess
        {
            forget(disconnection.handle)
            liveHandles.remove(disconnection.handle)
            channels.disconnected(disconnection.handle)
        }
    }

    private mutating func forget(_ handle: ConnectionHandle) {
        reassemblers[ReassemblyKey(handle: handle, received: true)] = nil
        reassemblers[ReassemblyKey(handle: handle, received: false)] = nil
    }
}
