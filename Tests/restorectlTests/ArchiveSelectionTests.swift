import Foundation
import RestorationArchive
import Testing
import TestSupport

/// `--archive NAME` typed by a person: the store tells archive names apart by their bytes, so
/// one saved in decomposed characters (`Cafe` + U+0301, as a name taken from a file system
/// that decomposes them is) shows as `Café`, and the name typed in composed characters named
/// no archive: "No archive named 'Café'" of the archive `info` had just listed as `Café`.
@Suite("restorectl: an archive named in another Unicode form")
struct ArchiveSelectionTests {
    let restorectl = builtProduct("restorectl")

    private func run(_ arguments: [String]) throws -> ProcessOutcome { try runProcess(restorectl, arguments) }

    @Test func anArchiveIsFoundByTheNameAsTyped() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let decomposed = try ArchiveName("Cafe\u{301}")
            let node = ArchivedNode(
                path: try RestorationPath("Menu"), className: "Menu", state: try StateValue.encode(["x": .int(1)]))
            try store.save([node], header: SampleArchives.header, in: decomposed)
            try store.save([node], header: SampleArchives.header, in: decomposed)
            let typed = "Caf\u{E9}"
            for command in [
                ["info"], ["tree"], ["show", "Menu"], ["markers"], ["events"], ["report"], ["check"],
                ["diff", "--from", "1", "--to", "2"],
            ] {
                let outcome = try run([command[0], path, "--archive", typed] + command.dropFirst())
                #expect(outcome.status == 0, "\(command): \(outcome.standardError)")
            }
            let tree = try run(["tree", path, "--archive", typed])
            #expect(tree.standardOutput.hasPrefix("Archive Cafe\u{301}, generation 2"), "\(tree.standardOutput)")
            let exported = path + ".json"
            #expect(try run(["export", path, "--archive", typed, "--output", exported]).status == 0)
            #expect(try fileText(exported).contains("Menu"))

            let discarded = try run(["discard", path, "--archive", typed, "--reason", "the window closed"])
            #expect(discarded.status == 0, "\(discarded.standardError)")
            #expect(try store.summary(of: decomposed).map { if case .discarded = $0.state { true } else { false } } == true)
            // A name that is no form of an archive's is still not found.
            let other = try run(["info", path, "--archive", "Cafe"])
            #expect(other.status == 1 && other.standardError.contains("No archive named 'Cafe'"))
        }
    }

    /// Two archives whose names are two other forms of the name typed: which one is meant
    /// cannot be told, and neither is taken; the error names each by its characters, since
    /// they print alike (it said only "No archive named", of a name `info` listed twice).
    @Test func aNameTwoArchivesHoldInOtherFormsIsNotFound() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let node = ArchivedNode(path: try RestorationPath("Menu"), className: "Menu", state: [])
            // The same marks in two orders: canonically equivalent, other bytes.
            for name in ["e\u{301}\u{323}", "e\u{323}\u{301}"] {
                try store.save([node], header: SampleArchives.header, in: try ArchiveName(name))
            }
            let typed = "\u{1EB9}\u{301}"  // the same again, composed
            #expect(typed == "e\u{301}\u{323}" && typed == "e\u{323}\u{301}")
            let outcome = try run(["info", path, "--archive", typed])
            #expect(outcome.status == 1 && outcome.standardError.contains("No archive named"), "\(outcome.standardError)")
            #expect(
                outcome.standardError.contains(
                    "2 archives are that text in other Unicode forms, which print alike ('e<U+0301><U+0323>', "
                        + "'e<U+0323><U+0301>'); name one in its own characters."), "\(outcome.standardError)")
            let checked = try run(["check", path, "--archive", typed])
            #expect(checked.status == 2 && checked.standardError.contains("2 archives are that text"), "\(checked.standardError)")
            let discarded = try run(["discard", path, "--archive", typed, "--reason", "closed"])
            #expect(discarded.status == 1 && discarded.standardError.contains("2 archives are that text"), "\(discarded.standardError)")
        }
    }
}
