/// The stack's serial context. Every piece of protocol state — controller, connections,
/// L2CAP, ATT, GATT, SMP — is isolated to this one actor, so protocol code runs without
/// locks and calls between layers are plain synchronous calls.
@globalActor
public actor BluetoothActor {
    /// The one instance.
    public static let shared = BluetoothActor()
}
