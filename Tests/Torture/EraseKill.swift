import CSQLite
import Foundation
import RestorationArchive
import TestSupport

/// 10. SIGKILL during `ArchiveStore.erase(at:)`: the store is left whole, either as it was
/// or empty, and the next launch opens it, saves and reads back.
///
/// A child process (this executable, `erase-loop`) saves a tree, then erases the store,
/// over and over, announcing each save's content digest before it saves (`saving D`) and
/// after (`saved`), and each erase before (`erasing`) and after (`erased`). The parent kills
/// it at a random moment, then opens the store as the next launch does.
enum EraseKill {
    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("erase-kill")
        var midErase = 0
        var emptyAfterMidErase = 0
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            var held: UInt64?
            for index in 0..<scale.trials(quick: 100, full: 1_000) {
                scenario.trial("trial \(index)") { trial in
                    let landing = try killOneErase(path: path, held: &held, trial: &trial, random: &random)
                    if landing.midErase { midErase += 1 }
                    if landing.midErase && landing.empty { emptyAfterMidErase += 1 }
                }
            }
        }
        scenario.remark("\(midErase) kills between an erase's start and its return (\(emptyAfterMidErase) of them left the store empty)")
        return scenario
    }

    /// `held`: the digest of the tree the store holds (the previous trial's last save).
    private static func killOneErase(path: String, held: inout UInt64?, trial: inout Trial, random: inout SeededGenerator)
        throws -> (midErase: Bool, empty: Bool)
    {
        let child = try Child(Child.torture, ["child", "erase-loop", path, "\(random.next())"])
        guard child.nextLine() == "ready" else {
            child.kill()
            child.wait()
            trial.fail("the child never got ready: \(child.lines)")
            return (false, false)
        }
        usleep(UInt32.random(in: 0...30_000, using: &random))
        child.kill()
        // What the store may hold: nothing, or a tree whose save began since the last erase
        // returned (or, when an erase did not return, the last one saved before it).
        var allowed = Set([held].compactMap { $0 })
        var saved = held
        var erasing = false
        let lines = child.remainingLines()
        for line in lines {
            let words = line.split(separator: " ")
            if words.count == 2, words[0] == "saving", let digest = UInt64(words[1]) {
                allowed.insert(digest)
                saved = digest
            } else if line == "erasing" {
                erasing = true
            } else if line == "erased" {
                erasing = false
                allowed = []
            } else if line != "saved" {
                trial.fail("the child said: \(line)")
            }
        }
        if erasing, let saved { allowed.insert(saved) }
        let ending = child.wait()
        trial.expect(ending.signalled && ending.status == SIGKILL, "the child ended by itself (status \(ending.status))")

        // The next launch.
        let store = try ArchiveStore(path: path)
        let snapshot = try store.snapshot()
        if let snapshot {
            let digest = Content.digest(snapshot.nodes)
            trial.expect(
                allowed.contains(digest),
                "the store holds a tree that was not saved since the last erase (line \(lines.firstIndex(of: "saving \(digest)").map(String.init) ?? "none") of \(lines))")
        }
        trial.expect(try store.check().isEmpty, "check found problems")
        let tree = try Content.tree(count: 5, using: &random)
        try store.save(tree, header: Content.header)
        held = Content.digest(tree)
        trial.expect(try store.snapshot().map { Content.digest($0.nodes) } == held, "a save after the kill reads back other nodes")
        return (erasing, snapshot == nil)
    }

    /// The child: saves, then erases, until it is killed.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 2, let seed = UInt64(arguments[1]) else { throw ChildError.usage }
        var random = SeededGenerator(seed: seed)
        let path = arguments[0]
        announce("ready")
        while true {
            do {
                let store = try ArchiveStore(path: path)
                let tree = try Content.tree(count: Int.random(in: 20...200, using: &random), using: &random)
                announce("saving \(Content.digest(tree))")
                try store.save(tree, header: Content.header)
                announce("saved")
            }
            announce("erasing")
            try ArchiveStore.erase(at: path)
            announce("erased")
        }
    }
}
