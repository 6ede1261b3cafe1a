import BluetoothCore
import HCI
import HCITestSupport
import L2CAP
import TestTraits
import Testing

/// Two `CreditBasedChannels` back to back in this process: our opening side against our
/// accepting side, each frame carried whole and in order. This is where enhanced mode is
/// tested end to end; Bumble 0.0.236's enhanced credit-based support mixes up CIDs (see
/// Fixtures/peer/README.md), so the integration tests use LE credit based channels.
@Suite @BluetoothActor
struct CreditBasedChannelsTests {
    static let handle: ConnectionHandle = 0x0040
    static let echo = PSM(rawValue: 0x0080)

    /// Carries A's frames to B and B's to A, in order, after the sender returns.
    @BluetoothActor
    final class Loopback {
        enum Side { case a, b }
        let clock = ManualClock()
        private(set) var a: CreditBasedChannels!
        private(set) var b: CreditBasedChannels!
        /// Every frame carried: (from, CID, payload).
        private(set) var carried: [(Side, UInt16, [UInt8])] = []
        /// Sees each signaling command before it is delivered; true keeps it from the receiver.
        var intercept: ((Side, SignalingCommand) -> Bool)?
        private var queue: [(Side, UInt16, [UInt8])] = []
        private var draining = false

        init() {
            a = CreditBasedChannels(
                transmit: { [weak self] _, cid, frame in self?.carry(from: .a, cid.rawValue, Array(frame.payload)) },
                links: Links(), clock: clock, logger: .silent)
            b = CreditBasedChannels(
                transmit: { [weak self] _, cid, frame in self?.carry(from: .b, cid.rawValue, Array(frame.payload)) },
                links: Links(), clock: clock, logger: .silent)
        }

        var isIdle: Bool { queue.isEmpty && !draining }

        /// Signaling commands one side sent, decoded.
        func commands(from side: Side) -> [SignalingCommand] {
            carried.filter { $0.0 == side && $0.1 == 0x0005 }.compactMap { try? SignalingCommand(decoding: $0.2[...]) }
        }

        /// Puts a frame on the wire as if `side` had sent it.
        func inject(from side: Side, cid: UInt16, _ payload: [UInt8]) { carry(from: side, cid, payload) }

        private func carry(from side: Side, _ cid: UInt16, _ payload: [UInt8]) {
            carried.append((side, cid, payload))
            queue.append((side, cid, payload))
            guard !draining else { return }
            draining = true
            Task { @BluetoothActor in self.drain() }
        }

        private func drain() {
            while !queue.isEmpty {
                let (from, cid, payload) = queue.removeFirst()
                let target = from == .a ? b! : a!
                if cid == 0x0005 {
                    guard let command = try? SignalingCommand(decoding: payload[...]) else { continue }
                    if intercept?(from, command) == true { continue }
                    target.signaling(command, handle: CreditBasedChannelsTests.handle)
                } else {
                    target.receive(
                        payload[...], on: ChannelIdentifier(rawValue: cid), handle: CreditBasedChannelsTests.handle)
                }
            }
            draining = false
        }

        /// Waits until every frame sent so far, and every answer to them, was delivered.
        func settle() async {
            _ = await eventually { self.isIdle }
            for _ in 0..<10 { await Task.yield() }
            _ = await eventually { self.isIdle }
        }
    }

    /// B serves `psm` as an echo: every SDU it receives goes back.
    func serveEcho(
        _ loop: Loopback, psm: PSM = echo, parameters: CreditBasedChannelParameters = .init(),
        accepted: @escaping (CreditBasedChannel) -> Void = { _ in }
    ) {
        loop.b.serve(psm: psm, parameters: parameters) { channel in
            accepted(channel)
            Task { @BluetoothActor in
                while let sdu = try? await channel.receive() {
                    do { try await channel.send(sdu) } catch { return }
                }
            }
        }
    }

