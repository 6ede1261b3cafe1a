import ArgumentParser
import Bluejay
import BluetoothCore
import GATT
import HCI
import SMP
import Storage
import TraceDecoding
#if canImport(Glibc)
    import Glibc
#endif

/// The pairing user interface on the terminal: prompts on standard error, answers read from
/// standard input (so a script can pipe the passkey in).
final class TerminalPairing: PairingDelegate {
    func confirm(numericValue value: UInt32) async -> Bool {
        let answer = await prompt("Does the peripheral show \(sixDigits(value))? [y/N] ")
        return answer?.lowercased().hasPrefix("y") == true
    }

    func display(passkey: UInt32) async {
        printError("Type this passkey on the peripheral: \(sixDigits(passkey))")
    }

    func enterPasskey() async -> UInt32? {
        guard let line = await prompt("Enter the passkey the peripheral shows: "),
            let passkey = UInt32(line.filter { !$0.isWhitespace }),
            passkey <= 999_999
        else { return nil }
        return passkey
    }

    private func sixDigits(_ value: UInt32) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// Reads a line off the stack's actor, so the link keeps running while the user types.
    private func prompt(_ text: String) async -> String? {
        printError(text, terminator: "")
        return await standardInputLine()
    }
}

/// `bluejay pair ADDRESS`: pair and bond now.
struct Pair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a peripheral and store the bond.",
        discussion:
            "LE Secure Connections (Just Works, Numeric Comparison, Passkey Entry) or LE legacy pairing (Just Works, Passkey Entry), as the IO capabilities decide. Passkeys and confirmations are asked for on the terminal (standard input). Bonds live in $BLUEJAY_STORE/bonds."
    )

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions

    @Flag(
        name: .long,
        help:
            "One JSON object: address, method, secure_connections, authenticated, key_size, identity_address, bond_file."
    )
    var json = false

    func run() async throws {
        let json = json
        let line = try await peripheral.withSecuredClient(common, discovery: false) { _, _, connection, security in
            let pairing = try await security.pair(connection.handle)
            let bond = pairing.bond
            let name = BondStore.fileName(bond.address)
            let file = security.bonds.directory.path + "/" + name
            if json {
                return
                    "{\"address\": \(JSONValue.quote(connection.peerAddress.description)), \"method\": \(JSONValue.quote(pairing.method.description)), "
                    + "\"secure_connections\": \(pairing.secureConnections), \"authenticated\": \(bond.authenticated), \"key_size\": \(bond.keySize), "
                    + "\"identity_address\": \(JSONValue.quote(bond.address + "/" + bond.addressType)), \"bond_file\": \(JSONValue.quote(file))}"
            }
            return
                "paired with \(connection.peerAddress): \(pairing.method), \(pairing.secureConnections ? "LE Secure Connections" : "LE legacy pairing"), "
                + "key size \(bond.keySize)\(bond.authenticated ? ", authenticated" : ""); identity \(bond.address)/\(bond.addressType); "
                + "bond stored as bonds/\(name) in the store"
        }
        print(line)
    }
}

/// `bluejay bonds`: the stored bonds, without their keys.
struct Bonds: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bonds",
        abstract: "List the stored bonds (never their keys).", subcommands: [StressWrite.self])

    /// `bluejay bonds stress-write`: a test hook for the durability test (SIGKILL at random
    /// moments must leave every bond file whole).
    struct StressWrite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stress-write", abstract: "Test hook: write bonds in a tight loop.", shouldDisplay: false)

        @Option(name: .long, help: "How many bonds to write.")
        var count = 1000

        func validate() throws {
            guard count >= 0 else { throw ValidationError("--count must not be negative") }
        }

        func run() async throws {
            let store = BondStore(store: .standard)
            for index in 0..<count {
                // Three peers, each rewritten with keys that change, with and without an IRK and CSRK.
                let peer = BluetoothAddress(littleEndianBytes: [UInt8(index % 3 + 1), 0, 0, 0, 0, 0xC0])
                let key = (0..<16).map { UInt8(truncatingIfNeeded: index &+ $0) }
                let bond = Bond(
                    address: peer, addressType: .random, longTermKey: key, ediv: UInt16(truncatingIfNeeded: index),
                    secureConnections: index % 2 == 0, authenticated: index % 3 == 0,
                    identityResolvingKey: index % 4 == 0 ? nil : key, signatureKey: index % 5 == 0 ? key : nil)
                do { try store.save(bond) } catch { throw CLIError("bonds: \(error)") }
            }
        }
    }

    @Flag(
        name: .long,
        help: "One JSON object per bond: address, address_type, secure_connections, authenticated, key_size, irk, csrk."
    )
    var json = false

    func run() async throws {
        let store = BondStore(store: .standard)
        for bond in store.all() {
            if json {
                print(
                    "{\"address\": \(JSONValue.quote(bond.address)), \"address_type\": \(JSONValue.quote(bond.addressType)), \"secure_connections\": \(bond.secureConnections), "
                        + "\"authenticated\": \(bond.authenticated), \"key_size\": \(bond.keySize), \"irk\": \(bond.identityResolvingKey != nil), \"csrk\": \(bond.signatureKey != nil)}"
                )
            } else {
                print(
                    "\(bond.address)/\(bond.addressType)  \(bond.secureConnections ? "LE Secure Connections" : "LE legacy")\(bond.authenticated ? ", authenticated" : ", unauthenticated"), "
                        + "key size \(bond.keySize)\(bond.identityResolvingKey != nil ? ", IRK" : "")\(bond.signatureKey != nil ? ", CSRK" : "")"
                )
            }
        }
        for name in store.unreadable() {
            printError("warning: \(store.directory.path)/\(name) is not a bond this version reads")
        }
    }
}

/// `bluejay unpair ADDRESS`: forget a bond.
struct Unpair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpair", abstract: "Forget the bond with a peer (its identity address).")

    @Argument(help: "The peer's identity address: AA:BB:CC:DD:EE:FF.")
    var address: String

    func validate() throws {
        guard let (parsed, _) = Connect.parse(address), parsed.description.count == 17 else {
            throw ValidationError("'\(address)' is not an address: expected AA:BB:CC:DD:EE:FF")
        }
    }

    func run() async throws {
        let (address, _) = Connect.parse(address)!
        let store = BondStore(store: .standard)
        let removed: Bool
        do { removed = try store.remove(address) } catch { throw CLIError("unpair: \(error)") }
        // The subscriptions our GATT server kept for it as a bonded central go with the bond.
        let kept: Bool
        do { kept = try BondedCentralStore(bonds: store).remove(address.description) } catch {
            throw CLIError("unpair: \(error)")
        }
        guard removed || kept else { throw CLIError("no bond with \(address)") }
        print("forgot the bond with \(address)")
    }
}

/// Writes `text` to standard error (prompts and warnings stay out of piped output).
func printError(_ text: String, terminator: String = "\n") {
    let line = text + terminator
    _ = line.withCString { write(2, $0, strlen($0)) }
}
