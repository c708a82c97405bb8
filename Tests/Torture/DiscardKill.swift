import Foundation
import RestorationArchive
import TestSupport

/// 11. SIGKILL during a discard that compacts the store (`ArchiveStore.discard`): the
/// archive is discarded or not, never half; the other archives and the store's health are
/// untouched; a compaction that returned is kept.
///
/// A child process (this executable, `discard-loop`) saves a small archive, `other`, then a
/// large one, `main` (3,000 nodes of 300–500 bytes: about 1.5 MB, which its discard frees,
/// so that the store is compacted), announcing each save's digest before it saves (`saving
/// D`, `other D`) and after (`saved`), and the discard before (`discarding`) and after
/// (`discarded compacted` or `discarded`). The parent kills it 0–12 ms after `discarding`:
/// while the discard deletes, commits, compacts or checkpoints. Then it opens the store as
/// the next launch does.
enum DiscardKill {
    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("discard-kill")
        var landings: [String: Int] = [:]
        for index in 0..<scale.trials(quick: 60, full: 400) {
            scenario.trial("trial \(index)") { trial in
                try withTemporaryDirectory { directory in
                    let landing = try killOneDiscard(path: directory + "/store.sqlite", trial: &trial, random: &random)
                    landings[landing, default: 0] += 1
                }
            }
        }
        scenario.remark(
            "where the kills landed: "
                + landings.listed { name, count in "\(count) \(name)" })
        return scenario
    }

    /// One child, killed during its discard. Returns where the kill landed, as the store
    /// shows it.
    private static func killOneDiscard(path: String, trial: inout Trial, random: inout SeededGenerator) throws -> String {
        let child = try Child(Child.torture, ["child", "discard-loop", path, "\(random.next())"])
        var other: UInt64?
        var main: UInt64?
        var discarding = false
        while let line = child.nextLine() {
            let words = line.split(separator: " ")
            if words.count == 2, words[0] == "other" { other = UInt64(words[1]) }
            if words.count == 2, words[0] == "saving" { main = UInt64(words[1]) }
            if line == "discarding" {
                discarding = true
                break
            }
        }
        guard discarding, let other, let main else {
            child.kill()
            child.wait()
            trial.fail("the child never began its discard: \(child.lines)")
            return "nowhere"
        }
        usleep(UInt32.random(in: 0...12_000, using: &random))
        child.kill()
        let after = child.remainingLines()
        let ending = child.wait()
        trial.expect(ending.signalled && ending.status == SIGKILL, "the child ended by itself (status \(ending.status))")
        let returned = after.first { $0.hasPrefix("discarded") }
        trial.expect(after.allSatisfy { $0.hasPrefix("discarded") }, "the child said: \(after)")

        // The next launch.
        let store = try ArchiveStore(path: path)
        trial.expect(
            try store.snapshot(of: ArchiveName("other")).map { Content.digest($0.nodes) } == other,
            "the other archive changed")
        let held = try store.snapshot()
        if returned != nil {
            trial.expect(held == nil, "a discard that returned left the archive")
        } else if let held {
            trial.expect(Content.digest(held.nodes) == main, "the archive holds another tree than the one saved")
        }
        if returned == "discarded compacted" {
            trial.expect(
                (pageCount(path) ?? .max) < 100, "a compaction that returned left \(pageCount(path) ?? -1) pages")
        }
        let problems = try store.check()
        trial.expect(problems.isEmpty, "check found problems: \(problems)")
        let tree = try Content.tree(count: 5, using: &random)
        try store.save(tree, header: Content.header)
        trial.expect(try store.snapshot().map { Content.digest($0.nodes) } == Content.digest(tree), "a save after the kill reads back other nodes")

        if held != nil { return "before the discard's commit" }
        if returned != nil { return "after the discard returned" }
        let pages = pageCount(path) ?? .max
        return pages < 100 ? "after the compaction's commit" : "between the discard's commit and the compaction's"
    }

    /// The store's size in pages, its log's included, read by a connection of SQLite's own.
    private static func pageCount(_ path: String) -> Int64? {
        Files.firstValue(of: "PRAGMA page_count", in: path).flatMap { Int64($0) }
    }

    /// The child: saves `other`, then `main`, then discards `main`, and waits to be killed.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 2, let seed = UInt64(arguments[1]) else { throw ChildError.usage }
        var random = SeededGenerator(seed: seed)
        let store = try ArchiveStore(path: arguments[0])
        let other = try Content.tree(count: 20, using: &random)
        announce("other \(Content.digest(other))")
        try store.save(other, header: Content.header, in: ArchiveName("other"))
        let main = try Content.tree(count: 3_000, stateSize: 300...500, using: &random)
        announce("saving \(Content.digest(main))")
        try store.save(main, header: Content.header)
        announce("saved")
        announce("discarding")
        let result = try store.discard(reason: "the user quit the app")
        announce(result.storeCompacted ? "discarded compacted" : "discarded")
        while true { sleep(60) }
    }
}
