/// A census of what a ``BluetoothHost`` holds, layer by layer (``BluetoothHost/resources``):
/// for diagnostics, and for tests that check a fault leaked nothing. With no link and
/// nothing under way every count is zero.
public struct HostResources: Sendable, Equatable, CustomStringConvertible {
    /// Links the connection manager tracks.
    public var links: Int
    /// HCI commands sent and unanswered, or waiting for a command credit.
    public var commandsOutstanding: Int
    /// ACL packets waiting for a controller buffer.
    public var aclPacketsQueued: Int
    /// ACL packets in the controller's buffers (credits not yet returned).
    public var aclPacketsInController: Int
    /// Links with L2CAP reassembly state.
    public var l2capLinks: Int
    /// L2CAP credit based channels open, and requests for them under way.
    public var l2capChannels: Int
    /// ATT bearers.
    public var attBearers: Int
    /// ATT requests outstanding or queued, over every bearer.
    public var attRequestsPending: Int
    /// GATT clients.
    public var gattClients: Int
    /// Links the Security Manager keeps state for.
    public var smpLinks: Int
    /// Pairings under way.
    public var pairings: Int
    /// Timers armed (tasks sleeping on the host's clock: command, ATT, SMP and connection
    /// timeouts).
    public var timersArmed: Int

    /// Every count as given.
    public init(
        links: Int = 0, commandsOutstanding: Int = 0, aclPacketsQueued: Int = 0, aclPacketsInController: Int = 0,
        l2capLinks: Int = 0, l2capChannels: Int = 0, attBearers: Int = 0, attRequestsPending: Int = 0,
        gattClients: Int = 0,
        smpLinks: Int = 0, pairings: Int = 0, timersArmed: Int = 0
    ) {
        self.links = links
        self.commandsOutstanding = commandsOutstanding
        self.aclPacketsQueued = aclPacketsQueued
        self.aclPacketsInController = aclPacketsInController
        self.l2capLinks = l2capLinks
        self.l2capChannels = l2capChannels
        self.attBearers = attBearers
        self.attRequestsPending = attRequestsPending
        self.gattClients = gattClients
        self.smpLinks = smpLinks
        self.pairings = pairings
        self.timersArmed = timersArmed
    }

    /// Nothing held at all.
    public static let none = HostResources()

    /// `links 1, att bearers 1, …`: the counts that are not zero, or `nothing`.
    public var description: String {
        let counts: [(String, Int)] = [
            ("links", links), ("commands outstanding", commandsOutstanding), ("ACL packets queued", aclPacketsQueued),
            ("ACL packets in the controller", aclPacketsInController), ("L2CAP links", l2capLinks),
            ("L2CAP channels", l2capChannels),
            ("ATT bearers", attBearers),
            ("ATT requests pending", attRequestsPending), ("GATT clients", gattClients), ("SMP links", smpLinks),
            ("pairings", pairings), ("timers armed", timersArmed),
        ]
        let held = counts.filter { $0.1 != 0 }.map { "\($0.0) \($0.1)" }
        return held.isEmpty ? "nothing" : held.joined(separator: ", ")
    }
}
