import BluetoothCore

/// One layer's state on each open link, kept on the ``Link`` itself rather than in a map of
/// the layer's: a value exists only while its link is open, and the link's close hands it
/// to ``onClose`` once, in the layer's turn (``Link/Layer``).
///
/// Reads and writes by the ``Link`` a layer was handed, or by connection handle where an
/// entry point still takes one: a write for a handle with no open link is dropped, as the
/// link it was meant for is gone.
@BluetoothActor
public final class PerLink<Value> {
    /// What a closing link calls, shared by the owner and its slots (no reference back to
    /// the owner: a weakly referenced object makes its every retain slower).
    private final class Hooks {
        var onClose: ((ConnectionHandle, Value, HCIStatus) -> Void)?
    }

    /// The value on one link.
    private final class Slot: LinkAttachment {
        var value: Value
        let handle: ConnectionHandle
        let hooks: Hooks

        init(_ value: Value, handle: ConnectionHandle, hooks: Hooks) {
            (self.value, self.handle, self.hooks) = (value, handle, hooks)
        }

        func linkClosed(_ link: Link, _ reason: HCIStatus) { hooks.onClose?(handle, value, reason) }
    }

    // Not for the receive path: a generic lookup per packet cost it 15%, so L2CAP and ATT
    // keep concrete classes of their own on the link.
    private let controller: HCIController
    private let hooks = Hooks()
    /// Where the values sit in a closing link's order.
    public let layer: Link.Layer
    /// Called with a link's value when the link closes (after the layers above let go).
    public var onClose: ((ConnectionHandle, Value, HCIStatus) -> Void)? {
        get { hooks.onClose }
        set { hooks.onClose = newValue }
    }

    /// Values kept on `controller`'s links, at `layer`.
    public init(controller: HCIController, layer: Link.Layer) { (self.controller, self.layer) = (controller, layer) }

    private func slot(_ handle: ConnectionHandle) -> Slot? {
        controller.link(handle)?.attachment(for: self)
    }

    /// The value on `handle`'s link; assigning nil takes it off without ``onClose``.
    public subscript(handle: ConnectionHandle) -> Value? {
        get { slot(handle)?.value }
        set {
            guard let link = controller.link(handle) else { return }
            self[link] = newValue
        }
    }

    /// The value on `link`, for a layer handed the link (no lookup by handle); assigning nil
    /// takes it off without ``onClose``.
    public subscript(link: Link) -> Value? {
        get { link.attachment(for: self, as: Slot.self)?.value }
        set {
            if let newValue {
                if let slot: Slot = link.attachment(for: self) { return slot.value = newValue }
                _ = link.attachment(for: self, layer: layer) { Slot(newValue, handle: link.handle, hooks: hooks) }
            } else {
                link.detach(self)
            }
        }
    }

    /// The value on `handle`'s link, or `make()`'s, kept once written.
    public subscript(handle: ConnectionHandle, default make: @autoclosure () -> Value) -> Value {
        get { slot(handle)?.value ?? make() }
        set { self[handle] = newValue }
    }

    /// Runs `body` on the value on `handle`'s link in place (a value holding a buffer is
    /// not copied to be changed); nil, and `body` not run, when there is none.
    public func update<Result>(_ handle: ConnectionHandle, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let slot = slot(handle) else { return nil }
        return try body(&slot.value)
    }

    /// Takes the value off `handle`'s link without ``onClose``, and returns it.
    @discardableResult
    public func removeValue(forKey handle: ConnectionHandle) -> Value? {
        guard let link = controller.link(handle), let slot = link.detach(self) as? Slot else { return nil }
        return slot.value
    }

    /// The open links that hold a value, in the controller's order.
    public var handles: [ConnectionHandle] {
        controller.links.compactMap { link in link.attachment(for: self, as: Slot.self) != nil ? link.handle : nil }
    }

    /// The values, one per open link that holds one.
    public var values: [Value] {
        controller.links.compactMap { link in link.attachment(for: self, as: Slot.self)?.value }
    }

    /// How many open links hold a value.
    public var count: Int { handles.count }

    /// Whether no open link holds a value.
    public var isEmpty: Bool { count == 0 }
}
