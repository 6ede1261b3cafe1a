import ArgumentParser
import Bluejay
import BluetoothCore
import GAP
import HCI

/// `--address` and `--renew` of `bluejay advertise` and `serve`: the address advertising
/// carries (Core 6.0 Vol 6, Part B, 1.3).
struct AddressOptions: ParsableArguments {
    @Option(
        name: .long,
        help: """
            The address to advertise from: public (default; static on a controller with no public address), \
            static (our static random address, kept in the store), \
            private (a resolvable private address made with our IRK, renewed every --renew seconds) or a static \
            random address AA:BB:CC:DD:EE:FF.
            """)
    var address: String?

    @Option(
        name: .long,
        help: "With --address private: seconds between new private addresses (default 900, TGAP(private_addr_int)).")
    var renew: Double?

    func validate() throws {
        switch address {
        case nil, "public", "static", "private": break
        case let text?:
            guard let given = BluetoothAddress(text) else {
                throw ValidationError(
                    "--address is public, static, private or a static random address AA:BB:CC:DD:EE:FF")
            }
            guard given.isValidStaticRandom else {
                throw ValidationError("--address \(text) is not a static random address (its top two bits must be 11)")
            }
        }
        if let renew {
            guard address == "private" else { throw ValidationError("--renew goes with --address private") }
            guard renew >= 1 else { throw ValidationError("--renew must be at least 1 second") }
        }
    }

    /// The own-address choice for `manager` (whose store keeps our static random address).
    @BluetoothActor
    func ownAddress(for manager: PeripheralManager) -> OwnAddress {
        switch address {
        case nil: manager.publicAddress == nil ? .staticRandom(manager.staticRandomAddress) : .public
        case "public": .public
        case "static": .staticRandom(manager.staticRandomAddress)
        case "private":
            .resolvablePrivate(
                renewal: renew.map { .milliseconds(Int64(($0 * 1000).rounded())) } ?? OwnAddress.privateAddressInterval)
        case let text?: BluetoothAddress(text).map(OwnAddress.staticRandom) ?? .public
        }
    }

    /// Prints the address advertising runs from, and each new private address as it
    /// comes (only for a random one, asked for or the default on a controller with no
    /// public address; with the public address it prints nothing more).
    @BluetoothActor
    func announce(_ manager: PeripheralManager) {
        guard let (type, now) = manager.advertisingAddress, type == .random else { return }
        print("advertising address \(now) (\(now.randomKind) random)")
        manager.advertiser.onAddressRenewed = { address in
            print("advertising address \(address) (\(address.randomKind) random)")
            flushStandardOutput()
        }
    }
}
