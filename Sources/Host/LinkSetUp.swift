import ATT
import BluetoothCore
import DiscoveryCache
import GATT
import HCI
import SMP

/// The order-sensitive start of a new link's GATT client, written once for the library
/// (``BluetoothHost/client(for:identity:)``) and the command line alike.
///
/// 1. A bonded peer's cached database is preloaded before encryption starts: the peer may
///    indicate Service Changed as soon as the link is encrypted, and that indication must
///    find the database it invalidates.
/// 2. A bonded peer's link is encrypted at once, as BlueZ does: its protected attributes
///    and remembered subscriptions work from the first request.
/// 3. A request refused for want of security secures the link (stored key, or pairing when
///    the policy allows) and is sent again once, as iOS does.
/// 4. Exchange MTU (a server that refuses it leaves the link at ATT_MTU 23, unless
///    `mtuRefusalFails`: the tool that asked for an MTU reports the refusal).
/// 5. The cache is prepared: validated by the Database Hash, or trusted on a link
///    encrypted with the peer's bond that was saved subscribed to Service Changed.
package struct LinkSetUp {
    /// How the cache was prepared (step 5).
    package let outcome: DiscoveryCache.Outcome
    /// Whether the link is encrypted with the peer's stored bond.
    package let bondedLink: Bool

    /// Runs the steps on `client`, the new GATT client of link `handle` to the peer whose
    /// cache entry is `identity`.
    @BluetoothActor
    package static func run(
        _ client: GATTClient, handle: ConnectionHandle, identity: String, security: SecurityManager,
        cache: DiscoveryCache, mtuRefusalFails: Bool = false
    ) async throws(GATTError) -> LinkSetUp {
        if security.bond(for: handle) != nil { cache.preload(client, identity: identity) }
        let bonded = await security.encryptIfBonded(handle)
        let bondedLink = security.isEncryptedWithStoredBond(handle)
        client.bearer.onSecurityRequired = { [weak security] code in
            await security?.securityRequired(handle, for: code) ?? false
        }
        do throws(GATTError) { try await client.exchangeMTU() } catch {
            guard !mtuRefusalFails, case .att(.errorResponse) = error else { throw error }
        }
        let outcome = try await cache.prepare(client, identity: identity, bonded: bonded, bondedLink: bondedLink)
        return LinkSetUp(outcome: outcome, bondedLink: bondedLink)
    }
}