    @Test func anLEChannelEchoesSDUsWholeAndInOrderWithinTheCredits() async throws {
        let loop = Loopback()
        var served: CreditBasedChannel?
        serveEcho(loop, parameters: CreditBasedChannelParameters(mtu: 512, mps: 40, initialCredits: 3)) { served = $0 }
        let channel = try await loop.a.open(
            psm: Self.echo, on: Self.handle,
            parameters: CreditBasedChannelParameters(mtu: 300, mps: 30, initialCredits: 4))
        #expect(channel.mode == .leCreditBased)
        #expect(channel.remoteMTU == 512 && channel.remoteMPS == 40 && channel.sendCredits == 3)
        #expect(
            CreditBasedChannels.dynamicCIDs.contains(channel.localCID)
                && CreditBasedChannels.dynamicCIDs.contains(channel.remoteCID))
        let sdus = (0..<40).map { index in (0..<(index * 7 % 301)).map { UInt8(truncatingIfNeeded: $0 &+ index) } }
        let reader = Task { @BluetoothActor in
            var got: [[UInt8]] = []
            for try await sdu in channel.sdus {
                got.append(sdu)
                if got.count == sdus.count { break }
            }
            return got
        }
        for sdu in sdus { try await channel.send(sdu) }
        #expect(try await reader.value == sdus)
        await loop.settle()
        // Credits were never exceeded, either way, and SDUs took several K-frames.
        let remote = try #require(served)
        for side in [channel, remote] {
            #expect(side.statistics.framesSent <= side.statistics.creditsReceived)
            #expect(side.statistics.framesSent > side.statistics.sdusSent)
        }
        #expect(channel.statistics.sdusSent == 40 && remote.statistics.sdusReceived == 40)
        #expect(loop.commands(from: .a).contains { $0.code == .flowControlCreditIndication })
        #expect(loop.commands(from: .b).contains { $0.code == .flowControlCreditIndication })
    }

    @Test func aPSMNobodyServesIsRefusedByName() async throws {
        let loop = Loopback()
        serveEcho(loop)
        let error = await expectError(CreditBasedChannelError.self) {
            _ = try await loop.a.open(psm: PSM(rawValue: 0x00F3), on: Self.handle)
        }
        #expect(error == .refused(CreditBasedConnectionResult(rawValue: 0x0002, enhanced: false)))
        #expect(error?.description == "connection refused: SPSM not supported (0x0002)")
        #expect(loop.a.openChannels == 0)
    }

    @Test func enhancedModeOpensFiveChannelsInOneRequest() async throws {
        let loop = Loopback()
        var served: [CreditBasedChannel] = []
        serveEcho(loop, parameters: CreditBasedChannelParameters(mtu: 128, mps: 64, initialCredits: 2)) {
            served.append($0)
        }
        let channels = try await loop.a.openEnhanced(
            psm: Self.echo, count: 5, on: Self.handle,
            parameters: CreditBasedChannelParameters(mtu: 100, mps: 64, initialCredits: 2))
        #expect(channels.count == 5)
        #expect(Set(channels.map(\.localCID)).count == 5 && Set(channels.map(\.remoteCID)).count == 5)
        #expect(channels.allSatisfy { $0.mode == .enhancedCreditBased && $0.remoteMTU == 128 })
        #expect(loop.commands(from: .a).filter { $0.code == .creditBasedConnectionRequest }.count == 1)
        for (index, channel) in channels.enumerated() {
            let sdu = [UInt8](repeating: UInt8(index), count: 90 + index)
            try await channel.send(sdu)
            #expect(try await channel.receive() == sdu)
        }
        await loop.settle()
        #expect(served.count == 5 && served.allSatisfy { $0.mode == .enhancedCreditBased })
    }

    @Test func enhancedLimitsAreTheSpecification() async throws {
        let loop = Loopback()
        serveEcho(loop)
        await #expect(
            throws: CreditBasedChannelError.invalidParameters("an enhanced request opens 1 to 5 channels, not 6")
        ) {
            _ = try await loop.a.openEnhanced(psm: Self.echo, count: 6, on: Self.handle)
        }
        await #expect(throws: CreditBasedChannelError.invalidParameters("MTU 63 is below 64")) {
            _ = try await loop.a.openEnhanced(
                psm: Self.echo, count: 1, on: Self.handle, parameters: .init(mtu: 63, mps: 64))
        }
        await #expect(throws: CreditBasedChannelError.invalidParameters("MPS 22 is outside 23…65533")) {
            _ = try await loop.a.open(psm: Self.echo, on: Self.handle, parameters: .init(mtu: 23, mps: 22))
        }
        await #expect(throws: CreditBasedChannelError.invalidParameters("SPSM 0x0100 is outside 0x0001…0x00FF")) {
            _ = try await loop.a.open(psm: PSM(rawValue: 0x0100), on: Self.handle)
        }
        // The accepting side refuses six CIDs in one request with Invalid Parameters.
        let six = CreditBasedConnectionRequest(
            psm: Self.echo, mtu: 64, mps: 64, initialCredits: 1, sourceCIDs: Array(0x0040...0x0045))
        loop.inject(from: .a, cid: 0x0005, six.command(identifier: 9).encoded())
        await loop.settle()
        let answer = try #require(loop.commands(from: .b).last)
        let response = try CreditBasedConnectionResponse(command: answer)
        #expect(response.result.description == "0x000c all refused, invalid parameters")
        #expect(response.destinationCIDs == [0, 0, 0, 0, 0, 0])
    }

    @Test func theAcceptingSideRefusesBadRequestsByResult() async throws {
        let loop = Loopback()
        serveEcho(loop)
        func result(_ request: LECreditBasedConnectionRequest, identifier: UInt8) async throws -> UInt16 {
            loop.inject(from: .a, cid: 0x0005, request.command(identifier: identifier).encoded())
            await loop.settle()
            let answer = try #require(loop.commands(from: .b).last { $0.identifier == identifier })
            return try LECreditBasedConnectionResponse(command: answer).result.rawValue
        }
        #expect(
            try await result(
                .init(psm: Self.echo, sourceCID: 0x0041, mtu: 23, mps: 23, initialCredits: 1), identifier: 1) == 0x0000)
        #expect(
            try await result(
                .init(psm: Self.echo, sourceCID: 0x0041, mtu: 23, mps: 23, initialCredits: 1), identifier: 2) == 0x000A)
        #expect(
            try await result(
                .init(psm: Self.echo, sourceCID: 0x0020, mtu: 23, mps: 23, initialCredits: 1), identifier: 3) == 0x0009)
        #expect(
            try await result(
                .init(psm: Self.echo, sourceCID: 0x0042, mtu: 22, mps: 23, initialCredits: 1), identifier: 4) == 0x000B)
        #expect(
            try await result(
                .init(psm: PSM(rawValue: 0x0099), sourceCID: 0x0042, mtu: 23, mps: 23, initialCredits: 1), identifier: 5
            ) == 0x0002)
        #expect(loop.b.openChannels == 1)
    }

    @Test func eitherSideCanDisconnect() async throws {
        let loop = Loopback()
        var served: [CreditBasedChannel] = []
        loop.b.serve(psm: Self.echo) { served.append($0) }
        let first = try await loop.a.open(psm: Self.echo, on: Self.handle)
        await loop.settle()
        // We close: the peer's reader ends normally, our sends fail.
        await first.disconnect()
        #expect(first.state == .closed(.closed))
        #expect(try await served[0].receive() == nil)
        #expect(served[0].state == .closed(.closedByPeer))
        await #expect(throws: CreditBasedChannelError.closed) { try await first.send([1]) }
        // The peer closes: our reader ends once what came before is read.
        let second = try await loop.a.open(psm: Self.echo, on: Self.handle)
        await loop.settle()
        try await served[1].send([1, 2, 3])
        await served[1].disconnect()
        #expect(try await second.receive() == [1, 2, 3])
        #expect(try await second.receive() == nil)
        #expect(second.state == .closed(.closedByPeer))
        await #expect(throws: CreditBasedChannelError.closedByPeer) { try await second.send([1]) }
        #expect(loop.a.openChannels == 0 && loop.b.openChannels == 0)
    }

    @Test func creditsPast65535DisconnectTheChannel() async throws {
        let loop = Loopback()
        var served: CreditBasedChannel?
        loop.b.serve(psm: Self.echo, parameters: .init(initialCredits: 10)) { served = $0 }
        let channel = try await loop.a.open(psm: Self.echo, on: Self.handle)
        await loop.settle()
        let remote = try #require(served)
        loop.inject(
            from: .b, cid: 0x0005,
            FlowControlCreditIndication(cid: remote.localCID, credits: 65530).command(identifier: 7).encoded())
        await loop.settle()
        #expect(channel.state == .closed(.protocolViolation("credits past 65535: 10 held, 65530 more granted")))
        #expect(remote.state == .closed(.closedByPeer), "our end asked the peer to close its end")
        await #expect(
            throws: CreditBasedChannelError.protocolViolation("credits past 65535: 10 held, 65530 more granted")
        ) {
            _ = try await channel.receive()
        }
    }

    @Test func aKFrameWithoutCreditOrTooLongDisconnectsOnlyItsChannel() async throws {
        let loop = Loopback()
        var served: [CreditBasedChannel] = []
        loop.b.serve(psm: Self.echo) { served.append($0) }
        // No initial credits: the peer may send nothing until we read.
        let starved = try await loop.a.open(
            psm: Self.echo, on: Self.handle, parameters: .init(mtu: 100, mps: 23, initialCredits: 0))
        let other = try await loop.a.open(
            psm: Self.echo, on: Self.handle, parameters: .init(mtu: 100, mps: 23, initialCredits: 5))
        let small = try await loop.a.open(
            psm: Self.echo, on: Self.handle, parameters: .init(mtu: 30, mps: 23, initialCredits: 5))
        await loop.settle()
        loop.inject(from: .b, cid: starved.localCID, [1, 0, 0xAA])
        loop.inject(from: .b, cid: other.localCID, [24, 0] + [UInt8](repeating: 1, count: 22))  // 24 octets > MPS 23
        loop.inject(from: .b, cid: small.localCID, [31, 0, 1])  // SDU 31 > MTU 30
        await loop.settle()
        #expect(starved.state == .closed(.protocolViolation("a K-frame arrived with no credit left")))
        #expect(other.state == .closed(.protocolViolation("a K-frame of 24 octets exceeds our MPS of 23")))
        #expect(small.state == .closed(.protocolViolation("an SDU of 31 octets exceeds our MTU of 30")))
        // The link and a new channel on it go on.
        let next = try await loop.a.open(psm: Self.echo, on: Self.handle)
        await loop.settle()
        try await served.last!.send([9])
        #expect(try await next.receive() == [9])
    }

    @Test func anSDULongerThanThePeersMTUIsNotSent() async throws {
        let loop = Loopback()
        loop.b.serve(psm: Self.echo, parameters: .init(mtu: 40, mps: 23)) { _ in }
        let channel = try await loop.a.open(psm: Self.echo, on: Self.handle)
        await #expect(throws: CreditBasedChannelError.sduTooLong(length: 41, mtu: 40)) {
            try await channel.send([UInt8](repeating: 0, count: 41))
        }
        try await channel.send([UInt8](repeating: 0, count: 40))
        #expect(channel.state == .open)
    }

    @Test func aRequestNobodyAnswersTimesOut() async throws {
        let loop = Loopback()
        loop.intercept = { _, _ in true }  // a peer that never answers
        let opening = Task { @BluetoothActor in try await loop.a.open(psm: Self.echo, on: Self.handle) }
        #expect(await eventually { loop.clock.sleeperCount == 1 })
        loop.clock.advance(by: .seconds(30))
        await #expect(throws: CreditBasedChannelError.timeout(.leCreditBasedConnectionRequest, seconds: 30)) {
            _ = try await opening.value
        }
    }

    @Test func aPendingEnhancedAnswerWaitsForTheNextOneUnderERTX() async throws {
        let loop = Loopback()
        serveEcho(loop)
        var held: SignalingCommand?
        loop.intercept = { side, command in
            guard side == .b, command.code == .creditBasedConnectionResponse, held == nil else { return false }
            held = command  // the real answer waits; a pending one goes first
            let pending = CreditBasedConnectionResponse(
                mtu: 64, mps: 64, initialCredits: 0,
                result: CreditBasedConnectionResult(rawValue: 0x000E, enhanced: true), destinationCIDs: [0, 0])
            loop.inject(from: .b, cid: 0x0005, pending.command(identifier: command.identifier).encoded())
            return true
        }
        let opening = Task { @BluetoothActor in try await loop.a.openEnhanced(psm: Self.echo, count: 2, on: Self.handle)
        }
        #expect(await eventually { held != nil && loop.isIdle && loop.clock.sleeperCount == 1 })
        // Past the RTX time the request still waits: the pending answer moved it to ERTX.
        loop.clock.advance(by: .seconds(31))
        await loop.settle()
        loop.inject(from: .b, cid: 0x0005, try #require(held).encoded())
        let channels = try await opening.value
        #expect(channels.count == 2)
    }

    @Test func aCommandRejectFailsTheRequestByReason() async throws {
        let loop = Loopback()
        loop.intercept = { side, command in
            guard side == .a, command.code == .leCreditBasedConnectionRequest else { return false }
            loop.inject(
                from: .b, cid: 0x0005,
                CommandReject(reason: .commandNotUnderstood).command(identifier: command.identifier).encoded())
            return true
        }
        let error = await expectError(CreditBasedChannelError.self) {
            _ = try await loop.a.open(psm: Self.echo, on: Self.handle)
        }
        #expect(error?.description == "request rejected: command not understood (0x0000)")
    }

    @Test func aRefusalForWantOfSecuritySecuresTheLinkAndAsksOnceMore() async throws {
        let loop = Loopback()
        serveEcho(loop)
        var refusals = 0
        loop.intercept = { side, command in
            guard side == .a, command.code == .leCreditBasedConnectionRequest, refusals == 0 else { return false }
            refusals += 1
            let refusal = LECreditBasedConnectionResponse(
                destinationCID: 0, mtu: 23, mps: 23, initialCredits: 0,
                result: CreditBasedConnectionResult(rawValue: 0x0008, enhanced: false))
            loop.inject(from: .b, cid: 0x0005, refusal.command(identifier: command.identifier).encoded())
            return true
        }
        var asked: [CreditBasedConnectionResult] = []
        loop.a.onSecurityRequired = { _, result in
            asked.append(result)
            return true
        }
        let channel = try await loop.a.open(psm: Self.echo, on: Self.handle)
        #expect(asked.map(\.rawValue) == [0x0008])
        try await channel.send([5])
        #expect(try await channel.receive() == [5])
        // Refused again after securing: the refusal is the answer, by name.
        refusals = 0
        loop.a.onSecurityRequired = { _, _ in false }
        await #expect(
            throws: CreditBasedChannelError.refused(CreditBasedConnectionResult(rawValue: 0x0008, enhanced: false))
        ) {
            _ = try await loop.a.open(psm: Self.echo, on: Self.handle)
        }
    }

    /// The link is lost while it is being secured: the open ends as link lost, with the
    /// reason, not with the refusal that started the pairing.
    @Test func aLinkLostWhileItIsSecuredEndsTheOpenAsLinkLost() async throws {
        let loop = Loopback()
        serveEcho(loop)
        loop.intercept = { side, command in
            guard side == .a, command.code == .leCreditBasedConnectionRequest else { return false }
            let refusal = LECreditBasedConnectionResponse(
                destinationCID: 0, mtu: 23, mps: 23, initialCredits: 0,
                result: CreditBasedConnectionResult(rawValue: 0x0008, enhanced: false))
            loop.inject(from: .b, cid: 0x0005, refusal.command(identifier: command.identifier).encoded())
            return true
        }
        loop.a.onSecurityRequired = { handle, _ in
            loop.a.linkEnded(handle, reason: .connectionTimeout)
            return false
        }
        await #expect(throws: CreditBasedChannelError.linkLost(.connectionTimeout)) {
            _ = try await loop.a.open(psm: Self.echo, on: Self.handle)
        }
    }

    @Test func aLinkThatEndsEndsItsChannelsWithTheReason() async throws {
        let loop = Loopback()
        serveEcho(loop)
        let channel = try await loop.a.open(psm: Self.echo, on: Self.handle)
        loop.a.linkEnded(Self.handle, reason: .remoteUserTerminatedConnection)
        await #expect(throws: CreditBasedChannelError.linkLost(.remoteUserTerminatedConnection)) {
            _ = try await channel.receive()
        }
        #expect(loop.a.openChannels == 0)
    }

    @Test func aDisconnectionRequestForNoChannelIsRejectedInvalidCID() async throws {
        let loop = Loopback()
        loop.inject(
            from: .a, cid: 0x0005,
            DisconnectionRequest(destinationCID: 0x0077, sourceCID: 0x0040).command(identifier: 3).encoded())
        await loop.settle()
        let reject = try CommandReject(command: try #require(loop.commands(from: .b).last))
        #expect(reject.reason == .invalidCID)
        #expect(
            try reject.reasonData(CommandReject.InvalidCID.self)
                == CommandReject.InvalidCID(localCID: 0x0077, remoteCID: 0x0040))
    }

    @Test func reconfigurationFollowsTheRules() async throws {
        let loop = Loopback()
        var served: [CreditBasedChannel] = []
        loop.b.serve(psm: Self.echo, parameters: .init(mtu: 100, mps: 64)) { served.append($0) }
        let channels = try await loop.a.openEnhanced(
            psm: Self.echo, count: 2, on: Self.handle, parameters: .init(mtu: 100, mps: 64))
        await loop.settle()
        func answer(_ request: CreditBasedReconfigureRequest, _ identifier: UInt8) async throws -> UInt16 {
            loop.inject(from: .b, cid: 0x0005, request.command(identifier: identifier).encoded())
            await loop.settle()
            return try CreditBasedReconfigureResponse(
                command: try #require(loop.commands(from: .a).last { $0.identifier == identifier })
            ).result.rawValue
        }
        let theirs = served.map(\.localCID)
        #expect(try await answer(.init(mtu: 99, mps: 64, destinationCIDs: theirs), 20) == 0x0001)
        #expect(try await answer(.init(mtu: 200, mps: 64, destinationCIDs: theirs + [0x007F]), 21) == 0x0003)
        #expect(try await answer(.init(mtu: 200, mps: 300, destinationCIDs: theirs), 22) == 0x0000)
        #expect(channels.allSatisfy { $0.remoteMTU == 200 && $0.remoteMPS == 300 })
    }
}

/// One side's links in the loop: every handle counts as an open link, its state made on
/// first use and kept until the test ends the link.
@BluetoothActor
final class Links: CreditBasedLinkStore {
    private var states: [ConnectionHandle: CreditBasedLink] = [:]

    func state(_ handle: ConnectionHandle, make: () -> CreditBasedLink) -> CreditBasedLink? {
        if let state = states[handle] { return state }
        let made = make()
        states[handle] = made
        return made
    }

    func existing(_ handle: ConnectionHandle) -> CreditBasedLink? { states[handle] }

    var all: [CreditBasedLink] { Array(states.values) }

    func remove(_ handle: ConnectionHandle) { states[handle] = nil }
}
