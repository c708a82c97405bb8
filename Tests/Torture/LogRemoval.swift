import Foundation
import RestorationArchive
import TestSupport

/// 1e. The write-ahead log, or its index, removed while the app saves (a cleaning tool
/// taking `-wal` or `-shm` for a temporary file), then SIGKILL: no save acknowledged after the
/// removal, no file torn, and no save of another process lost.
///
/// A child process (`log-removal-loop`) saves trees over and over into a new store, as
/// `save-kill`'s does, announcing each save before it and acknowledging it after. A second
/// thread of the child removes the store's `-wal` (half the trials) or `-shm` at a random
/// moment, announcing it before and after. After the log's removal, one time in three, the
/// thread opens a store at the path, which makes an empty `-wal` again: while the child's
/// store has the removed log's commits in the index they share, the opening is refused
/// (`writeAheadLogNeedsRecovery`); otherwise that store records a launch's first event and
/// saves an archive of its own, `scene-3`. After the index's removal, a second process
/// starts saving the archive `scene-2` (a `save-loop` child), through an index of its own.
/// The saves after the removal must be refused with `storeFileMoved`: the child then does
/// what the error says, releases the store, opens it again (while the thread's opening,
/// still under way, keeps the removed log's index, that opening says the log needs
/// recovery, and is tried again, as the error says), announces the newest generation it
/// finds there, and saves on. The parent kills the child at a random moment (after the
/// index's removal, 0–20 ms after the second process is ready), or 0–3 ms after a refusal (a
/// quarter of the trials), and checks:
/// - no save begun after the removal was acknowledged before the store was opened again (one
///   under way as the file went may have committed, and been acknowledged), and none was
///   refused before the removal began;
/// - the store opened again holds a generation exactly as it was saved: after the log's
///   removal, the file as SQLite last copied the log into it (the release copies nothing from
///   a log no path names);
/// - the next launch: `check()` finds nothing (a copy from the removed log that a kill
///   interrupted would have torn the file, with no log to finish it from), every retained
///   generation is exactly as saved, and none acknowledged since the store was opened again
///   (or, without a removal, at all) is lost; after the index's removal, none acknowledged
///   before it either, and none of the second process's; the thread's event and save of
///   `scene-3`, acknowledged, are there (a store opened through the removed log's index
///   committed where the next launch did not read).
enum LogRemoval {
    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("log-removal")
        var tally = Tally()
        let trials = scale.trials(quick: 100, full: 1_000)
        defer { scenario.remark(tally.description(trials: trials)) }
        try withTemporaryDirectory { directory in
            for index in 0..<trials {
                scenario.trial("trial \(index)") { trial in
                    try killOneChild(path: "\(directory)/store-\(index).sqlite", tally: &tally, trial: &trial, random: &random)
                }
            }
        }
        return scenario
    }

    /// Where the kills landed.
    struct Tally {
        var beforeRemoval = 0
        var beforeReopening = 0
        var afterReopening = 0
        var madeAgain = 0
        var otherOpenings = 0
        var otherSaves = 0
        var reopeningsTriedAgain = 0
        var refused = 0
        var acknowledgedAsTheLogWent = 0
        var indexRemovals = 0
        var secondWriterSaves = 0

        func description(trials: Int) -> String {
            "\(trials) children killed: \(beforeRemoval) before the removal, \(beforeReopening) after it and "
                + "before the store was opened again, \(afterReopening) after; \(madeAgain) logs made again by "
                + "another opening (\(otherOpenings) of which opened, \(otherSaves) saves of 'scene-3' acknowledged); "
                + "\(reopeningsTriedAgain) openings after a refusal tried again while that opening was under way; "
                + "\(refused) saves refused; \(acknowledgedAsTheLogWent) saves acknowledged "
                + "though begun before the removal and ended after it; \(indexRemovals) removals of the index (-shm) "
                + "rather than the log, each followed by a second process saving 'scene-2' (\(secondWriterSaves) saves "
                + "acknowledged)"
        }
    }

    private static func killOneChild(path: String, tally: inout Tally, trial: inout Trial, random: inout SeededGenerator)
        throws
    {
        let index = Bool.random(using: &random)
        let child = try Child(
            Child.torture, ["child", "log-removal-loop", path, "\(random.next())", index ? "shm" : "wal"])
        guard child.nextLine() == "ready" else {
            child.kill()
            child.wait()
            trial.fail("the child never got ready: \(child.lines)")
            return
        }
        var writer: Child?
        if index {
            // Another process opening the store once the index is gone makes one of its own,
            // and saves its own archive through it.
            while let line = child.nextLine(timeout: 2), line != "removed" {}
            writer = try Child(Child.torture, ["child", "save-loop", path, "normal", "\(random.next())", "scene-2"])
            if writer?.nextLine() != "ready" { trial.fail("the second writer never got ready: \(writer?.lines ?? [])") }
            usleep(UInt32.random(in: 0...20_000, using: &random))
        } else if Bool.random(using: &random) {
            usleep(UInt32.random(in: 0...60_000, using: &random))
        } else {
            // Aimed at the release after the refusal, where a copy from the removed log into
            // the file would be under way.
            while let line = child.nextLine(timeout: 2), !line.hasPrefix("refused ") {}
            usleep(UInt32.random(in: 0...3_000, using: &random))
        }
        child.kill()
        writer?.kill()
        child.remainingLines()
        let ending = child.wait()
        trial.expect(ending.signalled && ending.status == SIGKILL, "the child ended by itself (status \(ending.status))")
        // The second writer is `save-kill`'s child, read and checked as that scenario does.
        var writerHistory = SaveKill.History()
        var writerLandings = SaveKill.Landings()
        let writerBegun = writer.flatMap { SaveKill.collect($0, into: &writerHistory, landings: &writerLandings, trial: &trial) }
        tally.secondWriterSaves += writerLandings.saves
        if index { tally.indexRemovals += 1 }

        // The child's story, line by line.
        var digests: [Generation: UInt64] = [:]
        var acknowledged: Generation = 0
        var begun: Generation?
        var removing = false
        var removed = false
        var reopened = false
        var begunAfterRemoval = false
        // A save under way as the file went may be lost when it was the index: another
        // process's connection may write over it in the log. The ones before may not.
        var acknowledgedBeforeRemoval: Generation = 0
        // The thread's save of `scene-3`: begun, and acknowledged.
        var otherSave: (digest: UInt64, acknowledged: Bool)?
        var otherRecorded = false
        for line in child.lines.dropFirst() {
            let words = line.split(separator: " ")
            let generation = words.count >= 2 ? Int64(words[1]).map { Generation($0) } : nil
            let digest = words.count == 3 ? UInt64(words[2]) : nil
            if words.count == 3, words[0] == "begin", let generation, let digest {
                digests[generation] = digest
                begun = generation
                begunAfterRemoval = removed && !reopened
            } else if words.count == 2, words[0] == "ack", let generation, generation == begun {
                trial.expect(!begunAfterRemoval, "save \(generation), begun after the removal, was acknowledged")
                if removed && !reopened { tally.acknowledgedAsTheLogWent += 1 }
                acknowledged = generation
                begun = nil
            } else if words.count == 2, words[0] == "refused", generation != nil {
                trial.expect(removing, "a save was refused before the log's removal began: \(line)")
                tally.refused += 1
                begun = nil
            } else if line == "removing" {
                removing = true
                acknowledgedBeforeRemoval = acknowledged
            } else if line == "removed" {
                removed = true
            } else if line == "made-again" {
                tally.madeAgain += 1
            } else if line == "other-opened" {
                tally.otherOpenings += 1
            } else if line == "other-recorded" {
                otherRecorded = true
            } else if words.count == 2, words[0] == "other-begin", let digest = UInt64(words[1]) {
                otherSave = (digest, false)
            } else if words.count == 2, words[0] == "other-ack", let digest = UInt64(words[1]), otherSave?.digest == digest {
                otherSave?.acknowledged = true
                tally.otherSaves += 1
            } else if words.count == 2, words[0] == "other-refused" {
                // Refused, it was never acknowledged: what scene-3 holds is checked below.
            } else if words.count == 2, words[0] == "tried-again", Int(words[1]) != nil {
                tally.reopeningsTriedAgain += 1
            } else if words.count == 3, words[0] == "reopened", let generation, let digest {
                trial.expect(
                    generation == 0 || digests[generation] == digest,
                    "the store opened again holds generation \(generation) otherwise than it was saved")
                reopened = true
                // What the release kept is what the next launch must find, at least.
                acknowledged = generation
            } else {
                trial.fail("the child said: \(line)")
            }
        }
        switch (removing, reopened) {
        case (false, _): tally.beforeRemoval += 1
        case (true, false): tally.beforeReopening += 1
        case (true, true): tally.afterReopening += 1
        }

        // The next launch.
        let store = try ArchiveStore(path: path)
        let problems = try store.check()
        trial.expect(problems.isEmpty, "check: \(problems)")
        let newest = try store.summary(of: .main)?.latestGeneration ?? 0
        if !removing || reopened {
            trial.expect(newest >= acknowledged, "acknowledged generation \(acknowledged) lost; newest \(newest)")
        } else if index {
            trial.expect(
                newest >= acknowledgedBeforeRemoval,
                "acknowledged generation \(acknowledgedBeforeRemoval) lost with the index; newest \(newest)")
        }
        if writer != nil {
            try SaveKill.verify(
                try ArchiveName("scene-2"), of: store, history: &writerHistory, begun: writerBegun,
                landings: &writerLandings, trial: &trial)
        }
        if otherRecorded {
            trial.expect(
                try store.journal().contains { $0.kind == .lifecycle(.willFinishLaunching, .inactive) },
                "the other opening's acknowledged event is lost")
        }
        if let otherSave {
            let scene = try ArchiveName("scene-3")
            let found = try store.snapshot(of: scene).map { Content.digest($0.nodes) }
            if otherSave.acknowledged {
                trial.expect(found == otherSave.digest, "the other opening's acknowledged save of scene-3 is lost")
            } else {
                trial.expect(found == nil || found == otherSave.digest, "scene-3 holds what was never saved")
            }
        }
        for summary in try store.generations(of: .main) {
            let snapshot = try store.snapshot(of: .main, generation: summary.generation)
            trial.expect(
                snapshot.map { Content.digest($0.nodes) } == digests[summary.generation],
                "generation \(summary.generation) differs from what was saved")
        }
    }

    /// The child: `log-removal-loop PATH SEED [wal | shm]` (`wal` when not given).
    static func child(_ arguments: [String]) throws {
        guard (2...3).contains(arguments.count), let seed = UInt64(arguments[1]) else { throw ChildError.usage }
        let path = arguments[0]
        let removed = path + "-" + (arguments.count == 3 ? arguments[2] : "wal")
        guard removed.hasSuffix("-wal") || removed.hasSuffix("-shm") else { throw ChildError.usage }
        var random = SeededGenerator(seed: seed)
        var store: ArchiveStore? = try ArchiveStore(path: path)
        var tree: [ArchivedNode] = []
        var generation: Generation = 0
        let removalDelay = UInt32.random(in: 0...30_000, using: &random)
        let makeAgain = Int.random(in: 0..<3, using: &random) == 0
        let otherSeed = random.next()
        announce("ready")
        let remover = Thread {
            usleep(removalDelay)
            announce("removing")
            unlink(removed)
            announce("removed")
            // (A store opened in this process shares the index it has: only the log is made again.)
            // The opening makes the log again. It is refused while the index names the
            // removed log's commits; a store it opens saves an archive of its own.
            if makeAgain, removed.hasSuffix("-wal") {
                let other = try? ArchiveStore(path: path)
                announce("made-again")
                if let other {
                    announce("other-opened")
                    // A launch's first event: a page of the journal, which the child's saves
                    // never change.
                    if (try? other.record(.willFinishLaunching)) != nil { announce("other-recorded") }
                    var random = SeededGenerator(seed: otherSeed)
                    guard let saved = try? Content.tree(count: 12, using: &random) else { return }
                    let digest = Content.digest(saved)
                    announce("other-begin \(digest)")
                    do {
                        try other.save(saved, header: Content.header, in: ArchiveName("scene-3"))
                        announce("other-ack \(digest)")
                    } catch {
                        announce("other-refused \(digest)")
                    }
                }
            }
        }
        remover.start()
        while store != nil {
            let base = generation
            let next = generation.next
            let full = tree.isEmpty || Int.random(in: 0..<4, using: &random) == 0
            let change = full ? nil : try Content.change(tree, using: &random)
            let saved =
                try change?.tree ?? Content.tree(count: Int.random(in: 5...120, using: &random), using: &random)
            announce("begin \(next) \(Content.digest(saved))")
            let outcome = Result { () throws(ArchiveStoreError) in
                // Through `store`, not a second reference: releasing the store must close it.
                guard let open = store else { return }
                if let change {
                    try open.saveChanges(
                        change.changed, removing: change.removed, basedOn: base, header: Content.header, in: .main)
                } else {
                    try open.save(saved, header: Content.header, in: .main)
                }
            }
            switch outcome {
            case .success: break
            case .failure(.storeFileMoved):
                announce("refused \(next)")
                // What the error says: release the store, then open it again. The thread's
                // opening, while under way, keeps the index naming the removed log's commits:
                // the opening then says the log needs recovery, and is tried again.
                store = nil
                var tries = 0
                let (reopened, snapshot) = try { () throws(ArchiveStoreError) in
                    while true {
                        do throws(ArchiveStoreError) {
                            let reopened = try ArchiveStore(path: path)
                            return (reopened, try reopened.snapshot(of: .main))
                        } catch .writeAheadLogNeedsRecovery where tries < 2_000 {
                            tries += 1
                            usleep(1_000)
                        }
                    }
                }()
                if tries > 0 { announce("tried-again \(tries)") }
                generation = snapshot?.header.generation ?? 0
                tree = snapshot?.nodes ?? []
                announce("reopened \(generation) \(Content.digest(tree))")
                store = reopened
                continue
            case .failure(let error): throw error
            }
            announce("ack \(next)")
            generation = next
            tree = saved
        }
    }
}
