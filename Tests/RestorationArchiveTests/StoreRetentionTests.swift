import Testing
import TestSupport
@testable import RestorationArchive

/// Full and incremental saves in random order, with the retention changing between them (as
/// when an app's next version keeps more or fewer generations): every retained generation reads
/// back as it was saved, the pruned ones are gone, and no node row is left that no retained
/// generation reads (`check()` lists such rows).
@Suite("Retention over random saves")
struct StoreRetentionTests {
    let header = SampleArchives.header

    /// The archive as the test expects it: each retained generation's nodes by path.
    struct Model {
        var generations: [Generation: [RestorationPath: ArchivedNode]] = [:]
        var newest: Generation?

        mutating func saved(_ nodes: [RestorationPath: ArchivedNode], as generation: Generation, retained: Int) {
            generations[generation] = nodes
            newest = generation
            generations = generations.filter { $0.key.rawValue > generation.rawValue - Int64(retained) }
        }
    }

    /// A state the keyed coder wrote (`check()` decodes every state).
    static func state(_ value: Int) throws -> [UInt8] {
        let coder = StateEncoder()
        try coder.encode(value, forKey: "value")
        return try coder.encodedBlob()
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func everyRetainedGenerationReadsBackAsSaved(seed: UInt64) throws {
        try withTemporaryStorePath { path in
            var random = SeededGenerator(seed: seed)
            var stores: [Int: ArchiveStore] = [:]
            func store(retaining count: Int) throws -> ArchiveStore {
                if let store = stores[count] { return store }
                let store = try ArchiveStore(path: path, configuration: .init(retainedGenerations: count))
                stores[count] = store
                return store
            }
            var model = Model()
            var counts: [String: Int] = [:]
            for step in 0..<60 {
                let retained = Int.random(in: 1...4, using: &random)
                let store = try store(retaining: retained)
                let current = model.newest.flatMap { model.generations[$0] } ?? [:]
                let result: SaveResult
                var next = current
                if current.isEmpty || Int.random(in: 0..<4, using: &random) == 0 {
                    let nodes = try SampleArchives.tree(count: Int.random(in: 1...30, using: &random)).map { node in
                        var node = node
                        node.state = try Self.state(step)
                        return node
                    }
                    result = try store.save(nodes.shuffled(using: &random), header: header)
                    next = Dictionary(uniqueKeysWithValues: nodes.map { ($0.path, $0) })
                    counts["full", default: 0] += 1
                } else {
                    // Remove a subtree (not the root) now and then, change a few nodes outside
                    // it, and add a child or two.
                    var removed: [RestorationPath] = []
                    if Int.random(in: 0..<3, using: &random) == 0,
                        let path = current.keys.sorted().filter({ $0.depth > 1 }).randomElement(using: &random)
                    {
                        removed.append(path)
                        next = next.filter { $0.key != path && !$0.key.description.hasPrefix(path.description + "/") }
                        counts["removal", default: 0] += 1
                    }
                    var changed: [ArchivedNode] = []
                    for var node in next.values.sorted(by: { $0.path < $1.path }).shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random)) {
                        node.state = try Self.state(Int.random(in: 0...1_000_000, using: &random))
                        changed.append(node)
                    }
                    if let parent = next.keys.sorted().randomElement(using: &random), parent.depth < 6 {
                        changed.append(
                            ArchivedNode(path: try parent.appending("s\(step)"), className: "Added", state: try Self.state(-step)))
                    }
                    for node in changed { next[node.path] = node }
                    result = try store.saveChanges(
                        changed, removing: removed, basedOn: model.newest!, header: header)
                    counts["incremental", default: 0] += 1
                }
                model.saved(next, as: result.generation, retained: retained)
                counts["pruned", default: 0] += result.prunedGenerations.count

                #expect(try store.generations().map(\.generation).sorted() == model.generations.keys.sorted(), "step \(step)")
                for (generation, nodes) in model.generations {
                    let read = try store.snapshot(generation: generation)?.nodes ?? []
                    #expect(read == nodes.values.sorted { $0.path < $1.path }, "step \(step), generation \(generation)")
                }
                let problems = try store.check()
                #expect(problems.isEmpty, "step \(step): \(problems)")
            }
            // The sequence did what it is meant to test (dictionaries are ordered before a
            // random pick, so that a seed always makes the same sequence).
            #expect(counts["full", default: 0] >= 8 && counts["incremental", default: 0] >= 30)
            #expect(counts["removal", default: 0] >= 8 && counts["pruned", default: 0] >= 40)
        }
    }

    /// A generation asked of an archive that retains none (never saved, or discarded) is not
    /// found, as one pruned is; asked for its newest, such an archive has none.
    @Test func aGenerationOfAnArchiveThatRetainsNoneIsNotFound() throws {
        try withTemporaryStore { store in
            let never = try ArchiveName("never-saved")
            #expect(try store.snapshot(of: never) == nil)
            #expect(throws: ArchiveStoreError.generationNotFound(never, 1)) { try store.snapshot(of: never, generation: 1) }
            let saved = try store.save(try SampleArchives.tree(count: 3), header: header).generation
            #expect(try store.snapshot(generation: saved)?.nodes.count == 3)
            try store.discard(.main, reason: "the user quit the app")
            #expect(try store.snapshot() == nil)
            for read in [store.snapshot(of:generation:), store.inspectionSnapshot(of:generation:)] {
                #expect(throws: ArchiveStoreError.generationNotFound(.main, saved)) { try read(.main, saved) }
            }
        }
    }

    /// A full save prunes before it writes, so the new generation's rows go into the pages the
    /// pruned one freed: the file holds the retained generations and stops growing, and a save
    /// writes each reused page once (the pruned rows zeroed, then overwritten, in one
    /// transaction). Pruning after writing left the pruned generation's pages free at rest and
    /// wrote them twice, zeroed in one save and filled in the next.
    @Test(arguments: [1, 2, 3])
    func aFullSaveReusesThePagesOfTheGenerationItPrunes(retained: Int) throws {
        try withTemporaryStore(configuration: .init(retainedGenerations: retained)) { store in
            func count() throws -> (total: Int64, free: Int64) {
                try store.withConnection { connection in
                    (try connection.pragmaInteger("PRAGMA page_count") ?? 0,
                     try connection.pragmaInteger("PRAGMA freelist_count") ?? 0)
                }
            }
            let empty = try count().total
            var pages: [(total: Int64, free: Int64)] = []
            for save in 0..<(retained + 5) {
                try store.save(try SampleArchives.tree(count: 400, stateSize: 200, fill: UInt8(save)), header: header)
                pages.append(try count())
            }
            // Before any prune the file holds `retained` generations: each save adds one's pages.
            let retainedPages = pages[retained - 1].total
            #expect(pages[0].total - empty >= 20, "the test's generations are too small to tell: \(pages)")
            // Then it stops growing (but for a page or two of the generation table and the
            // indexes), and no generation's worth of pages lies free.
            for (save, count) in pages.enumerated().dropFirst(retained) {
                #expect(count.total <= retainedPages + 3, "save \(save): \(pages)")
                #expect(count.free <= 3, "save \(save): \(pages)")
            }
        }
    }

    /// An incremental save prunes before it writes too: the row it inserts takes the place of
    /// the node's row the prune deletes. Pruning after, a node's page held three of its rows
    /// for a moment (the two retained and the new one), and a page without room for the third
    /// was split at every save of that node. Each save here is the only frames in the log
    /// (truncated before it); once a node's page has room for its rows (its first save splits
    /// the page a full save filled), a save writes four: the node's page, the `node_retired`
    /// index, the generation and the archive row.
    @Test
    func repeatedSavesOfANodeWriteFourPages() throws {
        try withTemporaryStore { store in
            let nodes = try SampleArchives.tree(count: 300, stateSize: 200)
            var generation = try store.save(nodes, header: header).generation
            let states = try (0..<6).map {
                try SampleArchives.tree(count: nodes.count, stateSize: 200, fill: UInt8($0 + 2))
            }
            var settled = 0
            var more: [Int] = []
            for index in stride(from: 0, to: nodes.count, by: 7) {
                for (save, changed) in states.enumerated() {
                    #expect(try store.withConnection { try $0.checkpointTruncating() })
                    generation = try store.saveChanges([changed[index]], basedOn: generation, header: header).generation
                    guard save >= 2 else { continue }
                    settled += 1
                    // The log was emptied before the save: its frames are the save's.
                    let frames = framesInWriteAheadLog(store.path + "-wal")
                    if frames != 4 { more.append(frames) }
                }
            }
            // In this archive, with this machine's SQLite: 4 of 172 such saves wrote more than
            // four pages, all four of one node whose rows lie across the boundary of two leaf
            // pages: each of its saves rebalances those leaves with a third and rewrites their
            // parent (six and seven pages in turn). Pruning after, 18 (of six nodes).
            #expect(more.count * 20 <= settled, "\(more.count) of \(settled) saves wrote more than four pages: \(more)")
        }
    }
}
