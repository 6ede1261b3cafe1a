import Bluejay
import BluetoothCore
import Foundation
import HCI
import HCITestSupport
import Testing

/// L2CAP credit-based channels against the Bumble peer's echo server (Fixtures/peer/README.md,
/// "L2CAP channels"): PSM 0x0080 echoes, 0x0081 refuses until the link is encrypted, the SDU
/// `bluejay:disconnect` makes the peer close the channel, and the peer logs a
/// PROTOCOL-VIOLATION for any K-frame we send without a credit or past its MPS.
extension IntegrationTests.BluejayAPITests {
    static let echoPSM: UInt16 = 0x0080

    /// Runs `body` with a Bluejay connected to a fresh peer's first peripheral, in a store
    /// of its own, and shuts Bluejay down after it.
    func withConnectedBluejay(_ body: (Bluejay, TestPeer) async throws -> Void) async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let store = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let bluejay = try await connectedBluejay(peer, store: store)
        do { try await body(bluejay, peer) } catch {
            await shutDown(bluejay)
            throw error
        }
        await shutDown(bluejay)
    }

    /// Sends `data` in SDUs of the peer's MTU while reading the echo back; returns what came back.
    func echo(_ data: [UInt8], over channel: L2CAPChannel) async throws -> [UInt8] {
        let mtu = Int(await channel.remoteMTU)
        let sender = Task { @BluetoothActor in
            var offset = 0
            while offset < data.count {
                let end = min(offset + mtu, data.count)
                try await channel.send(Array(data[offset..<end]))
                offset = end
            }
        }
        var back: [UInt8] = []
        back.reserveCapacity(data.count)
        for try await sdu in channel.sdus {
            back += sdu
            if back.count >= data.count { break }
        }
        try await sender.value
        return back
    }

    /// A megabyte out and back intact through the public API, never past the credits either
    /// side granted; then we close and the peer sees its end closed.
    @Test func aMegabyteEchoesIntactWithinTheCredits() async throws {
        try await withConnectedBluejay { bluejay, peer in
            let channel = try await bluejay.openL2CAPChannel(psm: Self.echoPSM)
            #expect(channel.mode == .leCreditBased)
            #expect(await channel.remoteMTU == 2048, "the peer's --l2cap-mtu default")
            #expect(await channel.remoteMPS == 247, "the peer's --l2cap-mps default")
            var generator = SystemRandomNumberGenerator()
            let data = (0..<1_048_576).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let back = try await echo(data, over: channel)
            #expect(back.count == data.count)
            #expect(back == data)
            let statistics = await channel.statistics
            #expect(statistics.framesSent <= statistics.creditsReceived, "we sent only against credits")
            #expect(statistics.framesReceived <= statistics.creditsGranted, "the peer sent only against credits")
            #expect(statistics.framesSent >= 1_048_576 / 247, "SDUs went out in K-frames of the peer's MPS")
            #expect(statistics.mostSendCredits <= 65535)
            await channel.disconnect()
            #expect(await channel.state == .closed(.closed))
            #expect(await eventually { peer.log.contains("L2CAP channel 0x0040 closed") })
            #expect(!peer.log.contains("PROTOCOL-VIOLATION"), "\(peer.log)")
        }
    }

    /// The peer closes: what it sent first is read, then the sequence ends and sends fail.
    @Test func thePeerClosesTheChannel() async throws {
        try await withConnectedBluejay { bluejay, peer in
            let channel = try await bluejay.openL2CAPChannel(psm: Self.echoPSM)
            try await channel.send(Array("before".utf8))
            try await channel.send(Array("bluejay:disconnect".utf8))
            var got: [[UInt8]] = []
            for try await sdu in channel.sdus { got.append(sdu) }
            #expect(got == [Array("before".utf8)])
            #expect(await channel.state == .closed(.closedByPeer))
            await #expect(throws: CreditBasedChannelError.closedByPeer) { try await channel.send([1]) }
            // The link goes on: a new channel on it echoes.
            let again = try await bluejay.openL2CAPChannel(psm: Self.echoPSM)
            #expect(try await echo(Array("again".utf8), over: again) == Array("again".utf8))
        }
    }

    /// A PSM the peer does not serve is refused with its result by name.
    @Test func aRefusedPSMIsReportedByName() async throws {
        try await withConnectedBluejay { bluejay, peer in
            do {
                _ = try await bluejay.openL2CAPChannel(psm: 0x00F0)
                Issue.record("the peer serves no PSM 0x00F0")
            } catch let error as CreditBasedChannelError {
                #expect(error == .refused(CreditBasedConnectionResult(rawValue: 0x0002, enhanced: false)))
                #expect(error.description == "connection refused: SPSM not supported (0x0002)")
            }
        }
    }

    /// PSM 0x0081 wants encryption: refused with Insufficient Encryption, the link is
    /// paired on demand, and the request asked again opens the channel.
    @Test func aChannelThatWantsEncryptionPairsOnDemand() async throws {
        try await withConnectedBluejay { bluejay, peer in
            let channel = try await bluejay.openL2CAPChannel(psm: 0x0081)
            #expect(try await echo(Array("secret".utf8), over: channel) == Array("secret".utf8))
            #expect(peer.log.contains("L2CAP PSM 0x0081 refused: insufficient encryption"))
            #expect(peer.log.contains("L2CAP channel open: PSM 0x0081"))
        }
    }
}

