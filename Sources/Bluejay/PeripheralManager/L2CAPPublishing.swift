import L2CAP

/// An L2CAP PSM our peripheral listens on (CoreBluetooth's published L2CAP channel): the
/// channels centrals open to it, in the order they open, as an `AsyncSequence`. It ends
/// when the PSM is unpublished or the manager closes.
public struct PublishedL2CAPChannel: AsyncSequence, Sendable {
    /// The channels accepted.
    public typealias Element = L2CAPChannel
    /// It does not fail.
    public typealias Failure = Never

    /// The PSM centrals open channels to (the LE_PSM, or SPSM).
    public let psm: PSM
    let channels: AsyncStream<L2CAPChannel>

    /// The accepted channels, in order.
    public func makeAsyncIterator() -> AsyncStream<L2CAPChannel>.Iterator { channels.makeAsyncIterator() }
}

/// Why a PSM could not be published.
public enum L2CAPPublishingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The PSM is served already.
    case psmInUse(PSM)
    /// Every dynamic LE PSM (0x0080–0x00FF) is served already.
    case noFreePSM
    /// The PSM or the parameters are not valid for an LE credit based channel.
    case invalidParameters(String)

    /// Readable.
    public var description: String {
        switch self {
        case let .psmInUse(psm): "\(psm) is published already"
        case .noFreePSM: "every dynamic LE PSM (0x0080-0x00FF) is published already"
        case let .invalidParameters(problem): problem
        }
    }
}

/// Finishes the stream of accepted channels when the L2CAP layer lets go of the server
/// (unpublished, or the stack closed).
private final class AcceptedChannels: Sendable {
    let continuation: AsyncStream<L2CAPChannel>.Continuation
    init(_ continuation: AsyncStream<L2CAPChannel>.Continuation) { self.continuation = continuation }
    deinit { continuation.finish() }
}

extension PeripheralManager {
    /// Listens for LE credit based channels centrals open to `psm` (nil: the lowest
    /// dynamic LE PSM not published yet, 0x0080–0x00FF), as CoreBluetooth's
    /// `publishL2CAPChannel` does; each channel opened is accepted with `parameters` (what
    /// this end receives: MTU, MPS, initial credits) and comes out of the returned
    /// sequence, to `send` on and read `sdus` from. Requests for a PSM nobody publishes are
    /// refused with SPSM not supported (0x0002). No security is asked of the link: the app
    /// checks `host.security.isEncrypted(channel.handle)` if it needs that.
    public func publishL2CAPChannel(psm: UInt16? = nil, parameters: CreditBasedChannelParameters = .init())
        throws(L2CAPPublishingError) -> PublishedL2CAPChannel
    {
        let channels = host.channels.creditBased
        let served = channels.servedPSMs
        let chosen: PSM
        if let psm {
            chosen = PSM(rawValue: psm)
            guard (0x0001...0x00FF).contains(psm) else {
                throw .invalidParameters("\(chosen) is outside the LE range 0x0001…0x00FF")
            }
            guard !served.contains(chosen) else { throw .psmInUse(chosen) }
        } else {
            guard let free = PSM.dynamicLE.first(where: { !served.contains(PSM(rawValue: $0)) }) else {
                throw .noFreePSM
            }
            chosen = PSM(rawValue: free)
        }
        if let problem = parameters.problem(enhanced: false) { throw .invalidParameters(problem) }
        let (stream, continuation) = AsyncStream<L2CAPChannel>.makeStream()
        let accepted = AcceptedChannels(continuation)
        channels.serve(psm: chosen, parameters: parameters) { channel in accepted.continuation.yield(channel) }
        return PublishedL2CAPChannel(psm: chosen, channels: stream)
    }

    /// Stops listening on `psm` (CoreBluetooth's `unpublishL2CAPChannel`): later requests
    /// are refused, its sequence of channels ends; channels open now stay open.
    public func unpublishL2CAPChannel(_ psm: PSM) {
        host.channels.creditBased.stopServing(psm: psm)
    }
}
