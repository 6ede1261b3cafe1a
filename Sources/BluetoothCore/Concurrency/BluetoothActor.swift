/// The stack's serial context. Every piece of protocol state — controller, connections,
/// L2CAP, ATT, GATT, SMP — is isolated to this one actor, so protocol code runs without
/// locks and calls between layers are plain synchronous calls.
///
/// Its executor is ``EventLoop/stack``: the actor's jobs run on the thread that also reads
/// the transports' descriptors, so what a read brings in is handled without a thread switch.
@globalActor
public actor BluetoothActor {
    /// The one instance.
    public static let shared = BluetoothActor()

    /// The stack's event loop.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.stack.asUnownedSerialExecutor() }

    /// Runs `operation` as the actor, synchronously: for code on the loop thread outside a
    /// job (a transport's watch handler). Stops the process if called from another thread.
    public static func assumeIsolated<T>(_ operation: @BluetoothActor () throws -> T) rethrows -> T {
        typealias Isolated = @BluetoothActor () throws -> T
        typealias Plain = () throws -> T
        // The loop thread runs this actor's jobs one at a time and runs none while a handler
        // runs, so on it the actor's state is ours: as MainActor.assumeIsolated does for the
        // main thread, drop the annotation once that is checked.
        EventLoop.stack.checkIsolated()
        return try withoutActuallyEscaping(operation) { (isolated: @escaping Isolated) throws -> T in
            try unsafeBitCast(isolated, to: Plain.self)()
        }
    }
}
