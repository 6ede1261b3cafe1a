import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
    import Glibc
#endif

/// `bluejay gateway CONFIG.yaml`: runs `bluejay-gateway`, a program of its own so that YAML
/// and OpenSSL stay out of this binary (docs/Gateway.md).
struct GatewayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Bridge BLE peripherals to an MQTT broker, as CONFIG.yaml says (runs bluejay-gateway).",
        discussion: """
            Runs the bluejay-gateway program found beside this one, or else on PATH, with the same arguments \
            (CONFIG.yaml [--check] [--verbose]). docs/Gateway.md has the file's keys and the topics. \
            Build it with 'swift build --product bluejay-gateway'.
            """)

    @Argument(parsing: .captureForPassthrough, help: "CONFIG.yaml, and bluejay-gateway's options.")
    var arguments: [String] = []

    func run() throws {
        guard let program = Self.locate() else {
            throw CLIError(
                "bluejay-gateway is neither beside \(Self.ownDirectory() ?? "this program") nor on PATH: "
                    + "build it with 'swift build --product bluejay-gateway' (or install it beside bluejay)")
        }
        let argv = [program] + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        execv(program, &cArguments)
        throw CLIError("cannot run \(program): \(String(cString: strerror(errno)))")
    }

    /// The directory of the running executable.
    static func ownDirectory() -> String? {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            return nil
        }
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }

    /// `bluejay-gateway` beside this program, else the first on PATH.
    static func locate() -> String? {
        var candidates: [String] = []
        if let directory = ownDirectory() { candidates.append(directory + "/bluejay-gateway") }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append("\(directory)/bluejay-gateway")
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
