import ArgumentParser
@testable import bluejay
import Testing

/// Every command of `bluejay` names itself in its configuration. A command that does not
/// gets its name from `String(describing:)` of its type each time a command line is parsed,
/// and that dynamic cast scans every protocol conformance in the binary: with 21 such
/// commands it was 41% of a start's CPU (about 0.25 s of a bonded read in the emulated VM).
@Suite struct CommandNameTests {
    /// The commands under `command`, itself included, that have no `commandName`.
    static func unnamed(_ command: any ParsableCommand.Type) -> [String] {
        let configuration = command.configuration
        let here = configuration.commandName == nil ? ["\(command)"] : []
        return here + configuration.subcommands.flatMap { unnamed($0) }
    }

    @Test func everyCommandNamesItself() {
        #expect(Self.unnamed(BluejayCommand.self) == [])
        // The walk reaches the nested commands too (cache list, bonds stress-write, adv decode).
        #expect(BluejayCommand.configuration.subcommands.count > 10)
    }
}
