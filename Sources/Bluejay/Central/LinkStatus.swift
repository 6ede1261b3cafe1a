import HCI
import Synchronization

/// Where a ``Peripheral``'s link stands, readable from any actor: the peripheral, on the
/// stack's actor, owns its link and writes this on every change; ``Bluejay``, from its API
/// on the main actor and its operations on the stack's, reads it instead of keeping a state
/// of its own in step.
final class LinkStatus: Sendable {
    /// The link at one moment.
    struct Snapshot: Sendable {
        /// The peripheral's state.
        var state = PeripheralState.disconnected
        /// The live link, from its LE Connection Complete to its Disconnection Complete.
        var handle: ConnectionHandle?
        /// What ended the last link the peripheral did not end itself, while it reconnects
        /// (what listens end with when the reconnection stops).
        var droppedBy: BluejayError?

        /// The link, while it is up and its GATT client ready (also while it is being ended).
        var connectedHandle: ConnectionHandle? {
            switch state {
            case .connected, .disconnecting: handle
            case .disconnected, .connecting, .reconnecting: nil
            }
        }
    }

    private let current = Mutex(Snapshot())

    /// The link now.
    var snapshot: Snapshot { current.withLock { $0 } }

    /// The peripheral's link changed (its owner's call alone).
    func publish(_ snapshot: Snapshot) { current.withLock { $0 = snapshot } }
}
