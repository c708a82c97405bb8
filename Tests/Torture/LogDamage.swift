import Foundation
import RestorationArchive
import TestSupport

/// 7c. Damage to the write-ahead log a killed app left: bytes flipped or zeroed in it, its
/// header damaged, or the log cut short as a write torn by a power cut. The next launch reads
/// the log back before its first statement; SQLite stops at the first frame whose checksum
/// fails, so the store reads as one of the states committed before it. No crash, no hang, no
/// content that was never saved: every snapshot read is exactly the generation of its number
/// as it was saved, or a typed error. Then the app goes on as after `damage`: it saves again,
/// or erases the store and starts afresh.
///
/// The three stores keep 16 generations, more than they save, so that every generation an
/// earlier state of the log shows is known. They are copied (file and log) while their store
/// is open, as a kill leaves them; no `-shm`, as a new process rebuilds the log's index.
enum LogDamage {
    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        try Damage.runBatches(
            Scenario("log-damage"), trials: scale.trials(quick: 500, full: 5_000), child: ["log-damage-batch"],
            makeStores: makeStores(in:random:), random: &random)
    }

    /// `store-N.sqlite` and `store-N.sqlite-wal` in `directory`: one archive saved eight times;
    /// three archives saved three times each between journal entries; 300 nodes saved six
    /// times, in part after the first.
    private static func makeStores(in directory: String, random: inout SeededGenerator) throws {
        let configuration = ArchiveStore.Configuration(retainedGenerations: 16)
        for index in 0..<3 {
            let path = "\(directory)/live-\(index).sqlite"
            let store = try ArchiveStore(path: path, configuration: configuration)
            switch index {
            case 0: try saveChanges(to: store, count: 60, times: 8, random: &random)
            case 1:
                try store.record(.willFinishLaunching)
                for _ in 0..<3 {
                    for name in ["main", "scene-2", "scene-3"] {
                        try store.save(try Content.tree(count: 30, using: &random), header: Content.header, in: ArchiveName(name))
                    }
                    try store.record(.didEnterBackground)
                    try store.record(.willEnterForeground)
                }
            default: try saveChanges(to: store, count: 300, times: 6, random: &random)
            }
            // As a kill leaves them, with the store open: the saves are in the log.
            guard let file = fileBytes(path), let log = fileBytes(path + "-wal"), log.count > 32 else {
                throw SetUpError.noWriteAheadLog(path)
            }
            try Files.write(file, to: "\(directory)/store-\(index).sqlite")
            try Files.write(log, to: "\(directory)/store-\(index).sqlite-wal")
            withExtendedLifetime(store) {}
        }
    }

    /// Why the stores could not be made as a kill leaves them.
    enum SetUpError: Error {
        /// The store had no write-ahead log holding its saves.
        case noWriteAheadLog(String)
    }

    /// A tree of `count` nodes saved in full, then changed and saved in part `times - 1` times.
    private static func saveChanges(to store: ArchiveStore, count: Int, times: Int, random: inout SeededGenerator) throws {
        var tree = try Content.tree(count: count, using: &random)
        var generation = try store.save(tree, header: Content.header).generation
        for _ in 1..<times {
            let change = try Content.change(tree, using: &random)
            tree = change.tree
            generation = try store.saveChanges(
                change.changed, removing: change.removed, basedOn: generation, header: Content.header
            ).generation
        }
    }

    /// The child: runs trials `first..<first + count`, announcing `INDEX ok KIND` or
    /// `INDEX PROBLEM` for each.
    static func batch(_ arguments: [String]) throws {
        guard arguments.count == 4, let seed = UInt64(arguments[1]), let first = Int(arguments[2]),
            let count = Int(arguments[3])
        else { throw ChildError.usage }
        let directory = arguments[0]
        let originals = try (0..<3).map { index in
            let base = "\(directory)/store-\(index).sqlite"
            let (file, log) = (fileBytes(base) ?? [], fileBytes(base + "-wal") ?? [])
            // What was saved: every generation, read from an undamaged copy once SQLite has
            // read its log back and copied it into the file (at the close).
            let scratch = "\(directory)/expected-\(getpid())-\(index).sqlite"
            defer { for file in Files.storeFiles(scratch) { Files.remove(file) } }
            try Files.write(file, to: scratch)
            try Files.write(log, to: scratch + "-wal")
            _ = try ArchiveStore(path: scratch).archiveNames()
            // Damage lands in the header and the frames SQLite reads back, not in the frames of
            // an earlier round of the log after them, which SQLite never reads.
            let live = readBackPartOfWriteAheadLog(base + "-wal").bytes
            return (file: file, log: log, live: live, expected: try Damage.Expected(path: scratch))
        }
        let path = "\(directory)/damaged-\(getpid()).sqlite"
        defer { for file in Files.storeFiles(path) { Files.remove(file) } }
        for index in first..<(first + count) {
            var random = SeededGenerator(seed: seed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
            let original = originals[index % originals.count]
            let (log, kind) = damage(original.log, live: original.live, using: &random)
            for file in Files.storeFiles(path) { Files.remove(file) }
            try Files.write(original.file, to: path)
            try Files.write(log, to: path + "-wal")
            // The next launch reads what the log gives; closing the store copies that into
            // the file, which SQLite's checks then read alone.
            var (problem, earlier) = read(path, expecting: original.expected)
            let passesQuickCheck = Damage.check(path, "quick_check")
            var note = earlier ? ",earlier-state" : ""
            if problem == nil {
                let next = Damage.goOn(path, expecting: original.expected, saving: true, passesQuickCheck: passesQuickCheck)
                problem = next.problem
                note += next.note
            }
            let outcome =
                switch problem {
                case .some(let problem): "\(problem) [\(kind), quick_check \(passesQuickCheck ? "passed" : "failed")]"
                case nil: "ok \(kind)\(note)"
                }
            announce("\(index) \(outcome)")
        }
    }

    /// Damages a copy of the log within its first `live` bytes (its header and the frames
    /// SQLite reads back): flips 1 to 8 bytes, flips a byte of its 32-byte header, zeroes a
    /// run of up to 4 KiB, or cuts it short; one cut in four at a length SQLite or the store
    /// reads specially (``edges(live:)``), which a length drawn over the whole log seldom
    /// hits: a log cut to one byte, which SQLite reports as empty, locked the store's saves
    /// out, and a uniform draw came upon it once, in a standard run.
    private static func damage(_ original: [UInt8], live: Int, using random: inout SeededGenerator) -> ([UInt8], String) {
        var bytes = original
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                bytes[Int.random(in: 0..<live, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            }
            return (bytes, "flipped")
        case 1:
            bytes[Int.random(in: 0..<32, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            return (bytes, "header")
        case 2:
            let start = Int.random(in: 0..<live, using: &random)
            let end = min(live, start + Int.random(in: 1...4096, using: &random))
            for offset in start..<end { bytes[offset] = 0 }
            return (bytes, "zeroed")
        default:
            guard Int.random(in: 0..<4, using: &random) == 0 else {
                return (Array(bytes[..<Int.random(in: 0..<live, using: &random)]), "torn")
            }
            // Half the time at the header's edges, half at a frame's.
            let edges = edges(live: live)[Bool.random(using: &random) ? 0 : 1]
            return (Array(bytes[..<edges[Int.random(in: 0..<edges.count, using: &random)]]), "torn-at-edge")
        }
    }

    /// Lengths below `live` at which a log is cut where its reader decides: nothing, one byte
    /// (reported as empty), the 32-byte header and a byte either side; and a byte either side
    /// of each frame's end (a frame is 24 bytes and a 4,096-byte page).
    static func edges(live: Int) -> [[Int]] {
        let frame = 24 + 4096
        let frameEnds = stride(from: 32 + frame, to: live, by: frame).flatMap { [$0 - 1, $0, $0 + 1] }
        let header = [0, 1, 31, 32, 33].filter { $0 < live }
        return [header, frameEnds.filter { $0 < live }.isEmpty ? header : frameEnds.filter { $0 < live }]
    }

    /// Reads every archive's newest snapshot and every generation it lists, as a launch after
    /// the kill opens the store. `problem`: the first read that gave what was never saved
    /// under its generation's number (typed errors are fine). `earlier`: the store read as a
    /// state before the last save, as SQLite stopped reading the log early.
    private static func read(_ path: String, expecting expected: Damage.Expected) -> (problem: String?, earlier: Bool) {
        let store: ArchiveStore
        do {
            store = try ArchiveStore(path: path)
        } catch {
            return (nil, false)
        }
        var newestRead: [ArchiveName: Generation] = [:]
        for archive in (try? store.archives()) ?? [] {
            guard let saved = expected.generations[archive.name] else {
                return ("silent: archive '\(archive.name)' was never saved", false)
            }
            var generations = archive.generations.map(\.generation)
            if let newest = try? store.snapshot(of: archive.name) {
                guard saved[newest.header.generation] == newest else {
                    return (
                        "silent: the newest snapshot of '\(archive.name)' (generation \(newest.header.generation)) "
                            + "is not what was saved as it", false
                    )
                }
                newestRead[archive.name] = newest.header.generation
                generations.removeAll { $0 == newest.header.generation }
            }
            for generation in generations {
                guard let snapshot = try? store.snapshot(of: archive.name, generation: generation) else { continue }
                if saved[generation] != snapshot {
                    return ("silent: '\(archive.name)' generation \(generation) is not what was saved as it", false)
                }
            }
        }
        _ = try? store.check()
        _ = try? store.journal()
        _ = try? store.crashMarkers()
        let earlier = expected.newest.contains { name, snapshot in newestRead[name] != snapshot?.header.generation }
        return (nil, earlier)
    }
}
