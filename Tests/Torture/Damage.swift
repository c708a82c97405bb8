import Foundation
import RestorationArchive
import TestSupport

/// 7. Damage: random bytes flipped, zeroed or cut off at random offsets of real stores. No
/// crash, no hang, no silent change: every read returns exactly what was saved, or a typed
/// error. Then the app must be able to go on: save again and restore, or else erase the
/// store and start afresh.
///
/// The trials run in batches in child processes (`damage-batch`), so a crash or a hang is
/// counted against the trial it happened in and the run goes on with the next one.
enum Damage {
    static let batch = 250

    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        try runBatches(
            Scenario("damage"), trials: scale.trials(quick: 2_000, full: 20_000), child: ["damage-batch"],
            makeStores: makeStores(in:random:), random: &random)
    }

    /// 7b. Header damage: the same trials as `damage`, with damage chosen rather than drawn:
    /// each byte of the first ``headerBytes`` of each of the three stores (SQLite's file
    /// header, which says how to read everything else, and the first page's b-tree header)
    /// xored with each of ``headerMasks`` in turn (the first three in a quick run). Random
    /// damage lands there about once in a thousand trials.
    static func runHeader(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let masks = scale == .quick ? 3 : headerMasks.count
        return try runBatches(
            Scenario("header-damage"), trials: headerBytes * 3 * masks, child: ["damage-batch"], arguments: ["header"],
            makeStores: makeStores(in:random:), random: &random)
    }

    /// The bytes `header-damage` damages: SQLite's 100-byte file header, and the b-tree page
    /// header of the first page (`sqlite_schema`'s root) after it.
    static let headerBytes = 112

    /// What `header-damage` xors each byte with: all its bits, then each bit alone.
    static let headerMasks: [UInt8] = [0xFF, 0x01, 0x80, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40]

    /// Trial `index` of `header-damage`: which store, which byte and which mask.
    static func headerDamage(index: Int) -> (store: Int, offset: Int, mask: UInt8) {
        let round = index / headerBytes
        return (round % 3, index % headerBytes, headerMasks[round / 3 % headerMasks.count])
    }

    /// 7c. Crash-marker damage: the trials of `damage` on two stores whose restorations died,
    /// with damage chosen rather than drawn: each byte of the crash marker table's page header
    /// and first two cell pointers, and of the last ``markerTailBytes`` bytes of its page,
    /// where the markers' rows lie, xored with each of ``headerMasks`` in turn (the first
    /// three in a quick run). The stores: the demo app's after a saving launch and one killed
    /// with SIGKILL while restoring (one archive); and one of three archives, two of whose
    /// restorations a process killed itself in (`torture child die-restoring`), so that a
    /// marker's key may turn into another archive's id. Random damage lands in a marker's row
    /// about once in a few hundred trials of a store this small, and `damage`'s stores have no
    /// marker.
    ///
    /// Besides what `damage` asks, the launch after the damage must not restore an archive
    /// whose restoration died (R11), in a file SQLite finds sound: a marker damage changed,
    /// moved to another key, or left unreadable is a restoration that died. (In a file SQLite
    /// finds malformed, a marker's row may be gone whole, which nothing can tell.)
    static func runMarker(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let masks = scale == .quick ? 3 : headerMasks.count
        return try runBatches(
            Scenario("marker-damage"), trials: 2 * markerBytes * masks, child: ["damage-batch"], arguments: ["marker"],
            makeStores: makeMarkerStores(in:random:), random: &random)
    }

    /// The bytes at the start of the marker table's page that `marker-damage` damages: a leaf
    /// table page's header (8) and its first two cell pointers (4).
    static let markerHeaderBytes = 12
    /// The bytes at the end of the marker table's page that `marker-damage` damages: its rows
    /// (about 70 bytes each) and free space before them.
    static let markerTailBytes = 160
    static let markerBytes = markerHeaderBytes + markerTailBytes

    /// Trial `index` of `marker-damage`: which store, which byte of its marker table's page,
    /// and the mask.
    static func markerDamage(index: Int, pageSize: Int) -> (store: Int, offset: Int, mask: UInt8) {
        let byte = index / 2 % markerBytes
        let offset = byte < markerHeaderBytes ? byte : pageSize - markerTailBytes + (byte - markerHeaderBytes)
        return (index % 2, offset, headerMasks[index / (2 * markerBytes) % headerMasks.count])
    }

    /// 7d. Journal damage: the trials of `damage` on the demo app's store after a saving launch
    /// and one that died on screen (killed with SIGKILL in the foreground, `demo --step
    /// foreground-crash`), with one bit flipped in the lifecycle journal's page or in its
    /// index of launches' (`journal_by_launch`), each a single leaf page: a bit of the page's
    /// header, cell pointers or cells, drawn by the trial's seed, half the trials in each
    /// page. The launches of `damage`'s stores all end in the background: none of its trials
    /// asks what a damaged record of a launch that died on screen does.
    ///
    /// Besides what `damage` asks, the launch after the damage, under
    /// ``CrashPolicy/discardAfterForegroundDeath``, must not restore the state the launch
    /// that died on screen left (R15), however the damage left the file: a journal whose
    /// record of the previous launch damage changed, hid or left unreadable is a launch that
    /// may have died on screen. Before 868a250, an index that lost its last entries hid the
    /// launch that died, and its state was restored.
    static func runJournal(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        try runBatches(
            Scenario("journal-damage"), trials: scale.trials(quick: 600, full: 6_000), child: ["damage-batch"],
            arguments: ["journal"], makeStores: makeJournalStore(in:random:), random: &random)
    }

    /// Where in `bytes` trial `index` of `journal-damage` flips a bit, and the trial's kind:
    /// a bit of the used part of the journal's page or of its index's (`pages`: where each
    /// starts, and the page size), drawn by `random`.
    static func journalDamage(
        index: Int, pages: [(name: String, start: Int)], pageSize: Int, bytes: [UInt8], using random: inout SeededGenerator
    ) -> (offset: Int, mask: UInt8, kind: String) {
        let page = pages[index % pages.count]
        // The page's header (8 bytes) and cell pointers, then its cells.
        let cells = Int(bytes[page.start + 3]) << 8 | Int(bytes[page.start + 4])
        let stored = Int(bytes[page.start + 5]) << 8 | Int(bytes[page.start + 6])
        let content = stored == 0 ? 65_536 : stored
        let used = 8 + 2 * cells + max(0, pageSize - content)
        var byte = Int.random(in: 0..<used, using: &random)
        if byte >= 8 + 2 * cells { byte = content + (byte - 8 - 2 * cells) }
        let bit = Int.random(in: 0..<8, using: &random)
        return (page.start + byte, UInt8(1) << bit, "\(page.name) page byte \(byte) bit \(bit)")
    }

    /// The store of `journal-damage`: the demo app's after a saving launch and one that died
    /// on screen, its journal and index of launches each on a single leaf page of the file.
    static func makeJournalStore(in directory: String, random: inout SeededGenerator) throws {
        let path = directory + "/store-0.sqlite"
        for step in ["save", "foreground-crash"] {
            _ = try Child.run(Child.restorectl, ["demo", "--step", step, "--db", path], timeout: 30)
        }
        // Opened and released: the log is copied into the file.
        _ = try ArchiveStore(path: path).footprint()
        let previous = try ArchiveStore(path: path, mode: .readOnly).previousLaunch()
        guard let previous, previous.ending == .inForeground, !previous.processIsRunning else {
            throw SetUpError.noDeathOnScreen("\(String(describing: previous))")
        }
        _ = try journalPages(of: path)
    }

    /// The journal's page and its index of launches' in the store at `path`, each where it
    /// starts in the file, and the page size; each must be a single leaf page.
    static func journalPages(of path: String) throws -> (pages: [(name: String, start: Int)], size: Int) {
        guard let size = Files.firstValue(of: "PRAGMA page_size", in: path).flatMap(Int.init),
            let bytes = fileBytes(path)
        else { throw SetUpError.noJournalPage }
        let pages = try [("journal", 0x0D), ("journal_by_launch", 0x0A)].map { name, leaf in
            let sql = "SELECT rootpage FROM sqlite_schema WHERE name = '\(name)'"
            guard let root = Files.firstValue(of: sql, in: path).flatMap(Int.init), root > 1, root * size <= bytes.count,
                bytes[(root - 1) * size] == leaf
            else { throw SetUpError.noJournalPage }
            return (name: name, start: (root - 1) * size)
        }
        return (pages, size)
    }

    /// The stores of `marker-damage`, their crash markers in the files themselves (not only in
    /// the logs): the demo app's after a saving launch and a launch killed while restoring;
    /// and one of three archives (`main`, `scene-2`, `scene-3`), the first two's restorations
    /// died.
    static func makeMarkerStores(in directory: String, random: inout SeededGenerator) throws {
        let demo = directory + "/store-0.sqlite"
        for step in ["save", "restore-crash"] {
            _ = try Child.run(Child.restorectl, ["demo", "--step", step, "--db", demo], timeout: 30)
        }
        let scenes = directory + "/store-1.sqlite"
        do {
            let store = try ArchiveStore(path: scenes)
            let engine = try RestorationEngine(store: store, app: app, registry: RestorationRegistry())
            for name in ["main", "scene-2", "scene-3"] {
                try engine.preserve([DiesRestoring("Root", name)], in: try ArchiveName(name))
            }
        }
        for name in ["main", "scene-2"] {
            let died = try Child.run(Child.torture, ["child", "die-restoring", scenes, name], timeout: 30)
            guard died.signalled, died.status == SIGKILL else { throw SetUpError.noDeadRestoration("\(died)") }
        }
        for (path, count) in [(demo, 1), (scenes, 2)] {
            // Opened and released: the log is copied into the file.
            _ = try ArchiveStore(path: path).footprint()
            let copy = directory + "/marker-check.sqlite"
            try Files.write(fileBytes(path) ?? [], to: copy)
            defer { for file in Files.storeFiles(copy) { Files.remove(file) } }
            let markers = try ArchiveStore(path: copy, mode: .readOnly).crashMarkers()
            guard markers.count == count, markers.allSatisfy({ !$0.processIsRunning && !$0.isDamaged }) else {
                throw SetUpError.noDeadRestoration("\(markers)")
            }
        }
    }

    /// The child that dies restoring: `torture child die-restoring PATH ARCHIVE` restores the
    /// archive of the store at PATH, and kills itself with SIGKILL as its root decodes.
    static func dieRestoring(_ arguments: [String]) throws {
        guard arguments.count == 2 else { throw ChildError.usage }
        let store = try ArchiveStore(path: arguments[0])
        let engine = try RestorationEngine(store: store, app: app, registry: RestorationRegistry())
        let root = DiesRestoring("Root", arguments[1])
        root.killsOnDecode = true
        _ = try engine.restore([root], from: try ArchiveName(arguments[1]))
        throw SetUpError.noDeadRestoration("the restoration of '\(arguments[1])' did not decode its root")
    }

    /// A screen whose decoding kills its process, when told to.
    final class DiesRestoring: Restorable {
        static var restorationClassName: String { "DiesRestoring" }
        let restorationIdentifier: String?
        let archive: String
        var killsOnDecode = false

        init(_ identifier: String, _ archive: String) {
            restorationIdentifier = identifier
            self.archive = archive
        }

        func encodeRestorableState(with coder: StateEncoder) throws {
            try coder.encode(archive, forKey: "archive")
        }

        func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
            if killsOnDecode { kill(getpid(), SIGKILL) }
        }
    }

    /// The app the damage scenarios' launches are: the version the demo app's headers name.
    static let app = AppIdentity(version: "11.0", build: "1024", platform: "linux", idiom: "phone")

    /// Why `marker-damage`'s stores could not be made or read.
    enum SetUpError: Error {
        /// A store holds no marker of a restoration that died but these, or the child meant to
        /// die restoring did not (how it ended).
        case noDeadRestoration(String)
        /// The marker table's page is not named in the store's schema.
        case noMarkerPage
        /// The store's previous launch did not die on screen, as the child meant it to (what
        /// the store says of it).
        case noDeathOnScreen(String)
        /// The journal or its index of launches is not a single leaf page of the store.
        case noJournalPage
    }

    /// Runs `total` trials in batches of ``batch``, each batch in a child process (`torture
    /// child MODE DIRECTORY SEED FIRST COUNT ARGUMENTS...`, `child` naming the mode) that
    /// announces `INDEX ok KIND` or `INDEX PROBLEM` for each trial, on the stores
    /// `makeStores` made in a temporary directory. A batch's process dying or hanging fails
    /// the trial it was in, and the run goes on with the next one. The remark tallies the
    /// kinds of the trials that passed.
    static func runBatches(
        _ scenario: Scenario, trials total: Int, child mode: [String], arguments: [String] = [],
        makeStores: (String, inout SeededGenerator) throws -> Void, random: inout SeededGenerator
    ) throws -> Scenario {
        var tally: [String: Int] = [:]
        try withTemporaryDirectory { directory in
            try makeStores(directory, &random)
            let seed = random.next()
            var next = 0
            while next < total {
                let count = min(batch, total - next)
                let child = try Child(
                    Child.torture, ["child"] + mode + [directory, String(seed), String(next), String(count)] + arguments)
                var reported = next
                while reported < next + count, let line = child.nextLine(timeout: 120) {
                    let words = line.split(separator: " ", maxSplits: 2).map(String.init)
                    guard words.count >= 2, let index = Int(words[0]) else { continue }
                    reported = index + 1
                    scenario.trial("trial \(index) (\(words.count > 2 ? words[2] : ""))") { trial in
                        if words[1] != "ok" { trial.fail(words[1]) }
                    }
                    if words[1] == "ok", words.count > 2 { tally[words[2], default: 0] += 1 }
                }
                let ending = child.wait(timeout: 5)
                if reported < next + count {
                    // The trial in progress crashed or hung.
                    scenario.trial("trial \(reported)") { trial in
                        trial.fail(ending.timedOut ? "hung" : "the reading process died (signal \(ending.status))")
                    }
                    reported += 1
                }
                next = reported
            }
        }
        scenario.remark(tally.listed { name, count in "\(count) \(name)" })
        return scenario
    }

    /// Three real stores: one archive; several archives with a journal of more than a page,
    /// reports and a discarded one; a larger archive with four retained generations.
    static func makeStores(in directory: String, random: inout SeededGenerator) throws {
        do {
            let store = try ArchiveStore(path: directory + "/store-0.sqlite")
            var tree = try Content.tree(count: 60, using: &random)
            let first = try store.save(tree, header: Content.header)
            let change = try Content.change(tree, using: &random)
            tree = change.tree
            try store.saveChanges(change.changed, removing: change.removed, basedOn: first.generation, header: Content.header)
        }
        do {
            let store = try ArchiveStore(path: directory + "/store-1.sqlite")
            try store.record(.willFinishLaunching)
            for name in ["main", "scene-2", "scene-3"] {
                let archive = try ArchiveName(name)
                for _ in 0..<3 {
                    try store.save(try Content.tree(count: 30, using: &random), header: Content.header, in: archive)
                }
            }
            try store.discard(try ArchiveName("scene-3"), reason: "the scene was closed")
            try store.record(.didEnterBackground)
            // A journal of more than a page: trips to the foreground and back, and discards.
            for trip in 0..<16 {
                for event in [LifecycleEvent.willEnterForeground, .didBecomeActive, .willResignActive, .didEnterBackground] {
                    try store.record(event)
                }
                if trip.isMultiple(of: 4) {
                    let scene = try ArchiveName("scene-\(4 + trip)")
                    try store.save(try Content.tree(count: 3, using: &random), header: Content.header, in: scene)
                    try store.discard(scene, reason: "closed at trip \(trip)")
                }
            }
        }
        do {
            let store = try ArchiveStore(path: directory + "/store-2.sqlite", configuration: .init(retainedGenerations: 4))
            var tree = try Content.tree(count: 300, using: &random)
            var generation = try store.save(tree, header: Content.header).generation
            for _ in 0..<4 {
                let change = try Content.change(tree, using: &random)
                tree = change.tree
                generation = try store.saveChanges(
                    change.changed, removing: change.removed, basedOn: generation, header: Content.header
                ).generation
            }
        }
    }

    /// What a store held before the damage: per archive, its newest snapshot and every
    /// retained generation's; and its journal's entries, by sequence.
    struct Expected {
        var newest: [ArchiveName: ArchiveSnapshot?] = [:]
        var generations: [ArchiveName: [Generation: ArchiveSnapshot]] = [:]
        var journal: [Int64: JournalEntry] = [:]
        /// The archives whose restoration died (a crash marker whose process is gone).
        var died: [ArchiveName] = []

        init(path: String) throws {
            let store = try ArchiveStore(path: path, mode: .readOnly)
            for entry in try store.journal() { journal[entry.sequence] = entry }
            died = try store.crashMarkers().filter { !$0.processIsRunning }.map(\.archive)
            for archive in try store.archives() {
                newest[archive.name] = try store.snapshot(of: archive.name)
                for summary in archive.generations {
                    generations[archive.name, default: [:]][summary.generation] =
                        try store.snapshot(of: archive.name, generation: summary.generation)
                }
            }
        }
    }

    /// The child: runs trials `first..<first + count`, announcing `INDEX ok KIND` or
    /// `INDEX PROBLEM` for each; with a fifth argument `header`, the trials of `header-damage`,
    /// with `schema`, those of `schema-tampering`, with `marker`, those of `marker-damage`,
    /// with `journal`, those of `journal-damage`.
    static func batch(_ arguments: [String]) throws {
        guard (4...5).contains(arguments.count), let seed = UInt64(arguments[1]), let first = Int(arguments[2]),
            let count = Int(arguments[3])
        else { throw ChildError.usage }
        let variant = arguments.count == 5 ? arguments[4] : nil
        guard variant == nil || ["header", "schema", "marker", "journal"].contains(variant) else { throw ChildError.usage }
        let header = variant == "header"
        let schema = variant == "schema"
        let marker = variant == "marker"
        let journal = variant == "journal"
        let directory = arguments[0]
        let originals = try (0..<(marker ? 2 : journal ? 1 : 3)).map { index in
            let path = "\(directory)/store-\(index).sqlite"
            return (bytes: fileBytes(path) ?? [], expected: try Expected(path: path))
        }
        // Where each store's marker table's page starts in its file, and how long a page is.
        let markerPages: [(start: Int, size: Int)] = try (marker ? 0..<2 : 0..<0).map { index in
            let path = "\(directory)/store-\(index).sqlite"
            guard let root = Files.firstValue(of: markerRoot, in: path).flatMap(Int.init),
                let size = Files.firstValue(of: "PRAGMA page_size", in: path).flatMap(Int.init)
            else { throw SetUpError.noMarkerPage }
            return ((root - 1) * size, size)
        }
        let journalPages = journal ? try Self.journalPages(of: "\(directory)/store-0.sqlite") : nil
        let path = "\(directory)/damaged-\(getpid()).sqlite"
        defer { for file in Files.storeFiles(path) { Files.remove(file) } }
        for index in first..<(first + count) {
            var random = SeededGenerator(seed: seed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
            let original: (bytes: [UInt8], expected: Expected)
            var bytes: [UInt8]
            var kind: String
            if schema {
                original = originals[index % originals.count]
                (bytes, kind) = (original.bytes, "")
            } else if header {
                let (store, offset, mask) = headerDamage(index: index)
                original = originals[store]
                bytes = original.bytes
                bytes[offset] ^= mask
                kind = "header byte \(offset) ^ \(mask)"
            } else if marker {
                let (store, offset, mask) = markerDamage(index: index, pageSize: markerPages[0].size)
                original = originals[store]
                bytes = original.bytes
                bytes[markerPages[store].start + offset] ^= mask
                kind = "store \(store) marker page byte \(offset) ^ \(mask)"
            } else if let journalPages {
                original = originals[0]
                bytes = original.bytes
                let (offset, mask, damage) = journalDamage(
                    index: index, pages: journalPages.pages, pageSize: journalPages.size, bytes: bytes, using: &random)
                bytes[offset] ^= mask
                kind = damage
            } else {
                original = originals[index % originals.count]
                (bytes, kind) = damage(original.bytes, using: &random)
            }
            for file in Files.storeFiles(path) { Files.remove(file) }
            try Files.write(bytes, to: path)
            if schema { kind = SchemaTampering.tamper(path, using: &random) }
            if ProcessInfo.processInfo.environment["TORTURE_KEEP"] == String(index) {
                try Files.write(fileBytes(path) ?? bytes, to: NSTemporaryDirectory() + "/damaged-\(index).sqlite")
            }
            let passesQuickCheck = check(path, "quick_check")
            let mode: ArchiveStore.AccessMode = Bool.random(using: &random) ? .readOnly : .readWrite
            var problem = read(path, mode: mode, expecting: original.expected)
            if problem == nil, !original.expected.died.isEmpty {
                let expected = original.expected
                problem = judge(
                    path, mode: mode, died: expected.died,
                    alive: expected.newest.keys.filter { !expected.died.contains($0) }.sorted { $0.rawValue < $1.rawValue },
                    fileIsSound: passesQuickCheck && check(path, "integrity_check"))
            }
            if problem == nil, journal {
                problem = judgeDeathOnScreen(path, mode: mode)
            }
            var note = ""
            if problem == nil {
                (problem, note) = goOn(path, expecting: original.expected, saving: mode == .readWrite, passesQuickCheck: passesQuickCheck)
            }
            let outcome =
                switch (problem, passesQuickCheck) {
                case (.some(let problem), _): "\(problem) [\(kind), \(mode), quick_check \(passesQuickCheck ? "passed" : "failed")]"
                // The tally of header damage counts outcomes, not bytes.
                case (nil, true): "ok \(header ? "header" : marker ? "marker" : journal ? "journal" : kind)\(note),quick_check-passed"
                case (nil, false): "ok \(header ? "header" : marker ? "marker" : journal ? "journal" : kind)\(note)"
                }
            announce("\(index) \(outcome)")
        }
    }

    /// Damages a copy of `bytes`: flips 1 to 8 bytes, zeroes a run of up to 4 KiB, or cuts the
    /// file short.
    private static func damage(_ original: [UInt8], using random: inout SeededGenerator) -> ([UInt8], String) {
        var bytes = original
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            }
            return (bytes, "flipped")
        case 1:
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let end = min(bytes.count, start + Int.random(in: 1...4096, using: &random))
            for offset in start..<end { bytes[offset] = 0 }
            return (bytes, "zeroed")
        default:
            // At least a byte: an empty file is what a launch killed right after creating its
            // store leaves, and opens as a new store (see not-a-store).
            let length = Int.random(in: 1..<bytes.count, using: &random)
            let aligned = length / 4096 * 4096
            return (Array(bytes[..<(aligned > 0 && Bool.random(using: &random) ? aligned : length)]), "truncated")
        }
    }

    /// Reads everything the store held through the library. Returns a description of the
    /// first read that returned something other than what was saved; typed errors are fine.
    private static func read(_ path: String, mode: ArchiveStore.AccessMode, expecting expected: Expected) -> String? {
        let store: ArchiveStore
        do {
            store = try ArchiveStore(path: path, mode: mode)
        } catch {
            return nil
        }
        for (name, newest) in expected.newest {
            do {
                let snapshot = try store.snapshot(of: name)
                if snapshot != newest {
                    return "silent: the newest snapshot of '\(name)' is generation "
                        + "\(snapshot.map { "\($0.header.generation)" } ?? "none"), "
                        + "\(snapshot?.nodes.count ?? 0) nodes; saved: generation "
                        + "\(newest.map { "\($0.header.generation)" } ?? "none"), \(newest?.nodes.count ?? 0) nodes"
                        + (snapshot?.header != newest?.header ? " (header differs)" : "")
                        + "; archives: \((try? store.archives())?.map { "\($0.name) \($0.latestGeneration) \($0.state) \($0.generations.map(\.generation))" } ?? [])"
                }
            } catch {}
            for (generation, saved) in expected.generations[name] ?? [:] {
                do {
                    let snapshot = try store.snapshot(of: name, generation: generation)
                    if snapshot != saved { return "silent: '\(name)' generation \(generation) differs" }
                } catch {}
            }
        }
        // Each journal entry read is one that was written, as it was (schema v0012's
        // checksums): an entry damage changed read back as another entry, and the previous
        // launch's last event decides under `discardAfterForegroundDeath`. (An entry whose row
        // damage took away whole is not read at all, which no checksum of its own can tell.)
        if let journal = try? store.journal() {
            for entry in journal where expected.journal[entry.sequence] != entry {
                return "silent: journal entry \(entry.sequence) reads \(entry); saved: "
                    + (expected.journal[entry.sequence].map { "\($0)" } ?? "no entry of that sequence")
            }
        }
        _ = try? store.check()
        _ = try? store.crashMarkers()
        return nil
    }

    /// The marker table's root page, as `sqlite_schema` names it.
    private static let markerRoot = "SELECT rootpage FROM sqlite_schema WHERE name = 'crash_marker'"

    /// R11 under damage: the launch after it restores none of the archives in `died`, whose
    /// restorations died (the store's policy is `discard`: an archive has nothing else to
    /// restore), and restores each of the others (`alive`): damage to a marker does not make
    /// another archive's restoration a death (a marker moved under an archive's id is still
    /// its own archive's). In a file SQLite finds sound; a typed error is fine.
    private static func judge(
        _ path: String, mode: ArchiveStore.AccessMode, died: [ArchiveName], alive: [ArchiveName], fileIsSound: Bool
    ) -> String? {
        guard fileIsSound, let store = try? ArchiveStore(path: path, mode: mode) else { return nil }
        for (archive, outcome) in zip(died + alive, launch(store, died + alive).outcomes) {
            let restored = if case .success(.restored) = outcome { true } else { false }
            if died.contains(archive), restored { return "restored: the launch restored '\(archive)', whose restoration died" }
            if alive.contains(archive), !restored {
                return "withheld: the launch did not restore '\(archive)', whose restoration never began: \(outcome)"
            }
        }
        return nil
    }

    /// R15 under damage: the launch after it, under ``CrashPolicy/discardAfterForegroundDeath``,
    /// does not restore `main`, which the launch that died on screen had restored (the policy
    /// invalidates it), however the damage left the file: a typed error is fine.
    private static func judgeDeathOnScreen(_ path: String, mode: ArchiveStore.AccessMode) -> String? {
        let configuration = ArchiveStore.Configuration(crashPolicy: .discardAfterForegroundDeath)
        guard let store = try? ArchiveStore(path: path, mode: mode, configuration: configuration) else { return nil }
        guard case .success(.restored) = launch(store, [.main]).outcomes.first else { return nil }
        let previous = Result { () throws(ArchiveStoreError) in try store.previousLaunch() }
        return "restored: the launch restored 'main', which the launch that died on screen left (previous launch: \(previous))"
    }

    /// What the app does once it has read a damaged store: saves each archive again (when it
    /// opened the store to write it), else erases the store and starts afresh. `problem`: what
    /// went wrong, if anything; `note`: `,saved-again`, or the erase's note.
    static func goOn(_ path: String, expecting expected: Expected, saving: Bool, passesQuickCheck: Bool)
        -> (problem: String?, note: String)
    {
        if saving {
            // Sound as `integrity_check` says: `quick_check` passes a b-tree whose keys are
            // out of order, which makes later writes and reads land wrong.
            let recovery = recover(path, expecting: expected, fileIsSound: passesQuickCheck && check(path, "integrity_check"))
            if recovery.problem != nil || recovery.saved { return (recovery.problem, recovery.saved ? ",saved-again" : "") }
        }
        guard let nodes = expected.newest.values.compactMap({ $0?.nodes }).first else { return (nil, "") }
        return eraseAndStartAfresh(path, saving: nodes)
    }

    /// What an app does next with a store it can write: it saves each archive in full again.
    /// In a file SQLite finds sound (`integrity_check`), damage to the rows the store checks (an
    /// archive row or a generation against its checksum, a value out of range) must not stop
    /// that, or the app could never save again, and the save must read back exactly; damage to
    /// the file itself that `integrity_check` does not look at (the schema's text, say) may
    /// stop it with `damagedStore`, the error an app answers by starting a new store. In a
    /// file SQLite finds malformed, a save or its reading back may fail with any typed error (a
    /// b-tree SQLite cannot trust may give back other bytes than were written: the checksums
    /// catch them), but never read back other content silently. `saved`: every archive was
    /// saved again and read back.
    ///
    /// It does so as a launch does: it records the launch in the journal and restores each
    /// archive first (under `discardAfterForegroundDeath`, the policy that reads the journal),
    /// whatever that gives, then saves and goes to the background. When every archive was
    /// saved again, the next launch must restore each one: damage that made the first launch's
    /// restoration fail must not make every later one fail too (a damaged restore report once
    /// left each restoration's marker behind, and the next launch took it for a crash).
    private static func recover(_ path: String, expecting expected: Expected, fileIsSound: Bool)
        -> (problem: String?, saved: Bool)
    {
        let configuration = ArchiveStore.Configuration(crashPolicy: .discardAfterForegroundDeath)
        guard let store = try? ArchiveStore(path: path, configuration: configuration) else { return (nil, false) }
        let archives = expected.newest.sorted { $0.key.rawValue < $1.key.rawValue }
            .compactMap { name, newest in newest.map { (name, $0.nodes) } }
        var fileDamage = launch(store, archives.map(\.0)).fileDamage
        var saved = true
        for (name, nodes) in archives {
            do {
                try store.save(nodes, header: Content.header, in: name)
                guard try store.snapshot(of: name)?.nodes == nodes else {
                    return ("silent: '\(name)' read back other nodes after a full save", false)
                }
            } catch {
                if fileIsSound, case .damagedStore = error {} else if fileIsSound {
                    return ("locked out: a full save of '\(name)' failed: \(error)", false)
                }
                saved = false
            }
        }
        fileDamage = isFileDamage { () throws(ArchiveStoreError) in _ = try store.record(.didEnterBackground) } || fileDamage
        guard saved else { return (nil, false) }
        guard let next = try? ArchiveStore(path: path, configuration: configuration) else {
            return fileIsSound ? ("the store saved again does not open", false) : (nil, false)
        }
        let second = launch(next, archives.map(\.0))
        fileDamage = fileDamage || second.fileDamage
        for (name, outcome) in zip(archives.map(\.0), second.outcomes) where outcome != .success(.restored) {
            // Damage to the file itself (`damagedStore`: the schema's text, say) may stop it;
            // so may a journal that could not record the launches (the policy then takes the
            // first for a death in the foreground).
            let failedOnFile =
                switch outcome {
                case .success(.failed(let reason)): reason.hasPrefix("The store is damaged:")
                case .failure(.store(.damagedStore)): true
                default: false
                }
            if fileIsSound && !failedOnFile && !fileDamage {
                return ("locked out: the launch after saving '\(name)' again did not restore it: \(outcome)", false)
            }
            saved = false
        }
        return (nil, saved)
    }

    /// What an app does with a store it could not use again: it erases it and starts afresh.
    /// The erase must succeed whatever the damage left, and the new store must save and read
    /// back, and be sound. Only a file whose `application_id` the damage changed may be
    /// refused as another program's database (when its schema does not show the store's
    /// tables either). `note`: `,erased`, or `,refused-as-foreign`.
    private static func eraseAndStartAfresh(_ path: String, saving nodes: [ArchivedNode]) -> (problem: String?, note: String) {
        do {
            try ArchiveStore.erase(at: path, busyTimeout: .seconds(2))
        } catch {
            if case .notAStore(_, let reason) = error, reason.hasPrefix("it is an SQLite database of another program"),
                fileBytes(path).map({ $0.count >= 72 && Array($0[68..<72]) != Array("RSTR".utf8) }) == true
            {
                return (nil, ",refused-as-foreign")
            }
            return ("the erase failed: \(error)", "")
        }
        do {
            let store = try ArchiveStore(path: path)
            guard try store.archiveNames().isEmpty else { return ("the erased store still holds archives", "") }
            try store.save(nodes, header: Content.header)
            guard try store.snapshot()?.nodes == nodes else { return ("the erased store read back other nodes", "") }
        } catch {
            return ("the erased store failed: \(error)", "")
        }
        guard check(path, "integrity_check") else { return ("the erased store fails integrity_check", "") }
        return (nil, ",erased")
    }

    /// A launch: recorded in the journal, then each archive restored (no restoration class
    /// is registered: each node is skipped, and the report says so), each outcome returned.
    /// `fileDamage`: the journal refused the launch with `damagedStore`.
    private static func launch(_ store: ArchiveStore, _ archives: [ArchiveName])
        -> (outcomes: [Result<RestoreReport.Outcome, RestorationError>], fileDamage: Bool)
    {
        let fileDamage = isFileDamage { () throws(ArchiveStoreError) in _ = try store.record(.willFinishLaunching) }
        let engine: RestorationEngine
        do {
            engine = try RestorationEngine(store: store, app: app, registry: RestorationRegistry())
        } catch {
            return (archives.map { _ in .failure(error) }, fileDamage)
        }
        return (archives.map { name in Result { () throws(RestorationError) in try engine.restore([], from: name).report.outcome } }, fileDamage)
    }

    /// Runs `body`; whether it threw `damagedStore` (other errors are ignored).
    private static func isFileDamage(_ body: () throws(ArchiveStoreError) -> Void) -> Bool {
        do {
            try body()
            return false
        } catch {
            if case .damagedStore = error { return true }
            return false
        }
    }

    /// Whether SQLite's `PRAGMA quick_check` or `PRAGMA integrity_check` finds nothing wrong.
    static func check(_ path: String, _ pragma: String) -> Bool {
        Files.firstValue(of: "PRAGMA \(pragma)", in: path) == "ok"
    }
}
