import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

/// The store's scene archives (R13, R14) against a model of them, over random sequences of what
/// apps do to them through two `ArchiveStore`s on one file: full and incremental saves (some on
/// a stale base, some to an archive that holds nothing), discards of one archive or of all, two
/// erases, and reopening with another retention. After each step the store must
/// hold what the model says: which archives it still knows (it forgets discarded archives
/// beyond the newest ``ArchiveStore/retainedDiscardedArchives``, and a save under a forgotten
/// name starts again at generation 1), each touched archive's newest generation number, whether
/// it is discarded, and its retained generations with their nodes; and every tenth step
/// `check()` finds nothing. (A throw-away version of this model, run at length in an earlier
/// stop, found no difference; this one keeps watch, 4,500 steps in about 4 seconds.)
@Suite("Scene archives against a model")
struct StoreModelTests {
    /// One archive as the store should hold it.
    struct Archive {
        /// The archive row's id, as SQLite gives it: one more than the largest in the table.
        var id: Int64
        /// The newest generation ever saved: a discard keeps it, a forgotten archive starts over.
        var generation: Generation = 0
        var retained: [Generation: [RestorationPath: ArchivedNode]] = [:]
        /// When it was discarded (read from the store, to the millisecond), or `nil` while it
        /// holds state.
        var discardedAt: Date?
    }

    /// The archives the store knows, by name.
    struct Model {
        var archives: [ArchiveName: Archive] = [:]

        mutating func saved(_ nodes: [RestorationPath: ArchivedNode], in name: ArchiveName, retaining count: Int) -> Generation {
            var archive = archives[name] ?? Archive(id: (archives.values.map(\.id).max() ?? 0) + 1)
            archive.generation = archive.generation.next
            archive.retained[archive.generation] = nodes
            archive.retained = archive.retained.filter { $0.key.rawValue > archive.generation.rawValue - Int64(count) }
            archive.discardedAt = nil
            archives[name] = archive
            return archive.generation
        }

        /// After a discard: the discarded archives beyond the newest kept are forgotten, those
        /// `justDiscarded` first, then by when they were discarded and by row.
        /// Returns how many it forgot.
        mutating func forgetDiscardedLongAgo(keeping justDiscarded: Set<ArchiveName>) -> Int {
            let forgotten = archives.filter { $0.value.discardedAt != nil }
                .sorted { first, second in
                    let (firstIsNew, secondIsNew) = (justDiscarded.contains(first.key), justDiscarded.contains(second.key))
                    if firstIsNew != secondIsNew { return firstIsNew }
                    return (first.value.discardedAt!, first.value.id) > (second.value.discardedAt!, second.value.id)
                }
                .dropFirst(ArchiveStore.retainedDiscardedArchives)
            for (name, _) in forgotten { archives[name] = nil }
            return forgotten.count
        }
    }

    /// A state the keyed coder wrote (`check()` decodes every state).
    static func state(_ value: Int) throws -> [UInt8] {
        let coder = StateEncoder()
        try coder.encode(value, forKey: "value")
        return try coder.encodedBlob()
    }

