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

    /// The keys of each command's JSON on the demo's store, a restoration left dying at the
    /// end (so that a crash marker shows); `diff` compares the last two generations.
    private func keysPrinted(by commands: [[String]]) throws -> [[String]: Set<String>] {
        try withTemporaryStorePath { path in
            #expect(try runProcess(restorectl, ["demo", path]).status == 0)
            #expect(try runProcess(restorectl, ["demo", "--step", "save", "--db", path]).status == 0)
            #expect(try runProcess(restorectl, ["demo", "--step", "restore-crash", "--db", path]).status != 0)
            var printed: [[String]: Set<String>] = [:]
            for command in commands {
                let outcome = try runProcess(restorectl, [command[0], path] + command.dropFirst() + ["--format", "json"])
                #expect(outcome.status == 0, "\(command): \(outcome.standardError)")
                printed[command] = Self.keys(in: try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)))
            }
            return printed
        }
    }

    @Test func everyJSONKeyIsExplainedAndEveryExampleKeyIsPrinted() throws {
        let reference = try Self.reference()
        let info = ["info"], show = ["show", "Tabs/Profile"], tree = ["tree"]
        let printed = try keysPrinted(by: [
            info, show, tree, ["markers"], ["events"], ["diff", "--from", "3", "--to", "4"], ["check"], ["report", "--all"],
        ])
        for (command, keys) in printed.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            #expect(!keys.isEmpty, "\(command) printed no key")
            for key in keys.sorted() where !reference.contains("`\(key)`") && !reference.contains("\"\(key)\"") {
                Issue.record("docs/cli.md does not mention the key \(key) of `\(command.joined(separator: " "))`")
            }
        }
        // The reference's examples, in the order of its sections: info, show, tree.
        let examples = try Self.jsonBlocks(in: reference)
        #expect(examples.count == 3)
        for (command, example) in zip([info, show, tree], examples) {
            for key in Self.keys(in: example).subtracting(printed[command] ?? []).sorted() {
                Issue.record("docs/cli.md's example of `\(command[0])` has the key \(key), which it does not print")
            }
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
