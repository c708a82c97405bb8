import CPowerCut
import CSQLite
import Foundation
import RestorationArchive
import TestSupport

/// 12. A power cut while an app saves, per durability setting: the next launch opens the
/// store, finds it sound, and reads every retained generation exactly as it was saved; with
/// ``ArchiveStore/Durability/full`` no acknowledged save, discard or erase is lost.
///
/// A child process (this executable, `power-cut-loop`) runs SQLite over the power-cut VFS
/// (`Tests/PowerCut`), opens the store as an app does (a new one, or one of schema version 6
/// that the opening migrates) and then saves two archives (`main` and `other`, full and
/// incremental), records moves to the background and back, discards `other`, erases the store
/// (going on with it, as an app does) and opens it again (the last connection's close copies
/// the log into the file and removes it) now and then, announcing each save's digest before
/// it and acknowledging it after, as `save-kill`'s child does, and each discard and erase;
/// one child in five first saves a large `other` and discards it, which compacts the store,
/// and one in ten first erases the store. At a write, truncation or sync of the
/// store's files chosen at random the power goes off: the writes not yet synced are lost,
/// kept, or kept sector by sector up to a random one, and the child exits at once. The parent
/// then opens the store as the next launch after a reboot does (the `-shm` left as it was,
/// or gone) and compares it with what was on disk before and what the child announced since
/// (the store as before an erase, or after it).
enum PowerCut {
    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("power-cut")
        let perSetting = scale.trials(quick: 40, full: 600)
        for durability in [ArchiveStore.Durability.normal, .full] {
            var tally = Tally()
            defer { scenario.remark("\(durability): \(tally.summary(trials: perSetting))") }
            try withTemporaryDirectory { directory in
                var history = StoreHistory()
                for index in 0..<perSetting {
                    // A new store every 10 trials, every other one a store of schema version 6
                    // to migrate: some cuts land while it is made or migrated.
                    let path = "\(directory)/store-\(index / 10).sqlite"
                    if index % 10 == 0 {
                        history = StoreHistory()
                        if index % 20 == 10 {
                            try FileManager.default.copyItem(atPath: fixture, toPath: path)
                            history = StoreHistory(try fixtureHistories(in: directory))
                        }
                    }
                    scenario.trial("\(durability) trial \(index)") { trial in
                        try cutOnce(
                            path: path, durability: durability, fresh: index % 10 == 0, migrating: index % 20 == 10,
                            label: "\(durability)-trial-\(index)", history: &history, tally: &tally, trial: &trial,
                            random: &random)
                    }
                }
            }
        }
        return scenario
    }

    /// The child's exit status when the power goes off.
    static let exitStatus: Int32 = 86

    /// The app's archives: `main`, and a scene's (`other`) that is now and then discarded.
    static func archives() throws -> [ArchiveName] { [.main, try ArchiveName("other")] }

    /// What the children announced for one archive of one store.
    struct History {
        var digests: [Generation: UInt64] = [:]
        /// The newest generation a save acknowledged.
        var acknowledged: Generation = 0
        /// The newest generation when an acknowledged discard returned.
        var discarded: Generation?
        /// The newest generation before the child ran, on disk whatever the durability: the
        /// parent, which never loses power, read it and closed the store (which copies the
        /// log into the file), or it came with the fixture. A cut must never take it back.
        var durable: Generation = 0
    }

    /// What the children announced for one store: its archives' histories, a set of them for
    /// each erase (which starts the store, and the numbering of its generations, afresh).
    struct StoreHistory {
        /// The first is the store as the previous launch left it; each erase a child began
        /// adds one.
        var epochs: [[ArchiveName: History]]
        /// The epoch that the last erase to return began: with `.full`, the store is in it or
        /// a later one.
        var erasedTo: Int?

        init(_ archives: [ArchiveName: History] = [:]) { epochs = [archives] }

        /// The archives' histories in the newest epoch.
        var current: [ArchiveName: History] {
            get { epochs[epochs.count - 1] }
            set { epochs[epochs.count - 1] = newValue }
        }

        /// Takes in a line the child announced (`begin ARCHIVE GENERATION DIGEST`, `ack
        /// ARCHIVE GENERATION`, `discarding ARCHIVE`, `discarded ARCHIVE GENERATION
        /// [compacted]`, `erasing`, `erased`, `ready`, `no power cut`) or the power-cut VFS
        /// wrote, counting what it says in `tally`. Returns `false` for any other line.
        mutating func read(_ line: String, tally: inout Tally) throws -> Bool {
            let words = line.split(separator: " ")
            if words.count == 4, words[0] == "begin", let generation = Int64(words[2]), let digest = UInt64(words[3]) {
                current[try ArchiveName(String(words[1])), default: History()].digests[Generation(generation)] = digest
            } else if words.count == 3, words[0] == "ack", let generation = Int64(words[2]) {
                let archive = try ArchiveName(String(words[1]))
                current[archive, default: History()].acknowledged = max(
                    current[archive]?.acknowledged ?? 0, Generation(generation))
                tally.acknowledged += 1
            } else if (3...4).contains(words.count), words[0] == "discarded", let generation = Int64(words[2]) {
                current[try ArchiveName(String(words[1])), default: History()].discarded = Generation(generation)
                tally.acknowledged += 1
                if words.count == 4, words[3] == "compacted" { tally.compactions += 1 }
            } else if words.count == 8, words[0] == "power-cut", let pending = Int(words[3]), let undone = Int(words[6]) {
                tally.landings["\(words[1]) of the \(words[2].dropLast())", default: 0] += 1
                tally.pending += pending
                tally.undone += undone
            } else if line == "erasing" {
                epochs.append([:])
            } else if line == "erased" {
                erasedTo = epochs.count - 1
                tally.acknowledged += 1
                tally.erases += 1
            } else {
                return words.first == "discarding" || line == "ready" || line == "no power cut"
            }
            return true
        }
    }

    /// A store of schema version 6 that the library's tests migrate
    /// (`Tests/RestorationArchiveTests/Fixtures`).
    static let fixture = URL(filePath: #filePath).deletingLastPathComponent()
        .appending(path: "../RestorationArchiveTests/Fixtures/schema-v6.sqlite").standardized.path

    /// What ``fixture`` holds once migrated: each archive's retained generations, all durable.
    static func fixtureHistories(in directory: String) throws -> [ArchiveName: History] {
        let path = "\(directory)/fixture-read.sqlite"
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        defer { for file in Files.storeFiles(path) { Files.remove(file) } }
        let store = try ArchiveStore(path: path)
        var histories: [ArchiveName: History] = [:]
        for archive in try store.archiveNames() {
            var history = History()
            for summary in try store.generations(of: archive) {
                history.digests[summary.generation] = try store.snapshot(of: archive, generation: summary.generation)
                    .map { Content.digest($0.nodes) }
            }
            history.durable = try store.summary(of: archive)?.latestGeneration ?? 0
            history.acknowledged = history.durable
            histories[archive] = history
        }
        return histories
    }

    /// Where the cuts landed and what they took, for the scenario's remark.
    struct Tally {
        var landings: [String: Int] = [:]
        var beforeReady = 0
        /// Of those, cuts while a store of schema version 6 was migrated.
        var migrationsCut = 0
        /// Children that ended their work before the cut came (at a checkpoint they never made).
        var uncut = 0
        var pending = 0
        var undone = 0
        var acknowledged = 0
        /// Discards that compacted the store before the cut.
        var compactions = 0
        /// Erases that returned; cuts in an erase; launches that found the store as it was
        /// before an erase that returned (with `.normal`).
        var erases = 0
        var erasesCut = 0
        var erasesUndone = 0
        /// What the read-only opening before each launch did.
        var readOnly: [String: Int] = [:]
        /// Where the cuts of the trials whose child began with a compacting discard landed.
        var compactionCuts: [String: Int] = [:]
        var lostAcknowledged = 0
        /// The most acknowledged generations of one archive a launch lost.
        var mostLost: Int64 = 0

        func summary(trials: Int) -> String {
            let places = landings.listed { name, count in "\(count) at a \(name)" }
            return "\(trials - uncut) power cuts (\(places); \(beforeReady) before the store was open, \(migrationsCut) of "
                + "them migrating a store of schema version 6; \(uncut) children ended first), \(pending) writes pending "
                + "at the cuts, \(undone) of them undone; \(acknowledged) saves, discards and erases acknowledged "
                + "(\(compactions) discards compacted the store); cuts of a compacting discard's trials: "
                + compactionCuts.listed { name, count in "\(count) \(name)" } + "; "
                + "\(erases) erases returned, \(erasesCut) cuts in an erase, \(erasesUndone) launches found the store as "
                + "before an erase that returned; read-only before the launch: "
                + readOnly.listed { name, count in "\(count) \(name)" } + "; "
                + "\(lostAcknowledged) launches lost acknowledged ones (at most \(mostLost) generations of an archive)"
        }
    }

    private static func cutOnce(
        path: String, durability: ArchiveStore.Durability, fresh: Bool, migrating: Bool, label: String,
        history: inout StoreHistory, tally: inout Tally, trial: inout Trial, random: inout SeededGenerator
    ) throws {
        // Early cuts land while the store is made or opened; the rest among saves, or, one in
        // five, at a sync or truncation of the database (the end of a checkpoint), one in five
        // in a discard that compacts the store or just after it, one in ten in an erase (about
        // 60 writes, truncations and syncs) or just after it.
        let draw = Int.random(in: 0..<10, using: &random)
        let mode = draw < 2 ? "syncs" : draw < 4 ? "compaction" : draw == 4 ? "erase" : nil
        let cutAt =
            switch mode {
            case "syncs": Int.random(in: 1...4, using: &random)
            case "compaction": Int.random(in: 1...1_100, using: &random)
            case "erase": Int.random(in: 1...70, using: &random)
            default: Int.random(in: 1...(fresh && Bool.random(using: &random) ? 60 : 2_500), using: &random)
            }
        let child = try Child(
            Child.torture,
            ["child", "power-cut-loop", path, "\(durability)", "\(random.next())", "\(cutAt)"] + (mode.map { [$0] } ?? []))
        child.remainingLines(timeout: 120)
        let ending = child.wait(timeout: 5)
        let uncut = child.lines.last == "no power cut"
        trial.expect(
            !ending.signalled && ending.status == (uncut ? 0 : exitStatus),
            "the child did not end at the power cut (\(ending.signalled ? "signal" : "status") \(ending.status)): \(child.lines.suffix(3))")
        if uncut { tally.uncut += 1 }
        let ready = child.lines.contains("ready")
        for line in child.lines where !(try history.read(line, tally: &tally)) {
            trial.fail("the child said: \(line)")
        }
        if mode == "compaction" {
            let discarding = child.lines.contains { $0.hasPrefix("discarding ") }
            let discarded = child.lines.contains { $0.hasPrefix("discarded ") }
            tally.compactionCuts[discarded ? "after it returned" : discarding ? "in it" : "before it", default: 0] += 1
        }
        if child.lines.last == "erasing" || child.lines.dropLast().last == "erasing" { tally.erasesCut += 1 }
        if !ready { tally.beforeReady += 1 }
        if !ready && migrating { tally.migrationsCut += 1 }
        // A reboot leaves the log's index as it was, or, its creation never made durable, none.
        if Int.random(in: 0..<3, using: &random) == 0 { Files.remove(path + "-shm") }
        // What a failure left is kept, when asked for (`TORTURE_KEEP_FAILED`): the trial
        // replays by its seed, but only after every trial before it on the store.
        let kept = Files.keepCopy(of: path, named: "power-cut-\(label)")

        // The store is in one of the epochs: as the previous launch left it or after an erase
        // the child began (with `.full`, the last one to return, or a later one).
        let candidates = history.epochs.indices.filter { durability == .normal || $0 >= history.erasedTo ?? 0 }

        // A tool (`restorectl`) reads the store before the app's next launch, read-only, which
        // never writes: the log's index the cut left is stale, or gone (the log is replayed in
        // memory then). What it reads is what the launch recovers.
        var readOnly: [String]?
        do {
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            let problems = try reader.check()
            trial.expect(problems.isEmpty, "read-only check: \(problems)")
            let found = try candidates.contains { try isIn(history.epochs[$0], reader) }
            trial.expect(found, "read-only, the store reads as none of the states it may be in")
            readOnly = try contents(of: reader)
            tally.readOnly["read", default: 0] += 1
        } catch ArchiveStoreError.writeAheadLogNeedsRecovery {
            tally.readOnly["refused until the app recovers the log", default: 0] += 1
        } catch ArchiveStoreError.notAStore where fresh && !migrating {
            // The cut took back the making of the new store (with `.normal` even once it was
            // made: nothing was synced yet): its file is empty, or SQLite's empty database,
            // until the app's next launch makes it a store.
            tally.readOnly["refused as not a store yet", default: 0] += 1
        } catch {
            trial.fail("read-only: \(error)")
        }

        // The next launch.
        do {
            let store = try ArchiveStore(path: path, configuration: .init(durability: durability))
            if let readOnly {
                trial.expect(try contents(of: store) == readOnly, "the read-only open read another state than the launch")
            }
            let problems = try store.check()
            trial.expect(problems.isEmpty, "check: \(problems)")
            _ = try store.journal(limit: 16)
            _ = try store.launches()
            var epoch = candidates.last ?? 0
            for candidate in candidates.reversed() where try isIn(history.epochs[candidate], store) {
                epoch = candidate
                break
            }
            if let erasedTo = history.erasedTo, epoch < erasedTo { tally.erasesUndone += 1 }
            var archives = history.epochs[epoch]
            var lost = false
            for archive in Set(try store.archiveNames()).union(archives.keys).sorted() {
                var found = archives[archive] ?? History()
                let lostCount = try verify(archive, of: store, durability: durability, history: &found, trial: &trial)
                lost = lost || lostCount > 0
                tally.mostLost = max(tally.mostLost, lostCount)
                archives[archive] = found
            }
            history = StoreHistory(archives)
            if lost { tally.lostAcknowledged += 1 }
            // The app goes on.
            let tree = try Content.tree(count: 4, using: &random)
            let saved = try store.save(tree, header: Content.header, in: .main)
            trial.expect(
                try store.snapshot(of: .main).map { Content.digest($0.nodes) } == Content.digest(tree),
                "a save after the launch does not read back")
            history.current[.main, default: History()].digests[saved.generation] = Content.digest(tree)
            history.current[.main]?.acknowledged = saved.generation
            history.current[.main]?.durable = saved.generation
        } catch {
            trial.fail("the next launch: \(error)")
        }
        if let kept { Files.settle(kept, of: &trial, children: [child]) }
    }

    /// Every retained generation of each archive of `store`, with its nodes' digest.
    private static func contents(of store: ArchiveStore) throws -> [String] {
        try store.archiveNames().sorted().flatMap { archive in
            try store.generations(of: archive).map { summary in
                let snapshot = try store.snapshot(of: archive, generation: summary.generation)
                return "\(archive) \(summary.generation): \(snapshot.map { Content.digest($0.nodes) } ?? 0)"
            }
        }
    }

    /// Whether `store` holds exactly what `archives` say: each retained generation of every
    /// archive as announced, and what was on disk before the child ran.
    private static func isIn(_ archives: [ArchiveName: History], _ store: ArchiveStore) throws -> Bool {
        for archive in Set(try store.archiveNames()).union(archives.keys) {
            let history = archives[archive] ?? History()
            guard (try store.summary(of: archive)?.latestGeneration ?? 0) >= history.durable else { return false }
            for summary in try store.generations(of: archive) {
                let snapshot = try store.snapshot(of: archive, generation: summary.generation)
                guard let expected = history.digests[summary.generation],
                    snapshot.map({ Content.digest($0.nodes) }) == expected
                else { return false }
            }
        }
        return true
    }

    /// Checks what the next launch finds of `archive`: every retained generation exactly as
    /// announced, none of what was durable before the child ran lost; with `.full`, no
    /// acknowledged save or discard lost. Then `history` starts from what it found. Returns how
    /// many acknowledged generations were lost.
    private static func verify(
        _ archive: ArchiveName, of store: ArchiveStore, durability: ArchiveStore.Durability, history: inout History,
        trial: inout Trial
    ) throws -> Int64 {
        let summary = try store.summary(of: archive)
        let newest = summary?.latestGeneration ?? 0
        let generations = try store.generations(of: archive).map(\.generation)
        let lost = max(0, history.acknowledged.rawValue - newest.rawValue)
        trial.expect(
            newest >= history.durable, "'\(archive)': generation \(history.durable), on disk before the cut, lost; newest \(newest)")
        if durability == .full {
            trial.expect(lost == 0, "'\(archive)': acknowledged generation \(history.acknowledged) lost; newest \(newest)")
            if let discarded = history.discarded {
                trial.expect(
                    generations.allSatisfy { $0 > discarded },
                    "'\(archive)': discarded at generation \(discarded), yet it retains \(generations)")
            }
        }
        for generation in generations {
            guard let expected = history.digests[generation] else {
                trial.fail("'\(archive)': generation \(generation) was never announced")
                continue
            }
            let snapshot = try store.snapshot(of: archive, generation: generation)
            trial.expect(
                snapshot.map { Content.digest($0.nodes) } == expected,
                "'\(archive)': generation \(generation) differs from what was saved")
        }
        // Generations begun but never committed, or lost, will be numbered again.
        history.digests = history.digests.filter { $0.key <= newest }
        history.acknowledged = newest
        history.durable = newest
        history.discarded = nil
        return lost
    }

    /// The child: an app whose machine loses power.
    /// `power-cut-loop PATH DURABILITY SEED CUT_AT [syncs | compaction | erase]`: the power
    /// goes off at the CUT_AT-th write, truncation or sync of the store's files (with `syncs`,
    /// of the database's syncs and truncations alone; with `compaction` or `erase`, counted
    /// from the start of a discard that compacts the store, or of an erase, made first).
    static func child(_ arguments: [String]) throws {
        guard (4...5).contains(arguments.count), let seed = UInt64(arguments[2]), let cutAt = Int64(arguments[3]) else {
            throw ChildError.usage
        }
        let mode = arguments.count == 5 ? arguments[4] : nil
        guard mode == nil || ["syncs", "compaction", "erase"].contains(mode) else { throw ChildError.usage }
        let armedLater = mode == "compaction" || mode == "erase"
        guard powercut_install(armedLater ? 0 : cutAt, mode == "syncs" ? 1 : 0, seed, exitStatus) == SQLITE_OK else {
            throw ChildError.usage
        }
        var random = SeededGenerator(seed: seed)
        let path = arguments[0]
        let configuration = ArchiveStore.Configuration(durability: arguments[1] == "full" ? .full : .normal)
        var store = try ArchiveStore(path: path, configuration: configuration)
        let archives = try archives()
        var trees: [ArchiveName: [ArchivedNode]] = [:]
        for archive in archives { trees[archive] = try store.snapshot(of: archive)?.nodes ?? [] }
        announce("ready")
        if mode == "compaction" {
            // A large scene (3,000 nodes, about 1.5 MB) saved, then discarded: the discard
            // frees most of the store and compacts it (`VACUUM`, then a truncating checkpoint),
            // about 1,000 writes, truncations and syncs in all, which the cut lands among.
            let archive = archives[1]
            let large = try Content.tree(count: 3_000, stateSize: 300...500, using: &random)
            let generation = (try store.summary(of: archive)?.latestGeneration ?? 0).next
            announce("begin \(archive) \(generation) \(Content.digest(large))")
            try store.save(large, header: Content.header, in: archive)
            announce("ack \(archive) \(generation)")
            trees[archive] = large
            powercut_arm(cutAt)
            try discard(archive, of: store, trees: &trees)
        } else if mode == "erase" {
            powercut_arm(cutAt)
            try erase(path, trees: &trees)
        }
        var active = false
        // A cut at a checkpoint the child does not reach leaves it to end by itself.
        for _ in 0..<1_500 {
            switch Int.random(in: 0..<24, using: &random) {
            case 0:
                // The app is launched again: the last connection's close copies the log into
                // the file and removes it.
                store = try ArchiveStore(path: path, configuration: configuration)
            case 1 where !(trees[archives[1]] ?? []).isEmpty:
                try discard(archives[1], of: store, trees: &trees)
            case 6 where Int.random(in: 0..<2, using: &random) == 0:
                // The app erases its store (as after `isUnusableStore`), and goes on with it.
                try erase(path, trees: &trees)
            case 2...5:
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    active.toggle()
                    try store.record(active ? .didBecomeActive : .willEnterForeground)
                }
                try store.record(.didEnterBackground)
            default:
                let archive = archives[Int.random(in: 0..<4, using: &random) == 0 ? 1 : 0]
                let base = try store.summary(of: archive)?.latestGeneration ?? 0
                let tree = trees[archive] ?? []
                if tree.isEmpty || Int.random(in: 0..<4, using: &random) == 0 {
                    let next = try Content.tree(count: Int.random(in: 5...120, using: &random), using: &random)
                    announce("begin \(archive) \(base.next) \(Content.digest(next))")
                    try store.save(next, header: Content.header, in: archive)
                    trees[archive] = next
                } else {
                    let change = try Content.change(tree, using: &random)
                    announce("begin \(archive) \(base.next) \(Content.digest(change.tree))")
                    try store.saveChanges(
                        change.changed, removing: change.removed, basedOn: base, header: Content.header, in: archive)
                    trees[archive] = change.tree
                }
                announce("ack \(archive) \(base.next)")
            }
        }
        announce("no power cut")
    }

    /// Erases the store at `path`, as an app does with a store it cannot use, announcing it
    /// before and after; the app's open store goes on with the empty one.
    private static func erase(_ path: String, trees: inout [ArchiveName: [ArchivedNode]]) throws {
        announce("erasing")
        try ArchiveStore.erase(at: path)
        trees = [:]
        announce("erased")
    }

    /// Discards `archive`, announcing it before and after: `discarded NAME GENERATION`, with
    /// `compacted` when the discard compacted the store.
    private static func discard(
        _ archive: ArchiveName, of store: ArchiveStore, trees: inout [ArchiveName: [ArchivedNode]]
    ) throws {
        announce("discarding \(archive)")
        let result = try store.discard(archive, reason: "the scene was closed")
        trees[archive] = []
        let generation = try store.summary(of: archive)?.latestGeneration ?? 0
        announce("discarded \(archive) \(generation)" + (result.storeCompacted ? " compacted" : ""))
    }
}