    /// A tree of 1 to 6 nodes, each state its own value.
    static func tree(_ random: inout SeededGenerator) throws -> [RestorationPath: ArchivedNode] {
        let nodes = try SampleArchives.tree(count: Int.random(in: 1...6, using: &random)).map { node in
            var node = node
            node.state = try state(Int.random(in: 0...1_000_000, using: &random))
            return node
        }
        return Dictionary(uniqueKeysWithValues: nodes.map { ($0.path, $0) })
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func scenesFollowTheModel(seed: UInt64) throws {
        try withTemporaryStorePath { path in
            var random = SeededGenerator(seed: seed)
            // 40 names for 32 remembered discarded archives: some are forgotten.
            let names = try (0..<40).map { try ArchiveName("window-\($0)") }
            var stores: [(store: ArchiveStore, retained: Int)] = try [1, 2].map { retained in
                (try ArchiveStore(path: path, configuration: .init(retainedGenerations: retained)), retained)
            }
            var model = Model()
            var counts: [String: Int] = [:]
            for step in 0..<1500 {
                let which = Int.random(in: 0...1, using: &random)
                let (store, retained) = stores[which]
                // Twice a run the app erases its store, which both stores go on with.
                let operation = step % 500 == 499 ? -1 : Int.random(in: 0..<100, using: &random)
                // Changes go mostly to an archive that holds state, sometimes to any name.
                let liveNames = names.filter { model.archives[$0].map { $0.discardedAt == nil } ?? false }
                let name =
                    (35..<65).contains(operation) && !liveNames.isEmpty && Int.random(in: 0..<5, using: &random) > 0
                    ? liveNames.randomElement(using: &random)! : names.randomElement(using: &random)!
                var touched: Set<ArchiveName> = [name]
                let live = model.archives[name].flatMap { $0.discardedAt == nil ? $0 : nil }
                switch operation {
                case 0..<35:
                    let nodes = try Self.tree(&random)
                    let result = try store.save(Array(nodes.values), header: SampleArchives.header, in: name)
                    #expect(result.generation == model.saved(nodes, in: name, retaining: retained), "step \(step)")
                    counts["full", default: 0] += 1
                case 35..<65:
                    guard let live, let current = live.retained[live.generation] else {
                        // Nothing to change: an archive the store does not have, or one discarded.
                        do {
                            try store.saveChanges([], basedOn: live?.generation ?? 1, header: SampleArchives.header, in: name)
                            Issue.record("step \(step): a save of changes to \(name), which holds nothing, was accepted")
                        } catch let error as ArchiveStoreError {
                            // The base is checked first, then that the archive holds it.
                            let expected: ArchiveStoreError =
                                switch model.archives[name]?.generation {
                                case nil: .archiveNotFound(name)
                                case 1?: .generationNotFound(name, 1)
                                case let found?: .generationConflict(name, expected: 1, found: found)
                                }
                            #expect(error == expected, "step \(step)")
                        }
                        counts["refused", default: 0] += 1
                        break
                    }
                    if Int.random(in: 0..<8, using: &random) == 0 {
                        let stale = Generation(live.generation.rawValue - 1)
                        #expect(throws: ArchiveStoreError.generationConflict(name, expected: stale, found: live.generation)) {
                            try store.saveChanges([], basedOn: stale, header: SampleArchives.header, in: name)
                        }
                        counts["stale", default: 0] += 1
                        break
                    }
                    var next = current
                    var removed: [RestorationPath] = []
                    if Int.random(in: 0..<3, using: &random) == 0,
                        let gone = current.keys.sorted().filter({ $0.depth > 1 }).randomElement(using: &random)
                    {
                        removed.append(gone)
                        next = next.filter { !$0.key.isDescendant(of: gone) }
                    }
                    var changed: [ArchivedNode] = []
                    for var node in next.values.sorted(by: { $0.path < $1.path }).shuffled(using: &random).prefix(2) {
                        node.state = try Self.state(Int.random(in: 0...1_000_000, using: &random))
                        changed.append(node)
                    }
                    for node in changed { next[node.path] = node }
                    let result = try store.saveChanges(
                        changed, removing: removed, basedOn: live.generation, header: SampleArchives.header, in: name)
                    #expect(result.generation == model.saved(next, in: name, retaining: retained), "step \(step)")
                    counts["incremental", default: 0] += 1
                case 65..<88:
                    guard model.archives[name] != nil else {
                        #expect(throws: ArchiveStoreError.archiveNotFound(name)) {
                            try store.discard(name, reason: "the window was closed")
                        }
                        counts["not found", default: 0] += 1
                        break
                    }
                    try store.discard(name, reason: "the window was closed")
                    try Self.markDiscarded([name], in: &model, store)
                    counts["forgotten", default: 0] += model.forgetDiscardedLongAgo(keeping: [name])
                    counts["discard", default: 0] += 1
                case 88..<91:
                    // More archives than the store remembers, discarded at once, would forget some
                    // of them in an order this model cannot read back (`DiscardTests` has it).
                    let holdingState = Set(liveNames)
                    guard holdingState.count <= ArchiveStore.retainedDiscardedArchives else { break }
                    let discarded = try store.discardAll(reason: "the user quit the app")
                    #expect(Set(discarded.keys) == holdingState, "step \(step)")
                    try Self.markDiscarded(holdingState, in: &model, store)
                    counts["forgotten", default: 0] += model.forgetDiscardedLongAgo(keeping: holdingState)
                    touched.formUnion(holdingState)
                    counts["discard all", default: 0] += 1
                case -1:
                    touched.formUnion(model.archives.keys)
                    try ArchiveStore.erase(at: path)
                    model = Model()
                    counts["erase", default: 0] += 1
                default:
                    let count = Int.random(in: 1...3, using: &random)
                    stores[which] = (try ArchiveStore(path: path, configuration: .init(retainedGenerations: count)), count)
                    counts["reopen", default: 0] += 1
                }
                try Self.expect(store, holds: model, touched: touched, at: step)
                if step % 10 == 9 {
                    let problems = try store.check()
                    #expect(problems.isEmpty, "step \(step): \(problems)")
                }
            }
            // The sequence did what it is meant to test.
            let least = [
                "full": 300, "incremental": 150, "stale": 15, "discard": 150, "discard all": 15, "forgotten": 20, "erase": 2,
                "reopen": 75,
            ]
            for (operation, least) in least.sorted(by: { $0.key < $1.key }) {
                #expect(counts[operation, default: 0] >= least, "\(operation): \(counts.sorted { $0.key < $1.key })")
            }
            #expect(counts["not found", default: 0] + counts["refused", default: 0] >= 75, "\(counts)")
        }
    }

    /// Marks archives discarded in the model, at the time the store gives for each.
    static func markDiscarded(_ names: Set<ArchiveName>, in model: inout Model, _ store: ArchiveStore) throws {
        for name in names {
            guard case .discarded(_, let at)? = try store.summary(of: name)?.state else {
                Issue.record("\(name) is not discarded")
                continue
            }
            model.archives[name]?.discardedAt = at
            model.archives[name]?.retained = [:]
        }
    }

    /// The archives the store knows are the model's, and each touched one is as the model has it.
    static func expect(_ store: ArchiveStore, holds model: Model, touched: Set<ArchiveName>, at step: Int) throws {
        #expect(try store.archiveNames() == model.archives.keys.sorted(), "step \(step)")
        for name in touched.sorted() {
            let summary = try store.summary(of: name)
            guard let archive = model.archives[name] else {
                #expect(summary == nil, "step \(step): \(name) is not forgotten")
                continue
            }
            #expect(summary?.latestGeneration == archive.generation, "step \(step): \(name)")
            if case .discarded? = summary?.state {
                #expect(archive.discardedAt != nil, "step \(step): \(name) is discarded")
            } else {
                #expect(archive.discardedAt == nil, "step \(step): \(name) is not discarded")
            }
            #expect(try store.generations(of: name).map(\.generation).sorted() == archive.retained.keys.sorted(), "step \(step): \(name)")
            for (generation, nodes) in archive.retained {
                let read = try store.snapshot(of: name, generation: generation)?.nodes ?? []
                #expect(read == nodes.values.sorted { $0.path < $1.path }, "step \(step): \(name) generation \(generation)")
            }
        }
    }
}
