@testable import Bluejay
import BluetoothCore
import Foundation
@testable import HCI
import HCITestSupport
import Testing

/// The phases of the scripted session, in order: each is one or two calls of the Bluejay
/// API. A fault is armed as one phase starts; that phase and every later one are then
/// asked for at once, so the fault finds one operation running and the rest queued.
enum SessionPhase: Int, CaseIterable, Comparable, Sendable {
    case scan, connect, read, longRead, write, longWrite, listen, backgroundTask, pairing

    static func < (lhs: SessionPhase, rhs: SessionPhase) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One step of the session, and the packet that marks it.
struct FaultStep: Sendable, CustomStringConvertible {
    let description: String
    /// The phase the step runs in.
    let phase: SessionPhase
    /// The packet the fault goes off at, for this fault.
    let trigger: @Sendable (InjectedFault) -> FaultTrigger

    /// Every step the issue names: scan, connect, MTU, each discovery step, read, long
    /// read, write, long write, listen, background task, and pairing (its request, its
    /// public keys, the encryption it starts and the keys we distribute).
    static let all: [FaultStep] = [
        FaultStep(description: "scan", phase: .scan) { _ in
            FaultTrigger("scan enable", .sent) { packet in
                guard case let .command(command) = packet,
                    command.opcode.rawValue == 0x2042 || command.opcode.rawValue == 0x200C
                else { return false }
                return command.parameters.first == 0x01
            }
        },
        FaultStep(description: "connect", phase: .connect) { fault in
            fault.needsLink
                ? .linkUp
                : FaultTrigger("create connection", .sent) { packet in
                    guard case let .command(command) = packet else { return false }
                    return command.opcode.rawValue == 0x2043 || command.opcode.rawValue == 0x200D
                }
        },
        FaultStep(description: "MTU exchange", phase: .connect) { _ in .att("Exchange MTU Request", 0x02) },
        FaultStep(description: "discover services", phase: .read) { _ in .att("Find By Type Value Request", 0x06) },
        FaultStep(description: "discover characteristics", phase: .read) { _ in
            .att("Read By Type Request for characteristics", 0x08) { $0.suffix(2).elementsEqual([0x03, 0x28]) }
        },
        FaultStep(description: "read", phase: .read) { _ in .att("Read Request", 0x0A) },
        FaultStep(description: "long read", phase: .longRead) { _ in .att("Read Blob Request", 0x0C) },
        FaultStep(description: "write", phase: .write) { _ in .att("Write Request", 0x12) },
        FaultStep(description: "long write", phase: .longWrite) { _ in .att("Prepare Write Request", 0x16) },
        FaultStep(description: "discover descriptors", phase: .listen) { _ in .att("Find Information Request", 0x04) },
        FaultStep(description: "listen", phase: .listen) { _ in .att("Write Request to the CCCD", 0x12) },
        FaultStep(description: "background task", phase: .backgroundTask) { _ in
            FaultTrigger("the task's first ATT request", .sent) {
                FaultTrigger.firstFragmentPayload($0, channel: 0x0004) != nil
            }
        },
        FaultStep(description: "pairing request", phase: .pairing) { _ in .smp("Pairing Request", 0x01) },
        FaultStep(description: "pairing public key", phase: .pairing) { _ in .smp("Pairing Public Key", 0x0C) },
        FaultStep(description: "link encryption", phase: .pairing) { _ in
            .command("LE Enable Encryption", HCIOpcode(rawValue: 0x2019))
        },
        FaultStep(description: "key distribution", phase: .pairing) { _ in .smp("Identity Information", 0x08) },
    ]
}

extension InjectedFault {
    /// What the fault is, as Bluejay names it: in the error of an operation a lost link
    /// interrupts, in the log when the controller is lost.
    var expectedError: String {
        switch self {
        case let .linkLost(reason): "disconnected: \(reason)"
        case .transportEOF: "closed the connection"
        case let .hardwareError(code): "Hardware Error \(hex(code, digits: 2))"
        }
    }

    /// What the error of an operation the fault interrupts says: the link's end, or, for a
    /// lost controller, that Bluetooth is unavailable (Bluejay's reference), the log naming
    /// the fault.
    var interruptedWith: String { needsLink ? expectedError : "\(BluejayError.bluetoothUnavailable)" }
}

/// A fault at a step.
struct FaultCase: Sendable, CustomStringConvertible {
    let step: FaultStep
    let fault: InjectedFault
    var description: String { "\(fault) at \(step)" }

    static let faults: [InjectedFault] = [.peerDisconnect, .supervisionTimeout, .transportEOF, .hardwareError(0x2A)]
    /// Every fault at every step where it can happen (a link can only be lost once there is one).
    static let all: [FaultCase] = FaultStep.all.flatMap { step in
        faults.filter { !$0.needsLink || step.phase >= .connect }.map { FaultCase(step: step, fault: $0) }
    }
}

/// Counts connections and availability as the observer hears them.
@MainActor
final class AvailabilityRecorder: ConnectionObserver {
    var connections = 0
    var disconnections = 0
    var availability: [Bool] = []
    func bluetoothAvailable(_ available: Bool) { availability.append(available) }
    func connected(to peripheral: PeripheralIdentifier) { connections += 1 }
    func disconnected(from peripheral: PeripheralIdentifier) { disconnections += 1 }
}

/// Every callback of the session, by operation: each must end exactly once.
@MainActor
final class Ledger {
    private(set) var outcomes: [String: [String]] = [:]
    /// Values each listen received.
    private(set) var values: [String: [Data]] = [:]

    func end(_ operation: String, _ outcome: String) { outcomes[operation, default: []].append(outcome) }
    func value(_ listen: String, _ value: Data) { values[listen, default: []].append(value) }

    /// The outcome of `operation` once it ended, or nil.
    func outcome(_ operation: String) -> String? { outcomes[operation]?.first }

    /// Waits until every one of `operations` has ended; false if one has not within `limit`.
    func waitUntilEnded(_ operations: [String], within limit: Duration = hangGuardWait) async -> Bool {
        await eventually(within: limit) { operations.allSatisfy { self.outcomes[$0] != nil } }
    }
}

/// Describes how a write completion ended.
func describe(_ result: WriteResult) -> String {
    switch result {
    case .success: "success"
    case .cancelled: "cancelled"
    case let .failure(error): "failure: \(error)"
    }
}

/// Describes how a read (or listen) completion ended.
func describe<T>(_ result: ReadResult<T>) -> String {
    switch result {
    case .success: "success"
    case .cancelled: "cancelled"
    case let .failure(error): "failure: \(error)"
    }
}
