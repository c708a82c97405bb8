import CSQLite
import Foundation
import Logging
import Testing
import TestSupport
@testable import RestorationArchive

/// A discard that leaves most of the store free compacts it, so that the file gives the space
/// back: SQLite reuses free pages but never shrinks a file by itself.
@Suite("Compacting the store after a discard")
struct StoreCompactionTests {
    /// 3,000 nodes of 400 bytes, saved twice (two retained generations): about 2.6 MB.
    private static func saveALargeArchive(_ name: ArchiveName = .main, in store: ArchiveStore) throws {
        for fill: UInt8 in [1, 2] {
            try store.save(try SampleArchives.tree(count: 3_000, stateSize: 400, fill: fill), header: SampleArchives.header, in: name)
        }
    }

    /// What ``ArchiveStore/check()`` finds, but that the sample states are not blobs.
    private static func problems(in store: ArchiveStore) throws -> [StoreProblem] {
        try store.check().filter { !$0.problem.hasPrefix("its state cannot be decoded") }
    }

    /// The store's size, in bytes, as its newest state has it (its log's pages included).
    private static func size(of store: ArchiveStore) throws -> Int64 {
        try store.withConnection { try $0.pageCounts().bytes }
    }

    private static func isDiscarded(_ name: ArchiveName, in store: ArchiveStore) throws -> Bool {
        if case .discarded? = try store.summary(of: name)?.state { true } else { false }
    }

