import BluetoothCore
@testable import GAP
@testable import bluejay
@testable import HCI
import Testing

/// The live scan table's screen updates, as bytes a terminal gets.
@Suite struct LiveTableTests {
    let up = "\u{1B}[", clear = "\u{1B}[2K"

    @Test func rowsAreRedrawnInPlaceOnlyWhenTheyChange() {
        var table = LiveTable<String>(width: nil)
        #expect(table.update("a", "A -50 Bluejay HRM") == "\r\(clear)A -50 Bluejay HRM\n")
        // A second peripheral: back up over the one row drawn, then both rows.
        #expect(table.update("b", "B -60 -") == "\(up)1A\r\(clear)A -50 Bluejay HRM\n\(clear)B -60 -\n")
        // Nothing changed: nothing to write.
        #expect(table.update("a", "A -50 Bluejay HRM") == nil)
        // The first row's RSSI changes: the same two lines, in place, in first-seen order.
        #expect(table.update("a", "A -47 Bluejay HRM") == "\(up)2A\r\(clear)A -47 Bluejay HRM\n\(clear)B -60 -\n")
        let tableLines: [String] = ["A -47 Bluejay HRM", "B -60 -"]
        #expect(table.lines == tableLines)
    }

    @Test func rowsAreCutToTheTerminalWidth() {
        var table = LiveTable<Int>(width: 10)
        #expect(table.update(1, "0123456789") == "\r\(clear)0123456789\n")
        #expect(table.update(1, "0123456789AB") == "\(up)1A\r\(clear)012345678…\n")
        let tableLines: [String] = ["0123456789AB"]
        #expect(table.lines == tableLines)
        #expect(LiveTable<Int>.fit("abc", width: nil) == "abc")
    }

    @Test func aDiscoveryWithoutScanResponseKeepsTheEarlierName() {
        let address = BluetoothAddress("F0:0D:B1:E7:00:01")!
        let named = Discovery(
            address: address, addressType: .random, rssi: -50, txPower: nil, connectable: true,
            advertisement: AdvertisingData(parsing: [0x04, 0x09, 0x42, 0x4A, 0x31]), hasScanResponse: true)
        var bare = named
        bare.advertisement = AdvertisingData(parsing: [0x02, 0x01, 0x06])
        bare.hasScanResponse = false
        bare.rssi = -70
        let merged = Scan.merge(named, bare)
        #expect(merged.advertisement.localName == "BJ1")
        #expect(merged.rssi == -70)
        #expect(Scan.row(merged).contains("BJ1"))
        // A newer scan response replaces the old one; without an earlier one, the new one shows.
        var renamed = named
        renamed.advertisement = AdvertisingData(parsing: [0x04, 0x09, 0x42, 0x4A, 0x32])
        #expect(Scan.merge(named, renamed).advertisement.localName == "BJ2")
        #expect(Scan.merge(nil, bare) == bare)
    }
}