extension IntegrationTests {
    /// A fresh peer, a Central on it (in a store of its own) and its first peripheral, connected.
    func connectedPeripheral() async throws -> (TestPeer, Central, Peripheral) {
        let peer = try await TestPeer()
        do {
            let store = StoreDirectory(path: NSTemporaryDirectory() + "bluejay-l2cap-\(UUID().uuidString)")
            let central = try await Central(transport: peer.transport, store: store, logger: .silent)
            do {
                let peripheral = central.peripheral(try PeripheralIdentifier("\(peer.address)/random"))
                try await peripheral.connect(connectionTimeout: .seconds(10))
                return (peer, central, peripheral)
            } catch {
                central.close()
                throw error
            }
        } catch {
            peer.stop()
            throw error
        }
    }

    /// Central's peripherals open channels too; a link that ends ends them with its reason.
    @Test func centralPeripheralsOpenChannelsThatEndWithTheLink() async throws {
        let (peer, central, peripheral) = try await connectedPeripheral()
        defer { central.close(); peer.stop() }
        let channel = try await peripheral.openL2CAPChannel(psm: IntegrationTests.BluejayAPITests.echoPSM)
        #expect(
            try await IntegrationTests.BluejayAPITests().echo(Array(repeating: 0x42, count: 5000), over: channel)
                == Array(repeating: 0x42, count: 5000))
        try await peripheral.write(to: Self.controlPoint, bytes: [0x02, 0x13])  // the peer ends the link
        await #expect(throws: CreditBasedChannelError.linkLost(.remoteUserTerminatedConnection)) {
            for try await _ in channel.sdus {}
        }
        await #expect(throws: BluejayError.self) {
            _ = try await peripheral.openL2CAPChannel(psm: IntegrationTests.BluejayAPITests.echoPSM)
        }
    }

    /// The accepting side against a real peer: the peripheral opens a channel to a PSM the
    /// host serves (control point 0D), says hello and echoes; a PSM nobody serves is refused
    /// with SPSM not supported, which the peer logs by code.
    @Test func thePeerOpensAChannelToAPSMWeServe() async throws {
        let (peer, central, peripheral) = try await connectedPeripheral()
        defer { central.close(); peer.stop() }
        let accepted = BluetoothCore.Expectation<CreditBasedChannel>()
        central.host.channels.creditBased.serve(
            psm: PSM(rawValue: 0x00C0), parameters: .init(mtu: 512, mps: 100, initialCredits: 8)
        ) {
            accepted.fulfill($0)
        }
        try await peripheral.write(to: Self.controlPoint, bytes: [0x0D, 0xC0, 0x00])
        let channel = await accepted.value()
        #expect(channel.psm == PSM(rawValue: 0x00C0) && channel.remoteMTU == 2048 && channel.remoteMPS == 247)
        #expect(try await channel.receive() == Array("hello from the peripheral".utf8))
        let data = (0..<5000).map { UInt8(truncatingIfNeeded: $0) }
        #expect(try await IntegrationTests.BluejayAPITests().echo(data, over: channel) == data)
        #expect(channel.statistics.framesReceived <= channel.statistics.creditsGranted)
        try await peripheral.write(to: Self.controlPoint, bytes: [0x0D, 0xC1, 0x00])
        #expect(
            await eventually { peer.log.contains("L2CAP channel to the host's PSM 0x00C1 refused: 0x0002") },
            "\(peer.log)")
        await channel.disconnect()
        #expect(await eventually { peer.log.contains("L2CAP channel 0x0040 closed") }, "the peer saw its end closed")
        #expect(!peer.log.contains("PROTOCOL-VIOLATION"))
    }
}

extension CommandLineTests {
    /// `bluejay l2cap`: a file out through the echo and back on standard output, whole;
    /// a refused PSM by name with status 1.
    @Test func l2capPipesAFileThroughTheEcho() async throws {
        let peer = try await TestPeer()
        defer { peer.stop() }
        let path = NSTemporaryDirectory() + "bluejay-l2cap-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = (0..<3000).map { "line \($0) of the file sent over an L2CAP channel\n" }.joined()
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let capture = NSTemporaryDirectory() + "bluejay-l2cap-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let store = ["BLUEJAY_STORE": NSTemporaryDirectory() + "bluejay-l2cap-\(UUID().uuidString)"]
        let result = try await run(
            Repository.bluejay,
            [
                "l2cap", "\(peer.address)/random", "0x0080", "--transport", peer.transport,
                "--send-file", path, "--count", "\(text.utf8.count)", "--mtu", "512", "--capture", capture,
            ],
            environment: store)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout == text)
        #expect(result.stderr.contains("MTU 512/2048"), "\(result.stderr)")
        #expect(result.stderr.contains("\(text.utf8.count) octets received, channel closed"), "\(result.stderr)")
        #expect(!peer.log.contains("PROTOCOL-VIOLATION"))
        // The trace tools read the channel: its signaling by name, its K-frames by PSM.
        let check = try await run(Repository.bluejay, ["trace", capture, "--check", "--strict"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let trace = try await run(Repository.bluejay, ["trace", capture])
        for line in [
            "LE_Credit_Based_Connection_Req id 1: PSM 0x0080", "result 0x0000 success", "Flow_Control_Credit_Ind",
            "L2CAP CID 0x0040 (PSM 0x0080) len 247: K-frame, SDU 245 of 512 octets", "Disconnection_Rsp",
        ] {
            #expect(trace.stdout.contains(line), "no '\(line)' in the trace")
        }

        let refused = try await run(
            Repository.bluejay,
            ["l2cap", "\(peer.address)/random", "0x00F0", "--transport", peer.transport, "--count", "0"],
            environment: store, input: "")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("SPSM not supported (0x0002)"), "\(refused.stderr)")

        let closed = try await run(
            Repository.bluejay, ["l2cap", "\(peer.address)/random", "128", "--transport", peer.transport],
            environment: store, input: "bluejay:disconnect")
        #expect(closed.status == 0, "stderr: \(closed.stderr)")
        #expect(closed.stderr.contains("the peer closed the channel"), "\(closed.stderr)")
    }
}
