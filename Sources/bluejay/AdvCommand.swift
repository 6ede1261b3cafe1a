import Advertisements
import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// `bluejay adv`: advertisements without a controller.
struct Adv: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adv",
        abstract: "Work with advertisements (no controller needed).",
        subcommands: [AdvDecode.self])
}

/// `bluejay adv decode`: sensor and beacon advertisements decoded, one JSON line each.
struct AdvDecode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode advertisements read from standard input, one JSON object per line.",
        discussion: """
            Each input line is ADDRESS AD_HEX [KEY_HEX]: the advertiser's address, the advertising \
            data as sent (AD structures: length, type, data; a scan response's appended), and for an \
            encrypted payload the device's 16-byte key in hex. Each answer is one line, in input order, \
            written as soon as it is known: {"address":…,"format":…,"values":{…}} or \
            {"address":…,"error":…}. Blank lines and lines starting with # get no answer. Formats: \
            bthome-v2, bthome-v1, mibeacon, atc1441, pvvx, ruuvi-v3, ruuvi-v5, govee, switchbot, inkbird, \
            qingping, ibeacon, eddystone-uid, eddystone-url, eddystone-tlm (docs/Gateway.md).
            """)

    func run() throws {
        while let line = readLine(strippingNewline: true) {
            guard let answer = AdvertisementLine.decode(line) else { continue }
            print(answer)
            flushStandardOutput()  // every line at once, for a script reading a pipe
        }
    }
}