    @Test func aDiscardThatLeavesMostOfTheStoreFreeGivesTheSpaceBack() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let other = try ArchiveName("other")
            try Self.saveALargeArchive(in: store)
            try store.save(try SampleArchives.tree(count: 50, stateSize: 100, fill: 7), header: SampleArchives.header, in: other)
            try store.record(.willFinishLaunching)
            let before = (
                size: try Self.size(of: store), snapshot: try store.snapshot(of: other),
                journal: try store.journal(), generations: try store.generations(of: other))
            #expect(before.size > 2_000_000)
            // Another connection, which read the schema before the compaction moved its tables.
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try reader.snapshot()?.nodes.count == 3_000)

            let result = try store.discard(reason: "the window was closed")
            #expect(result == DiscardResult(nodesDeleted: 6_000, writeAheadLogTruncated: true, storeCompacted: true))
            // What is left is the other archive, the journal and the rows of the store.
            let after = try #require(fileSize(path))
            #expect(after < 200_000, "the file kept \(after) of its \(before.size) bytes")
            #expect(fileSize(path + "-wal") == 0)
            let pages = try store.withConnection { try $0.pageCounts() }
            #expect(pages.free == 0 && pages.bytes == Int64(after))
            // Nothing else changed: the other archive, the journal (its ids are launch
            // numbers), the discarded archive's row, and the store's health.
            #expect(try store.snapshot(of: other) == before.snapshot)
            #expect(try store.generations(of: other) == before.generations)
            #expect(try store.journal().dropLast() == before.journal[...])
            #expect(try Self.problems(in: store) == [])
            #expect(try Self.isDiscarded(.main, in: store))
            #expect(try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header).generation == 3)
            // The connection opened before the compaction reads the store as it is now.
            #expect(try reader.snapshot()?.nodes.count == 3)
            #expect(try reader.snapshot(of: other) == before.snapshot)
        }
    }

    /// An explicit quit discards every archive: the store is then little more than its journal.
    @Test func discardingEveryArchiveAtAQuitCompactsTheStore() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let scene = try ArchiveName("scene-2")
            try Self.saveALargeArchive(in: store)
            try Self.saveALargeArchive(scene, in: store)
            let before = try Self.size(of: store)
            let results = try store.discardAll(reason: "the user quit the app")
            #expect(results.keys.sorted() == [.main, scene].sorted())
            #expect(results.values.allSatisfy { $0.storeCompacted && $0.writeAheadLogTruncated })
            let after = try #require(fileSize(path))
            #expect(Int64(after) < before / 20, "the file kept \(after) of its \(before) bytes")
            #expect(try Self.problems(in: store) == [])
        }
    }

    /// Free pages the next saves will fill are left: a small discard in a large store, and a
    /// small store, however free.
    @Test func aDiscardThatLeavesLittleFreeLeavesTheFileAsItIs() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let small = try ArchiveName("small")
            // Saved once: no page of it is free.
            try store.save(try SampleArchives.tree(count: 8_000, stateSize: 400), header: SampleArchives.header)
            try store.save(try SampleArchives.tree(count: 3_000, stateSize: 400), header: SampleArchives.header, in: small)
            let before = try store.withConnection { try $0.pageCounts() }
            #expect(before.free == 0)
            // Over a mebibyte free, but under half of the store.
            #expect(try store.discard(small, reason: "closed").storeCompacted == false)
            let left = try store.withConnection { try $0.pageCounts() }
            #expect(left.pages == before.pages)
            #expect(fileSize(path) == Int(left.bytes))
            #expect(left.freeBytes >= ArchiveStore.compactedFreeBytes && left.free * 2 < left.pages)
        }
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 600, stateSize: 400), header: SampleArchives.header)
            let before = try Self.size(of: store)
            // Nearly all of it free, but under a mebibyte.
            #expect(try store.discard(reason: "quit").storeCompacted == false)
            let left = try store.withConnection { try $0.pageCounts() }
            #expect(left.bytes == before)
            #expect(fileSize(path) == Int(left.bytes))
            #expect(left.free * 2 > left.pages && left.freeBytes < ArchiveStore.compactedFreeBytes)
        }
    }

    /// A reader keeps the compacted store in the log: the file shrinks at the next truncating
    /// checkpoint once the reader is done, and the reader reads what it read before.
    @Test func aReaderDelaysTheFileShrinkingUntilItIsDone() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path, configuration: .init(busyTimeout: .milliseconds(50)))
            try Self.saveALargeArchive(in: store)
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            let result = try reader.withConnection { connection in
                try connection.transaction(.deferred) {
                    let counted = try connection.pragmaInteger("SELECT count(*) FROM node")
                    let result = try store.discard(reason: "quit")
                    // The reader's snapshot is the one before the discard.
                    #expect(try connection.pragmaInteger("SELECT count(*) FROM node") == counted)
                    return result
                }
            }
            #expect(result.storeCompacted && !result.writeAheadLogTruncated)
            // Not shrunk yet: the compacted store is in the log.
            #expect(try #require(fileSize(path)) > 1_000_000)
            #expect(try reader.snapshot() == nil)
            #expect(try store.withConnection { try $0.checkpointTruncating() })
            #expect(try #require(fileSize(path)) < 200_000)
            #expect(try Self.problems(in: store) == [])
        }
    }

    /// A compaction that fails leaves the discard committed and says why in the log.
    @Test func aCompactionThatFailsLeavesTheDiscardDone() throws {
        try withTemporaryStorePath { path in
            let sink = LogSink()
            let store = try ArchiveStore(path: path, logger: Logger(label: "test") { _ in sink })
            try Self.saveALargeArchive(in: store)
            let before = try Self.size(of: store)
            // `VACUUM` writes the new store into a database it attaches: allowed none, it fails.
            try store.withConnection { connection in
                _ = sqlite3_limit(connection.handle, SQLITE_LIMIT_ATTACHED, 0)
            }
            let result = try store.discard(reason: "quit")
            #expect(result == DiscardResult(nodesDeleted: 6_000, writeAheadLogTruncated: true, storeCompacted: false))
            #expect(try Self.size(of: store) == before)
            #expect(fileSize(path) == Int(before))
            #expect(try store.snapshot() == nil)
            #expect(try Self.isDiscarded(.main, in: store))
            let warning = sink.messages.first { $0.contains("was not compacted after the discard") }
            #expect(warning?.contains("too many attached databases") == true, "\(sink.messages)")
            #expect(try Self.problems(in: store) == [])
        }
    }

    /// What `footprint()` says before and after a compaction, against the files and SQLite's
    /// own counts.
    @Test func theFootprintSaysWhatTheFilesHoldAndWhatIsFree() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let empty = try store.footprint()
            #expect(empty.fileBytes == fileSize(path) && empty.logBytes == (fileSize(path + "-wal") ?? 0))
            #expect(empty.storeBytes == Int(try store.withConnection { try $0.pageCounts() }.bytes))
            // The migrations leave a few pages free (the tables they made again).
            #expect(empty.freeBytes == Int(try store.withConnection { try $0.pageCounts() }.freeBytes))
            try Self.saveALargeArchive(in: store)
            try store.save(try SampleArchives.tree(count: 10), header: SampleArchives.header, in: ArchiveName("other"))
            // Two small saves: the large generations are pruned, their pages free (saves
            // never compact).
            for _ in 0..<2 { try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header) }
            let full = try store.footprint()
            let pages = try store.withConnection { try $0.pageCounts() }
            #expect(full.freeBytes == Int(pages.freeBytes) && full.freeBytes > 1_000_000)
            #expect(full.storeBytes == Int(pages.bytes) && full.freeBytes < full.storeBytes)
            #expect(full.fileBytes == fileSize(path) && full.logBytes == fileSize(path + "-wal"))
            // Read-only, as restorectl reads it.
            #expect(try ArchiveStore(path: path, mode: .readOnly).footprint() == full)

            #expect(try store.discard(reason: "quit").storeCompacted)
            let compacted = try store.footprint()
            #expect(compacted.freeBytes == 0 && compacted.logBytes == 0)
            #expect(compacted.fileBytes == fileSize(path) && compacted.fileBytes < 100_000)
            // The compaction's checkpoint copied the log back: the file is the store's size.
            #expect(compacted.storeBytes == compacted.fileBytes)
        }
    }

    /// `VACUUM` fails while a statement of its connection is still running, and the discard
    /// then leaves the store as large as it was: after the store's reads and the engine's
    /// restoration and preservation, as an app makes them, a discard still compacts.
    @Test func aStoreUsedAsAnAppUsesItIsStillCompacted() throws {
        try withTemporaryStore { store in
            func screens(_ value: String) -> Probe {
                Probe("Root", (0..<2_000).map { Probe("s\($0)", value: value + "\($0)") })
            }
            try store.record(.willFinishLaunching)
            try makeEngine(store).preserve([screens(String(repeating: "a", count: 600))])
            try makeEngine(store).preserve([screens(String(repeating: "b", count: 600))])
            let restored = try makeEngine(store).restore([screens("")])
            #expect(restored.report.restoredCount == 2_001)
            try store.record(.didFinishLaunching)
            _ = try store.snapshot()
            _ = try store.inspectionSnapshot()
            _ = try store.node(at: .text("Root/s7"))
            _ = try store.header()
            _ = try store.generations()
            _ = try store.archiveNames()
            _ = try store.archives()
            _ = try store.summary(of: .main)
            _ = try store.restoreReports()
            _ = try store.journal(limit: 3)
            _ = try store.launches()
            _ = try store.previousLaunch()
            _ = try store.crashMarkers()
            _ = try store.hasCrashMarker()
            #expect(try store.check() == [])
            let result = try #require(try store.discardAll(reason: "the user quit the app")[.main])
            #expect(result.storeCompacted, "\(result)")
        }
    }

    /// As a write is refused, a compaction is skipped when the store's file or its log is no
    /// longer at its path: what it wrote would go to files no path names.
    @Test func aStoreWhoseFilesMovedIsNotCompacted() throws {
        for moved in ["", "-wal"] {
            try withTemporaryStorePath { path in
                let store = try ArchiveStore(path: path)
                try Self.saveALargeArchive(in: store)
                try store.withConnection { connection in
                    try connection.execute("DELETE FROM node")
                    let before = try connection.pageCounts()
                    #expect(before.free * 2 > before.pages)
                    try FileManager.default.moveItem(atPath: path + moved, toPath: path + moved + ".moved")
                    #expect(try connection.compact() == false, "\(moved)")
                    #expect(try connection.pageCounts() == before)
                    try FileManager.default.moveItem(atPath: path + moved + ".moved", toPath: path + moved)
                    #expect(try connection.compact())
                    #expect(try connection.pageCounts().free == 0)
                }
            }
        }
    }
}
