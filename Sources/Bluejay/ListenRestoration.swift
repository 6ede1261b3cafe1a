import BluetoothCore
import DiscoveryCache
import FoundationEssentials
import HCI

/// Whether and how Bluejay restores its connection and listens after the process restarts
/// (iOS's state restoration, docs/ARCHITECTURE.md's porting map).
public enum BackgroundRestoreMode: Sendable {
    /// Nothing is recorded or restored.
    case disable
    /// The connected peripheral and its listens are recorded under this identifier; after a
    /// restart Bluejay reconnects and turns the recorded listens off (no restorer to take them).
    case enable(String)
    /// As `.enable`, and the restorer decides, listen by listen, whether to take each back.
    case enableWithListenRestorer(String, any ListenRestorer)

    /// As `.enableWithListenRestorer`: Bluejay's README spelling, `.enable(identifier, restorer)`.
    public static func enable(_ identifier: String, _ restorer: any ListenRestorer) -> Self {
        .enableWithListenRestorer(identifier, restorer)
    }

    var identifier: String? {
        switch self {
        case .disable: nil
        case let .enable(identifier), let .enableWithListenRestorer(identifier, _): identifier
        }
    }

    var restorer: (any ListenRestorer)? {
        if case let .enableWithListenRestorer(_, restorer) = self { return restorer }
        return nil
    }
}

/// Offered each listen that was active when the process stopped.
@MainActor
public protocol ListenRestorer: AnyObject, Sendable {
    /// Return true after calling ``Bluejay/restoreListen(to:multipleListenOption:completion:)``
    /// for `characteristic`; false turns the listen off (its CCCD is written to 0).
    func willRestoreListen(on characteristic: CharacteristicIdentifier) -> Bool
}

/// What is recorded for restoration: the peripheral and the characteristics listened to.
struct RestorationRecord: Codable, Equatable, Sendable {
    struct Listen: Codable, Equatable, Hashable, Sendable {
        var service: String
        var characteristic: String
    }

    var format = "bluejay-restoration"
    var version = 1
    var peripheral: String?
    var addressType: String?
    var listens: [Listen] = []

    var peripheralIdentifier: PeripheralIdentifier? {
        guard let peripheral, let address = BluetoothAddress(peripheral) else { return nil }
        return PeripheralIdentifier(address: address, addressType: addressType == "random" ? .random : .public)
    }

    var characteristics: [CharacteristicIdentifier] {
        listens.compactMap { listen in
            guard let service = BluetoothUUID(listen.service), let characteristic = BluetoothUUID(listen.characteristic)
            else { return nil }
            return CharacteristicIdentifier(uuid: characteristic, service: ServiceIdentifier(uuid: service))
        }
    }
}

/// Recording the connection and listens, and taking them back after a restart.
extension Bluejay {
    /// Takes back a listen offered to the ``ListenRestorer``: the same as a listen, whose
    /// subscription is written again (the peer forgets it for an unbonded client).
    public func restoreListen<R: Receivable>(
        to characteristicIdentifier: CharacteristicIdentifier,
        multipleListenOption: MultipleListenOption = .replaceable,
        completion: @escaping @MainActor (ReadResult<R>) -> Void
    ) {
        listen(to: characteristicIdentifier, multipleListenOption: multipleListenOption, completion: completion)
    }

    /// After a restart: reconnect to the recorded peripheral and offer each recorded listen
    /// to the restorer; what it does not take back is turned off.
    func restore() {
        guard let record = core.read(\.restoration)?.load(), let peripheral = record.peripheralIdentifier else {
            return
        }
        log("restoring the connection to \(peripheral) and \(record.listens.count) listens")
        connect(
            peripheral, timeout: .seconds(15),
            then: { [weak self] result in
                guard let self, case .success = result else { return }
                for characteristic in record.characteristics {
                    if self.listener(of: characteristic) != nil { continue }
                    if self.restorer?.willRestoreListen(on: characteristic) == true,
                        self.listener(of: characteristic) != nil
                    {
                        continue
                    }
                    // Nobody takes it: leave no subscription behind.
                    self.endListen(to: characteristic)
                }
            })
    }

    /// Records the connected peripheral and the active listens (when restoration is on),
    /// from either actor.
    nonisolated func recordRestorationState() {
        guard let restoration = core.read(\.restoration) else { return }
        let record = core.read(\.restorationRecord)
        do { try restoration.save(record) } catch { logLater("recording restoration state: \(error)") }
    }
}

/// Reads and writes the restoration record in the store (atomically, mode 0600).
struct RestorationStore: Sendable {
    let directory: StoreDirectory
    let identifier: String

    private var fileName: String {
        identifier.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? String($0) : "_" }.joined() + ".json"
    }

    func load() -> RestorationRecord? {
        guard let bytes = try? directory.read(fileName),
            let record = try? JSONDecoder().decode(RestorationRecord.self, from: Data(bytes)),
            record.format == "bluejay-restoration", record.version == 1
        else { return nil }
        return record
    }

    func save(_ record: RestorationRecord) throws(StoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(record) else { throw .malformed("restoration record") }
        try directory.writeAtomically(Array(data), to: fileName)
    }
}
