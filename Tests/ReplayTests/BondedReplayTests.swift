@testable import Bluejay
import BluetoothCore
import DiscoveryCache
import Foundation
import HCI
import HCITestSupport
import Testing

/// One wiring of the stack: the tool and an app reach a bonded peer by the same sequence
/// (the bond and the GATT cache preloaded, the link encrypted with the bond before
/// anything else, Exchange MTU, the cache checked against the Database Hash). The
/// `read-bonded` session is `bluejay read` recorded on a store holding a bond and a cache
/// (Fixtures/traces/setups.txt); here the same read, written with the Bluejay API as an
/// app writes it, replays the very same recording: every packet it sends must be the
/// recorded one, in order, and nothing recorded may be left unsent.
@Suite @MainActor
struct BondedReplayTests {
    static let secret = CharacteristicIdentifier(
        uuid: "B1E70004-9D3B-4C7A-8A5E-6F2D0C1B0A00",
        service: ServiceIdentifier(uuid: "B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00"))

    @Test func anAppSendsWhatTheToolSentToABondedPeer() async throws {
        let session = try #require(Session.all.first { $0.name == "read-bonded" })
        // The tool first: the recording is its own.
        let tool = try await session.replay()
        #expect(tool.status == 0, "\(tool.stderr)")
        let expectedOut = try session.expected("out")
        #expect(tool.stdout == expectedOut)

        let (value, verdict, failure) = try await app(session, on: session.path)
        #expect(value == "Bluejay secret", "\(failure)")
        #expect(verdict == nil, "\(verdict.map(String.init(describing:)) ?? "")")
    }

    /// The app would not notice a packet of its own that differs from the tool's: break
    /// each host packet of the recording in turn (an octet of its header, which no
    /// matching rule lets vary) and the replay must say so, at that record.
    @Test func anyPacketTheToolSentDifferentlyIsNoticed() async throws {
        let session = try #require(Session.all.first { $0.name == "read-bonded" })
        for record in try hostRecords(session.path) {
            let corrupt = try corruptedCopy(of: session.path, record: record.number, octet: 1)
            defer { try? FileManager.default.removeItem(atPath: corrupt) }
            let run = try await app(session, on: corrupt)
            // A packet of the bring-up fails the start, which says where.
            let noticed =
                run.verdict?.recordNumber == record.number || run.failure.contains("at record \(record.number):")
            #expect(noticed, "record \(record.number): \(run.verdict.map(String.init(describing:)) ?? run.failure)")
        }
    }

    /// The app: connect, read the secret characteristic, disconnect, on `recording` with a
    /// copy of the session's store. Returns the value read (nil when a step failed, with
    /// what failed) and the replay's verdict (nil: every packet played and matched).
    func app(_ session: Session, on recording: String) async throws -> (
        value: String?, verdict: ReplayMismatch?, failure: String
    ) {
        let store = try session.freshStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = Bluejay()
        var started: BluetoothHost?
        bluejay.onHostUp = { started = $0 }
        bluejay.start(
            mode: .new(
                StartOptions(
                    transport: "replay:\(recording)", store: StoreDirectory(path: store), logger: .silent,
                    controllerRecovery: .disabled)))
        let outcome = await steps(bluejay)
        let value = try? outcome.get()
        let failure = if case let .failure(error) = outcome { "\(error)" } else { "" }
        _ = bluejay.stopAndExtractBluetoothState()
        guard let host = started else { return (value, nil, failure) }
        let verdict = await Task { @BluetoothActor in
            defer { host.close() }
            return (host.controller.transport as? ReplayTransport)?.verdict
        }.value
        return (value, verdict, failure)
    }

    func steps(_ bluejay: Bluejay) async -> Result<String, any Error> {
        let peripheral = try! PeripheralIdentifier("F0:0D:B1:E7:00:01/random")
        let connected: ConnectionResult = await withCheckedContinuation { done in
            bluejay.connect(peripheral, timeout: .seconds(15)) { done.resume(returning: $0) }
        }
        if case let .failure(error) = connected { return .failure(error) }
        let read: ReadResult<String> = await withCheckedContinuation { done in
            bluejay.read(from: Self.secret) { done.resume(returning: $0) }
        }
        guard case let .success(value) = read else { return .failure(Failed(description: "read: \(read)")) }
        let disconnected: DisconnectionResult = await withCheckedContinuation { done in
            bluejay.disconnect { done.resume(returning: $0) }
        }
        guard case .success = disconnected else { return .failure(Failed(description: "disconnect: \(disconnected)")) }
        return .success(value)
    }

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }
}
