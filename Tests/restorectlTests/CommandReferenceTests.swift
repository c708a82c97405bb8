import ArgumentParser
import Foundation
import Testing
import TestSupport
@testable import restorectl

/// `docs/cli.md`, the command reference, against the commands as built: a command or option
/// added, renamed or removed without the reference, or a JSON key it does not explain, fails
/// here.
@Suite("restorectl: the command reference")
struct CommandReferenceTests {
    let restorectl = builtProduct("restorectl")

    private static func reference() throws -> String { try packageFileText("docs/cli.md") }

    /// The options (`--name`) in `text`.
    private static func options(in text: Substring) -> Set<String> {
        let words = text.split { character in !character.isLetter && character != "-" }
        return Set(words.filter { $0.hasPrefix("--") }.map { String($0) })
    }

    @Test func everyCommandHasASectionNamingItsOptions() throws {
        let reference = try Self.reference()
        let headings = reference.split(separator: "\n").filter { $0.hasPrefix("## `restorectl ") }
        let commands = RestoreCtl.configuration.subcommands
        #expect(headings.count == commands.count, "\(headings.count) sections for \(commands.count) commands")
        for command in commands {
            let name = command.configuration.commandName ?? ""
            guard let heading = headings.first(where: { $0.hasPrefix("## `restorectl \(name) ") }) else {
                Issue.record("docs/cli.md has no section for \(name)")
                continue
            }
            let usage = try #require(
                RestoreCtl.helpMessage(for: command).split(separator: "\n").first { $0.hasPrefix("USAGE:") })
            var expected = Self.options(in: usage)
            // `demo --db DB`, kept for earlier versions, is explained in the section, not the heading.
            if name == "demo" { expected.remove("--db") }
            // `--key-file`, which a build with the Encryption trait gives every inspecting
            // command, is explained once, with sealed states.
            if expected.remove("--key-file") != nil {
                #expect(reference.contains("`--key-file FILE`"), "docs/cli.md does not explain --key-file")
            }
            #expect(Self.options(in: heading) == expected, "\(heading) against \(usage)")
        }
    }

    /// The README's `swift run restorectl` lines on `/tmp/demo.sqlite`, run as written on a
    /// store of their own, in the README's order (the demo first). The first line of the
    /// README, the demo at the default location, is left out: a test writes no store there.
    @Test func theREADMEsCommandsRunAsWritten() throws {
        let readme = try packageFileText("README.md")
        let lines = readme.split(separator: "\n").map { $0.split(separator: "#", maxSplits: 1)[0] }
            .filter { $0.hasPrefix("swift run restorectl ") && $0.contains(" /tmp/demo.sqlite") }
        #expect(lines.count >= 7)
        #expect(lines.first?.split(separator: " ").dropFirst(3).first == "demo")
        try withTemporaryStorePath { path in
            for line in lines {
                let arguments = line.split(separator: " ").dropFirst(3).map { $0 == "/tmp/demo.sqlite" ? path : String($0) }
                let outcome = try runProcess(restorectl, arguments)
                #expect(outcome.status == 0, "\(line): \(outcome.standardError)")
                #expect(!outcome.standardOutput.isEmpty, "\(line) printed nothing")
            }
        }
    }

    /// The commands whose JSON the reference must explain; `diff` compares the last two
    /// generations of ``withInspectedStore(_:)``'s store.
    private static let info = ["info"], show = ["show", "Tabs/Profile"], tree = ["tree"]
    private static let jsonCommands = [
        info, show, tree, ["markers"], ["events"], ["diff", "--from", "3", "--to", "4"], ["check"], ["report", "--all"],
    ]

    /// Runs `body` on a store after the demo's story and one more saving launch (generations
    /// 3 and 4 of `main`), with a restoration left dying at the end, so that a crash marker
    /// shows.
    private func withInspectedStore<Result>(_ body: (String) throws -> Result) throws -> Result {
        try withTemporaryStorePath { path in
            #expect(try runProcess(restorectl, ["demo", path]).status == 0)
            #expect(try runProcess(restorectl, ["demo", "--step", "save", "--db", path]).status == 0)
            #expect(try runProcess(restorectl, ["demo", "--step", "restore-crash", "--db", path]).status != 0)
            return try body(path)
        }
    }

    /// The keys of each command's JSON on the store at `path`, for the commands that print
    /// JSON. With `expectingSuccess`, each must print it and exit 0; otherwise a command that
    /// meets damage exits 1, and may print none (damage to the header it reads).
    private func keysPrinted(by commands: [[String]], in path: String, expectingSuccess: Bool = true) throws
        -> [[String]: Set<String>]
    {
        var printed: [[String]: Set<String>] = [:]
        for command in commands {
            let outcome = try runProcess(restorectl, [command[0], path] + command.dropFirst() + ["--format", "json"])
            #expect(outcome.status == 0 || (!expectingSuccess && outcome.status == 1), "\(command): \(outcome.standardError)")
            guard expectingSuccess || !outcome.standardOutput.isEmpty else { continue }
            printed[command] = Self.keys(in: try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)))
        }
        return printed
    }

    @Test func everyJSONKeyIsExplainedAndEveryExampleKeyIsPrinted() throws {
        let reference = try Self.reference()
        let printed = try withInspectedStore { path in try keysPrinted(by: Self.jsonCommands, in: path) }
        for (command, keys) in printed.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            #expect(!keys.isEmpty, "\(command) printed no key")
            Self.recordKeysNotExplained(keys, by: command, in: reference)
        }
        // The reference's examples, in the order of its sections: info, show, tree.
        let examples = try Self.jsonBlocks(in: reference)
        #expect(examples.count == 3)
        for (command, example) in zip([Self.info, Self.show, Self.tree], examples) {
            for key in Self.keys(in: example).subtracting(printed[command] ?? []).sorted() {
                Issue.record("docs/cli.md's example of `\(command[0])` has the key \(key), which it does not print")
            }
        }
    }

    /// The keys printed only when a command meets damage, each kind of damage on a store of
    /// its own, must be explained too: the test above sees none of them.
    @Test(arguments: [
        "UPDATE node SET state = X'01' WHERE path = 'Tabs/Profile' AND died IS NULL",  // a node
        "UPDATE generation SET app_version = '12.0' WHERE generation = 3",  // an older header
        "UPDATE generation SET app_version = '12.0' WHERE generation = 4",  // the newest header
        "UPDATE archive SET generation = generation + 7 WHERE name = 'main'",  // the archive's row
        "UPDATE journal SET event = 'bogus' WHERE id = (SELECT max(id) FROM journal)",  // the last launch's entry
        "UPDATE journal SET event = 'bogus' WHERE id = (SELECT max(id) - 5 FROM journal)",  // an older entry
        "UPDATE restore_report SET report = x'00' WHERE sequence = (SELECT max(sequence) FROM restore_report)",
    ])
    func everyJSONKeyPrintedOnDamageIsExplained(damage: String) throws {
        let reference = try Self.reference()
        let (intact, damaged) = try withInspectedStore { path in
            let intact = try keysPrinted(by: Self.jsonCommands, in: path)
            let tampered = try runSQLite(on: path, [damage])
            #expect(tampered.status == 0, "\(tampered.standardError)")
            return (intact, try keysPrinted(by: Self.jsonCommands, in: path, expectingSuccess: false))
        }
        var onlyOnDamage: Set<String> = []
        for (command, keys) in damaged.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            onlyOnDamage.formUnion(keys.subtracting(intact[command] ?? []))
            Self.recordKeysNotExplained(keys, by: command, in: reference)
        }
        // Each damage shows in at least one key (`problem`, for `check`), so that the test
        // would see a new one.
        #expect(!onlyOnDamage.isEmpty, "no command printed a key of its own for this damage")
    }

    /// Records an issue for each key of `keys` that the reference mentions neither in
    /// backticks nor in an example.
    private static func recordKeysNotExplained(_ keys: Set<String>, by command: [String], in reference: String) {
        for key in keys.sorted() where !reference.contains("`\(key)`") && !reference.contains("\"\(key)\"") {
            Issue.record("docs/cli.md does not mention the key \(key) of `\(command.joined(separator: " "))`")
        }
    }

    /// The ```` ```json ```` blocks of the reference, parsed.
    private static func jsonBlocks(in reference: String) throws -> [Any] {
        let parts = reference.components(separatedBy: "```json\n").dropFirst()
        return try parts.map { part in
            let block = part.components(separatedBy: "\n```").first ?? ""
            return try JSONSerialization.jsonObject(with: Data(block.utf8))
        }
    }

    /// The keys of every object in a JSON document, but those the app named: a node's state
    /// and a header's app values.
    private static func keys(in value: Any) -> Set<String> {
        if let array = value as? [Any] { return array.reduce(into: []) { $0.formUnion(keys(in: $1)) } }
        guard let object = value as? [String: Any] else { return [] }
        var found = Set(object.keys)
        for (key, value) in object where key != "app_values" && !(key == "state" && (value as? [String: Any])?["kind"] == nil) {
            found.formUnion(keys(in: value))
        }
        return found
    }
}
