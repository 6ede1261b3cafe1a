import ArgumentParser
import ATT
import BluetoothCore
import GATT
import HCI
import TraceDecoding
import VirtualController

/// `bluejay mock FILE`: the peers a btsnoop recording shows, as a virtual controller would
/// serve them, and what the recording does not show of them.
struct Mock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock",
        abstract: "Show the peers a btsnoop recording lets a virtual controller stand in for.",
        discussion: """
            Rebuilds every LE peer the recording host connected to from the recording alone: its address, \
            advertising data, ATT_MTU, the GATT database its discovery responses showed, the values seen in reads, \
            writes, notifications and indications, its Error Responses, and what it sent after each write \
            (reactions); then lists what the recording does not show (missing). A connection that began before \
            the capture gets a made-up static random address, the same every time. ATT over BR/EDR and EATT are \
            not read. With --json: {"file", "advertisers_not_connected", "peripherals": [{"address", \
            "address_type", "address_made_up", "name", "connections", "advertising_data", "scan_response_data", \
            "mtu", "services": [{"uuid", "name", "start_handle", "end_handle", "primary", "includes": [{"handle", \
            "uuid", "start_handle", "end_handle"}], "characteristics": [{"uuid", "name", "declaration_handle", \
            "value_handle", "properties": [...], "value": hex|null, "first_value": hex|null, "descriptors": [{"uuid", "name", "handle", \
            "value": hex|null}]}]}], "undiscovered_handles": [{"handle", "value"}], "attributes_outside_services": \
            [{"handle", "uuid", "name", "value"}], "errors": [{"request", "handle", "code", "name", "encrypted", \
            "overridden"}], "reactions": [{"trigger": {"write": {"handle", "value"}} or {"subscription": \
            {"handle"}}, "notifications", "indications"}], "missing": [...]}]}. Handles and codes are numbers, \
            values lowercase hex.
            """)

    @Argument(help: "A btsnoop file.")
    var file: String

    @Option(name: .long, help: "Show only the peer with this address (AA:BB:CC:DD:EE:FF).")
    var peer: String?

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    /// Reactions listed one by one in the text; the rest are counted.
    static let reactionsShown = 20

    func validate() throws {
        if let peer, BluetoothAddress(peer) == nil {
            throw ValidationError("--peer: \(peer) is no address (AA:BB:CC:DD:EE:FF)")
        }
    }

    func run() async throws {
        let reconstruction: TraceReconstruction
        do { reconstruction = try TraceReconstruction(path: file) } catch { throw CLIError(error.description) }
        var peripherals = reconstruction.peripherals
        if let peer, let address = BluetoothAddress(peer) {
            peripherals = peripherals.filter { $0.address == address }
            if peripherals.isEmpty {
                let known = reconstruction.peripherals.map(\.address.description)
                throw CLIError(
                    "\(file): no peer \(peer) in the recording; "
                        + (known.isEmpty ? "it has none" : "it has \(known.joined(separator: ", "))"))
            }
        }
        if json {
            print(
                Self.json(peripherals, file: file, advertisersNotConnected: reconstruction.advertisersNotConnected)
                    .rendered(indent: 2))
        } else {
            print(
                "\(file): \(reconstruction.peripherals.count) connected peer(s), "
                    + "\(reconstruction.advertisersNotConnected) advertiser(s) never connected")
            for peripheral in peripherals {
                print("")
                for line in Self.lines(peripheral) { print(line) }
            }
        }
    }

    // MARK: Text

    static func lines(_ peer: RecordedPeripheral) -> [String] {
        /// A value as the tree shows it; one the recording never showed says so.
        func shown(_ value: [UInt8]?) -> String { value.map { Gatt.describe($0, limit: 32) } ?? "never seen" }
        var lines = ["Peer \(peer.address) (\(peer.addressType))" + (peer.addressIsMadeUp ? "  [address made up]" : "")]
        lines.append("  name: " + (peer.name.map { "\"\($0)\"" } ?? "-"))
        lines.append(
            "  connections: \(peer.connectionHandles.count) (handles \(peer.connectionHandles.map(\.description).joined(separator: ", ")))"
        )
        lines.append(
            "  advertising data: " + (peer.advertisingData.map { $0.isEmpty ? "(empty)" : $0.hexString() } ?? "-"))
        lines.append(
            "  scan response: " + (peer.scanResponseData.map { $0.isEmpty ? "(empty)" : $0.hexString() } ?? "-"))
        lines.append("  ATT_MTU: " + (peer.mtu.map(String.init) ?? "-"))
        let services = peer.services
        let characteristics = services.reduce(0) { $0 + $1.characteristics.count }
        let valuesKnown = peer.attributes.filter { $0.value != nil }.count
        lines.append(
            "  attributes: \(peer.attributes.count) (\(valuesKnown) with a value), services: \(services.count), characteristics: \(characteristics)"
        )
        for service in services {
            let kind = service.isPrimary ? "primary" : "secondary"
            lines.append(
                "  Service \(hex(service.handle, digits: 4))–\(hex(service.endHandle, digits: 4)) "
                    + "\(service.uuid?.nameAndValue ?? "(no UUID)") (\(kind))")
            for include in service.includes {
                let range =
                    include.startHandle.map { start in
                        "\(hex(start, digits: 4))–\(include.endHandle.map { hex($0, digits: 4) } ?? "?")"
                    } ?? "?"
                lines.append(
                    "    Include \(hex(include.handle, digits: 4)) → \(range)"
                        + (include.uuid.map { " \($0.nameAndValue)" } ?? ""))
            }
            for characteristic in service.characteristics {
                lines.append(
                    "    Characteristic \(characteristic.uuid.nameAndValue)  handle \(hex(characteristic.declarationHandle, digits: 4)), "
                        + "value \(hex(characteristic.valueHandle, digits: 4)) [\(characteristic.properties)]"
                        + (peer.attribute(at: characteristic.valueHandle)?.requiresEncryption == true
                            ? " (encryption required)" : ""))
                lines.append("      Value: " + shown(characteristic.value))
                if let first = characteristic.initialValue {
                    lines.append("      First value (served first): " + shown(first))
                }
                for descriptor in characteristic.descriptors {
                    lines.append(
                        "      Descriptor \(hex(descriptor.handle, digits: 4)) \(descriptor.type?.nameAndValue ?? "?"): "
                            + shown(descriptor.value))
                }
            }
        }
        let outside = peer.attributesOutsideServices
        if !outside.isEmpty {
            lines.append("  Attributes outside any recorded service:")
            for attribute in outside {
                lines.append(
                    "    \(hex(attribute.handle, digits: 4)) \(attribute.type?.nameAndValue ?? "?"): "
                        + shown(attribute.value))
            }
        }
        let undiscovered = peer.undiscoveredAttributes
        if !undiscovered.isEmpty {
            lines.append("  Handles never discovered (type unknown):")
            for attribute in undiscovered {
                lines.append(
                    "    \(hex(attribute.handle, digits: 4)): " + shown(attribute.value)
                        + (attribute.requiresEncryption ? " (encryption required)" : ""))
            }
        }
        if !peer.errors.isEmpty {
            lines.append("  Errors: \(peer.errors.count)")
            // The same error on every connection (discovery's Attribute Not Found) once, counted.
            var order: [RecordedError] = []
            var counts: [Int] = []
            for error in peer.errors {
                if let index = order.firstIndex(of: error) {
                    counts[index] += 1
                } else {
                    order.append(error)
                    counts.append(1)
                }
            }
            for (error, count) in zip(order, counts) {
                lines.append(
                    "    \(error.request.name) \(hex(error.handle, digits: 4)): \(error.code)"
                        + (error.encrypted ? " (link encrypted)" : " (link not encrypted)")
                        + (error.overridden ? " [overridden: a later request succeeded]" : "")
                        + (count > 1 ? " ×\(count)" : ""))
            }
        }
        if !peer.reactions.isEmpty {
            let notifications = peer.reactions.reduce(0) { $0 + $1.notifications.filter { !$0.isIndication }.count }
            let indications = peer.reactions.reduce(0) { $0 + $1.notifications.filter(\.isIndication).count }
            lines.append(
                "  Reactions: \(peer.reactions.count) (\(notifications) notifications, \(indications) indications in all)"
            )
            for reaction in peer.reactions.prefix(reactionsShown) {
                let trigger =
                    switch reaction.trigger {
                    case let .write(handle, value):
                        "write \(hex(handle, digits: 4)) ← \(value.isEmpty ? "(empty)" : value.hexString())"
                    case let .subscription(handle): "subscription \(hex(handle, digits: 4))"
                    }
                let indicated = reaction.notifications.filter(\.isIndication).count
                lines.append(
                    "    \(trigger): \(reaction.notifications.count - indicated) notification(s), \(indicated) indication(s)"
                )
            }
            if peer.reactions.count > reactionsShown {
                lines.append("    … \(peer.reactions.count - reactionsShown) more (--json lists them all)")
            }
        }
        let missing = peer.missing
        if !missing.isEmpty {
            lines.append("  Missing:")
            for item in missing { lines.append("    - \(item)") }
        }
        return lines
    }

    // MARK: JSON

    static func json(_ peripherals: [RecordedPeripheral], file: String, advertisersNotConnected: Int) -> JSONValue {
        .object([
            "file": .string(file),
            "advertisers_not_connected": .number(advertisersNotConnected),
            "peripherals": .array(peripherals.map(json)),
        ])
    }

    static func json(_ peer: RecordedPeripheral) -> JSONValue {
        func name(_ uuid: BluetoothUUID?) -> JSONValue { uuid?.assignedName.map(JSONValue.string) ?? .null }
        func uuid(_ uuid: BluetoothUUID?) -> JSONValue { uuid.map { .string($0.description) } ?? .null }
        func bytes(_ value: [UInt8]?) -> JSONValue { value.map { .string($0.hexString()) } ?? .null }
        func handle(_ handle: AttributeHandle) -> JSONValue { .number(Int(handle.rawValue)) }
        let services: [JSONValue] = peer.services.map { service in
            .object([
                "uuid": uuid(service.uuid), "name": name(service.uuid),
                "start_handle": handle(service.handle), "end_handle": handle(service.endHandle),
                "primary": .bool(service.isPrimary),
                "includes": .array(
                    service.includes.map { include in
                        .object([
                            "handle": handle(include.handle), "uuid": uuid(include.uuid),
                            "start_handle": include.startHandle.map(handle) ?? .null,
                            "end_handle": include.endHandle.map(handle) ?? .null,
                        ])
                    }),
                "characteristics": .array(
                    service.characteristics.map { characteristic in
                        .object([
                            "uuid": uuid(characteristic.uuid), "name": name(characteristic.uuid),
                            "declaration_handle": handle(characteristic.declarationHandle),
                            "value_handle": handle(characteristic.valueHandle),
                            "properties": .array(characteristic.properties.names.map(JSONValue.string)),
                            "value": bytes(characteristic.value), "first_value": bytes(characteristic.initialValue),
                            "descriptors": .array(
                                characteristic.descriptors.map { descriptor in
                                    .object([
                                        "uuid": uuid(descriptor.type), "name": name(descriptor.type),
                                        "handle": handle(descriptor.handle),
                                        "value": bytes(descriptor.value),
                                    ])
                                }),
                        ])
                    }),
            ])
        }
        let reactions: [JSONValue] = peer.reactions.map { reaction in
            let trigger: JSONValue =
                switch reaction.trigger {
                case let .write(written, value):
                    .object(["write": .object(["handle": handle(written), "value": bytes(value)])])
                case let .subscription(subscribed): .object(["subscription": .object(["handle": handle(subscribed)])])
                }
            let indications = reaction.notifications.filter(\.isIndication).count
            return .object([
                "trigger": trigger, "notifications": .number(reaction.notifications.count - indications),
                "indications": .number(indications),
            ])
        }
        return .object([
            "address": .string(peer.address.description),
            "address_type": .string(peer.addressType.description),
            "address_made_up": .bool(peer.addressIsMadeUp),
            "name": peer.name.map(JSONValue.string) ?? .null,
            "connections": .number(peer.connectionHandles.count),
            "advertising_data": bytes(peer.advertisingData),
            "scan_response_data": bytes(peer.scanResponseData),
            "mtu": peer.mtu.map(JSONValue.number) ?? .null,
            "services": .array(services),
            "undiscovered_handles": .array(
                peer.undiscoveredAttributes.map { attribute in
                    .object(["handle": handle(attribute.handle), "value": bytes(attribute.value)])
                }),
            "attributes_outside_services": .array(
                peer.attributesOutsideServices.map { attribute in
                    .object([
                        "handle": handle(attribute.handle), "uuid": uuid(attribute.type), "name": name(attribute.type),
                        "value": bytes(attribute.value),
                    ])
                }),
            "errors": .array(
                peer.errors.map { error in
                    .object([
                        "request": .number(Int(error.request.rawValue)), "handle": handle(error.handle),
                        "code": .number(Int(error.code.rawValue)), "name": .string(error.code.name),
                        "encrypted": .bool(error.encrypted), "overridden": .bool(error.overridden),
                    ])
                }),
            "reactions": .array(reactions),
            "missing": .array(peer.missing.map(JSONValue.string)),
        ])
    }
}
