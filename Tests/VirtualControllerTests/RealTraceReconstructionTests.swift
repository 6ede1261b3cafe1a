import ATT
import BluetoothCore
import Foundation
import HCI
import L2CAP
import Testing
import VirtualController

/// The real traces the repository ships (`Fixtures/real-traces`), found from this file's path.
enum ShippedTraces {
    static let directory: String = {
        var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)
        return components.joined(separator: "/") + "/Fixtures/real-traces"
    }()

    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
        .filter { $0.hasSuffix(".btsnoop") }.sorted()
}

@Suite struct RealTraceReconstructionTests {
    @Test func theFourShippedTracesAreThere() {
        #expect(ShippedTraces.names.count == 4, "\(ShippedTraces.directory)")
    }

    @Test(arguments: ShippedTraces.names)
    func servicesHoldTheirCharacteristics(_ name: String) throws {
        let reconstruction = try TraceReconstruction(path: ShippedTraces.directory + "/" + name)
        for peer in reconstruction.peripherals {
            let handles = peer.attributes.map(\.handle)
            #expect(handles == handles.sorted() && Set(handles).count == handles.count, "\(name) \(peer.address)")
            for service in peer.services {
                for characteristic in service.characteristics {
                    #expect(
                        characteristic.declarationHandle < characteristic.valueHandle
                            && characteristic.valueHandle <= service.endHandle,
                        "\(name) \(peer.address): \(characteristic.uuid) value \(characteristic.valueHandle) outside \(service.handle)–\(service.endHandle)"
                    )
                    #expect(
                        peer.attribute(at: characteristic.valueHandle)?.type == characteristic.uuid,
                        "\(name) \(peer.address): no value attribute of \(characteristic.uuid) at \(characteristic.valueHandle)"
                    )
                }
            }
            if peer.addressIsMadeUp { #expect(peer.address.bytes[5] & 0xC0 == 0xC0) }
        }
    }

    /// Every notification and indication a peer sent on its links is in one of its reactions.
    @Test(arguments: ShippedTraces.names)
    func everyNotificationIsInAReaction(_ name: String) throws {
        let file = try BTSnoopFile(path: ShippedTraces.directory + "/" + name)
        let reconstruction = TraceReconstruction(file: file)
        // Peers may take turns on one handle: count over all of them at once.
        let handles = Set(reconstruction.peripherals.flatMap(\.connectionHandles))
        var reassemblers: [ConnectionHandle: Reassembler] = [:]
        var sent = 0
        for record in file.records where record.direction == .received {
            guard case let .packet(.acl, body) = record.content,
                case let .acl(acl)? = try? HCIPacket(type: .acl, body: body),
                handles.contains(acl.handle),
                let frame = reassemblers[acl.handle, default: Reassembler()].append(acl).frame,
                frame.channel == .att, let opcode = frame.payload.first
            else { continue }
            if (opcode == 0x1B && (try? HandleValueNotification(decoding: frame.payload)) != nil)
                || (opcode == 0x1D && (try? HandleValueIndication(decoding: frame.payload)) != nil)
            {
                sent += 1
            }
        }
        var recorded = 0
        for peer in reconstruction.peripherals {
            for reaction in peer.reactions {
                recorded += reaction.notifications.count
                for notification in reaction.notifications {
                    #expect(peer.attribute(at: notification.handle) != nil)
                }
            }
        }
        #expect(recorded == sent, "\(name)")
    }

    @Test func atLeastOneTraceShowsAWholeDatabase() throws {
        var peersWithServices = 0, characteristics = 0, values = 0
        for name in ShippedTraces.names {
            for peer in try TraceReconstruction(path: ShippedTraces.directory + "/" + name).peripherals
            where !peer.services.isEmpty {
                peersWithServices += 1
                characteristics += peer.services.reduce(0) { $0 + $1.characteristics.count }
                values += peer.services.flatMap(\.characteristics).filter { $0.value != nil }.count
            }
        }
        #expect(peersWithServices >= 1)
        #expect(characteristics >= peersWithServices)
        #expect(values >= 1)
    }

    /// The vendor debug handle 0x0EDC of the Qualcomm trace carries no ATT: no peer on it.
    @Test func aVendorDebugHandleMakesNoPeer() throws {
        for name in ShippedTraces.names {
            for peer in try TraceReconstruction(path: ShippedTraces.directory + "/" + name).peripherals {
                #expect(!peer.connectionHandles.contains(0x0EDC), "\(name)")
            }
        }
    }
}
