import BluetoothCore
import GAP
import HCI

/// The address we advertise from (Core 6.0 Vol 6, Part B, 1.3; Vol 3, Part C, 10.7):
/// `AdvertisingParameters.ownAddress` picks the public address, a static random address
/// (``staticRandomAddress``, kept in the store) or a resolvable private address made with
/// our IRK and renewed every 15 minutes (TGAP(private_addr_int), settable). A central that
/// pairs with us gets our IRK and identity address, resolves our next private address and
/// finds its bond behind it.
///
/// ```swift
/// try await manager.startAdvertising(Advertisement(localName: "Thermometer"),
///                                    parameters: AdvertisingParameters(ownAddress: .resolvablePrivate()))
/// ```
extension PeripheralManager {
    /// Our static random address: made once and kept in the store directory
    /// (`bonds/local-static-address`), so it stays our identity across restarts. Advertise
    /// from it with `AdvertisingParameters(ownAddress: .staticRandom(manager.staticRandomAddress))`.
    public var staticRandomAddress: BluetoothAddress { host.security.staticRandomAddress }

    /// The controller's public address; nil when it has none (Read BD_ADDR gives
    /// 00:00:00:00:00:00, Vol 4 Part E 7.4.6): advertise from ``staticRandomAddress`` or
    /// a resolvable private address then, and the static one is our identity.
    public var publicAddress: BluetoothAddress? {
        host.controller.info?.publicAddress
    }

    /// The address advertising carries now, with its type (the resolvable private address
    /// in use, the static random one, or the public one); nil when not advertising.
    public var advertisingAddress: (type: AddressType, address: BluetoothAddress)? {
        guard isAdvertising else { return nil }
        if let random = advertiser.randomAddress { return (.random, random) }
        return host.controller.info.map { (.public, $0.address) }
    }

    /// Our address on link `handle` as the central connected to it (what pairing on that
    /// link hashes); nil for a link we did not accept from our advertising.
    public func localAddress(of handle: ConnectionHandle) -> (type: AddressType, address: BluetoothAddress)? {
        advertiser.localAddress(of: handle)
    }

    /// Advertises from a new resolvable private address now, without waiting for the
    /// renewal timer (advertising pauses for the three commands this takes, then runs on
    /// with the same data). Fails unless advertising runs from a resolvable private address.
    public func renewPrivateAddress() async throws(PeripheralManagerError) {
        do { try await advertiser.renewPrivateAddress() } catch { throw .advertising(error) }
    }
}
