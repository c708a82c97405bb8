import Foundation
import RestorationArchive
import TestSupport

/// 1. SIGKILL during save, per durability setting: no corrupt store, no mixed generation, no
/// acknowledged save lost.
///
/// A child process (this executable, `save-loop`) opens the store as an app does, restores
/// the newest generation, and then saves changed trees over and over, full and incremental
/// (recording a move to the background before one in three, which lets the save copy a long
/// write-ahead log into the file first), announcing each generation's content digest on a
/// pipe before it saves and acknowledging it after the save returns. The parent kills it at a
/// random moment, then opens the store as the next launch does and compares it with what the
/// child announced.
enum SaveKill {
    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        try killSaves(Scenario("save-kill"), perSetting: scale.trials(quick: 200, full: 2_000), longLog: false, random: &random)
    }

    /// 1c. SIGKILL while a save copies a long write-ahead log into the file, and while the
    /// commit after it starts the log over: `save-kill`, with each save of the child preceded
    /// by journal entries until the log is longer than ``copiedLogPages`` and by a recorded
    /// move to the background, so that it copies the log first. The same checks.
    static func runCopyKill(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        try killSaves(Scenario("copy-kill"), perSetting: scale.trials(quick: 100, full: 1_000), longLog: true, random: &random)
    }

    /// `perSetting` children killed per durability setting, a new store every 50.
    private static func killSaves(_ scenario: Scenario, perSetting: Int, longLog: Bool, random: inout SeededGenerator)
        throws -> Scenario
    {
        for durability in [ArchiveStore.Durability.normal, .full] {
            var landings = Landings()
            defer {
                scenario.remark(
                    "\(durability): \(perSetting) kills, \(landings.saves) saves acknowledged, \(landings.midSave) kills "
                        + "between a save's start and its acknowledgement (\(landings.midSaveCommitted) of them committed)")
            }
            try withTemporaryDirectory { directory in
                var history = History()
                for index in 0..<perSetting {
                    let path = "\(directory)/store-\(index / 50).sqlite"  // a new store every 50 trials
                    if index % 50 == 0 { history = History() }
                    scenario.trial("\(durability) trial \(index)") { trial in
                        try killOneSave(
                            path: path, durability: durability, longLog: longLog, history: &history, landings: &landings,
                            trial: &trial, random: &random)
                    }
                }
            }
        }
        return scenario
    }

    /// The log's length, in pages, that `copy-kill`'s child reaches before each save: past the
    /// 128 from which a save copies it.
    static let copiedLogPages = 140

    /// What the children announced for one store: each generation's digest, and the newest
    /// generation a save acknowledged.
    struct History {
        var digests: [Generation: UInt64] = [:]
        var acknowledged: Generation = 0
    }

    /// Where the kills landed, to show that they land inside saves.
    struct Landings {
        var midSave = 0
        var midSaveCommitted = 0
        var saves = 0
    }

    private static func killOneSave(
        path: String, durability: ArchiveStore.Durability, longLog: Bool, history: inout History,
        landings: inout Landings, trial: inout Trial, random: inout SeededGenerator
    ) throws {
        let child = try Child(
            Child.torture,
            ["child", "save-loop", path, "\(durability)", "\(random.next())"] + (longLog ? ["main", "long-log"] : []))
        // Most kills land while saving; one in ten while the child starts and opens the store.
        if Int.random(in: 0..<10, using: &random) > 0 {
            guard child.nextLine() == "ready" else {
                child.kill()
                child.wait()
                trial.fail("the child never got ready: \(child.lines)")
                return
            }
        }
        if longLog, child.lines == ["ready"] {
            // A save that copies the log takes a few milliseconds, the journal entries before
            // it most of the child's time: the kill follows the announcement of a save.
            while let line = child.nextLine(), !line.hasPrefix("begin ") {}
            usleep(UInt32.random(in: 0...4_000, using: &random))
        } else {
            usleep(UInt32.random(in: 0...40_000, using: &random))
        }
        child.kill()
        let begun = collect(child, into: &history, landings: &landings, trial: &trial)

        // The next launch.
        let store = try ArchiveStore(path: path, configuration: .init(durability: durability))
        let problems = try store.check()
        trial.expect(problems.isEmpty, "check: \(problems)")
        _ = try store.journal(limit: 8)
        try verify(.main, of: store, history: &history, begun: begun, landings: &landings, trial: &trial)
    }

    /// Reads what a killed child announced into `history`, and checks it was killed. Returns
    /// the generation whose save it began and did not acknowledge, if any.
    static func collect(_ child: Child, into history: inout History, landings: inout Landings, trial: inout Trial)
        -> Generation?
    {
        var begun: Generation?
        child.remainingLines()
        for line in child.lines {
            let words = line.split(separator: " ")
            if words.count == 3, words[0] == "begin", let generation = Int64(words[1]), let digest = UInt64(words[2]) {
                history.digests[Generation(generation)] = digest
                begun = Generation(generation)
            } else if words.count == 2, words[0] == "ack", let generation = Int64(words[1]) {
                history.acknowledged = max(history.acknowledged, Generation(generation))
                begun = nil
                landings.saves += 1
            } else if line != "ready" {
                trial.fail("the child said: \(line)")
            }
        }
        let ending = child.wait()
        trial.expect(ending.signalled && ending.status == SIGKILL, "the child ended by itself (status \(ending.status))")
        return begun
    }

    /// What the next launch must find in `archive`: no acknowledged generation lost, and
    /// every retained generation exactly as announced. Then `history` starts from what it
    /// found.
    static func verify(
        _ archive: ArchiveName, of store: ArchiveStore, history: inout History, begun: Generation?,
        landings: inout Landings, trial: inout Trial
    ) throws {
        let newest = try store.summary(of: archive)?.latestGeneration ?? 0
        trial.expect(
            newest >= history.acknowledged,
            "'\(archive)': acknowledged generation \(history.acknowledged) lost; newest \(newest)")
        for summary in try store.generations(of: archive) {
            let snapshot = try store.snapshot(of: archive, generation: summary.generation)
            guard let expected = history.digests[summary.generation] else {
                trial.fail("'\(archive)': generation \(summary.generation) was never announced")
                continue
            }
            trial.expect(
                snapshot.map { Content.digest($0.nodes) } == expected,
                "'\(archive)': generation \(summary.generation) differs from what was saved")
        }
        if let begun {
            landings.midSave += 1
            if newest == begun { landings.midSaveCommitted += 1 }
        }
        // Generations begun but never committed will be numbered again by the next save.
        history.digests = history.digests.filter { $0.key <= newest }
        history.acknowledged = newest
    }

    /// 1b. Two processes saving two archives of one store at once, as an app and its
    /// extension, or two windows' processes, do: each a `save-loop` child on an archive of its
    /// own, both ready, killed one after the other at random moments, so that one may die
    /// holding the write lock or in the middle of a commit while the other waits for it or
    /// copies the log. The next launch checks both archives as `save-kill` checks one: no
    /// acknowledged save lost, every retained generation exactly as announced.
    static func runTwoWriters(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("two-writers")
        let trials = scale.trials(quick: 200, full: 2_000)
        var landings = [Landings(), Landings()]
        defer {
            scenario.remark(
                "\(trials) pairs killed; \(landings.map(\.saves)) saves acknowledged (main, scene-2), "
                    + "\(landings.map(\.midSave)) kills between a save's start and its acknowledgement")
        }
        let archives = [ArchiveName.main, try ArchiveName("scene-2")]
        try withTemporaryDirectory { directory in
            var histories = [History(), History()]
            for index in 0..<trials {
                let path = "\(directory)/store-\(index / 30).sqlite"  // a new store every 30 trials
                if index % 30 == 0 { histories = [History(), History()] }
                scenario.trial("trial \(index)") { trial in
                    let children = try archives.map { archive in
                        try Child(Child.torture, ["child", "save-loop", path, "normal", "\(random.next())", archive.rawValue])
                    }
                    for child in children where child.nextLine() != "ready" {
                        for child in children { child.kill() }
                        for child in children { child.wait() }
                        trial.fail("a child never got ready: \(child.lines)")
                        return
                    }
                    let order = Bool.random(using: &random) ? [0, 1] : [1, 0]
                    usleep(UInt32.random(in: 0...40_000, using: &random))
                    children[order[0]].kill()
                    usleep(UInt32.random(in: 0...20_000, using: &random))
                    children[order[1]].kill()
                    let begun = children.indices.map { collect(children[$0], into: &histories[$0], landings: &landings[$0], trial: &trial) }
                    // Not replayed by its seed: what a failure left is kept, when asked for.
                    let kept = Files.keepCopy(of: path, named: "two-writers-trial-\(index)")
                    do {
                        let store = try ArchiveStore(path: path)
                        let problems = try store.check()
                        trial.expect(problems.isEmpty, "check: \(problems)")
                        for (index, archive) in archives.enumerated() {
                            try verify(
                                archive, of: store, history: &histories[index], begun: begun[index],
                                landings: &landings[index], trial: &trial)
                        }
                    } catch {
                        trial.fail("unexpected error: \(error)")
                    }
                    if let kept { Files.settle(kept, of: &trial, children: children) }
                }
            }
        }
        return scenario
    }

    /// The child: an app that saves until it is killed.
    /// `save-loop PATH DURABILITY SEED [ARCHIVE [long-log]]`: ARCHIVE is `main` when not
    /// given. With `long-log` (`copy-kill`), the log is made long before every save, and the
    /// save follows a recorded move to the background: each save copies the log into the file
    /// first.
    static func child(_ arguments: [String]) throws {
        guard (3...5).contains(arguments.count), let seed = UInt64(arguments[2]) else { throw ChildError.usage }
        var random = SeededGenerator(seed: seed)
        let durability: ArchiveStore.Durability = arguments[1] == "full" ? .full : .normal
        let archive = arguments.count >= 4 ? try ArchiveName(arguments[3]) : .main
        guard arguments.count < 5 || arguments[4] == "long-log" else { throw ChildError.usage }
        let longLog = arguments.count == 5
        let store = try ArchiveStore(path: arguments[0], configuration: .init(durability: durability))
        var tree = try store.snapshot(of: archive)?.nodes ?? []
        var generation = try store.summary(of: archive)?.latestGeneration ?? 0
        var active = false
        /// Foreground events, each committed, until the log is longer than a save copies.
        func lengthenTheLog() throws {
            while framesInWriteAheadLog(arguments[0] + "-wal") < copiedLogPages {
                for _ in 0..<16 {
                    active.toggle()
                    try store.record(active ? .didBecomeActive : .willEnterForeground)
                }
            }
        }
        if longLog { try lengthenTheLog() }
        announce("ready")
        while true {
            if longLog {
                try lengthenTheLog()
                try store.record(.didEnterBackground)
            } else if Int.random(in: 0..<3, using: &random) == 0 {
                // As an app going to the background, one save in three: the save after it copies a
                // long write-ahead log into the file first, and its commit starts the log over.
                try store.record(.didEnterBackground)
            }
            let base = generation
            generation = generation.next
            if tree.isEmpty || Int.random(in: 0..<4, using: &random) == 0 {
                tree = try Content.tree(count: Int.random(in: 5...120, using: &random), using: &random)
                announce("begin \(generation) \(Content.digest(tree))")
                try store.save(tree, header: Content.header, in: archive)
            } else {
                let change = try Content.change(tree, using: &random)
                tree = change.tree
                announce("begin \(generation) \(Content.digest(tree))")
                try store.saveChanges(
                    change.changed, removing: change.removed, basedOn: base, header: Content.header, in: archive)
            }
            announce("ack \(generation)")
        }
    }
}

enum ChildError: Error {
    case usage
}
