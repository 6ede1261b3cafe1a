/// One link a ``VirtualController`` holds: the peripheral at its far end and that
/// peripheral's state for it (reassembly, ATT_MTU, CCCDs, encryption), one record per link,
/// gone with the link.
struct VirtualLink {
    /// The peripheral's index in the controller.
    let peripheral: Int
    /// What the peripheral keeps for this link.
    var peer = VirtualPeripheral.Link()
}
