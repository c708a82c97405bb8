import Testing
import TestSupport
@testable import RestorationArchive

@Suite("Discarding archives")
struct DiscardTests {
    @Test func discardRemovesNodesMarksTheArchiveAndAllowsSavingAgain() throws {
        try withTemporaryStore { store in
            let header = SampleArchives.header
            try store.save(try SampleArchives.tree(count: 8), header: header)
            try store.save(try SampleArchives.tree(count: 8, fill: 2), header: header)
            let result = try store.discard(reason: "the user quit the app")
            #expect(result.nodesDeleted == 16)
            #expect(result.writeAheadLogTruncated)
            #expect(try store.snapshot() == nil)
            #expect(try store.header() == nil)
            #expect(try store.generations().isEmpty)
            let summary = try #require(try store.summary(of: .main))
            guard case .discarded(let reason, _) = summary.state else {
                Issue.record("expected discarded, got \(summary.state)")
                return
            }
            #expect(reason == "the user quit the app")
            #expect(summary.latestGeneration == 2)
            #expect(throws: ArchiveStoreError.generationNotFound(.main, 2)) {
                try store.saveChanges([], basedOn: 2, header: header)
            }
            // Saving again starts afresh, and generation numbers are never reused.
            let next = try store.save(try SampleArchives.tree(count: 2), header: header)
            #expect(next.generation == 3)
            #expect(try store.summary(of: .main)?.state == .valid)
            #expect(throws: ArchiveStoreError.archiveNotFound(try ArchiveName("never"))) {
                try store.discard(try ArchiveName("never"), reason: "x")
            }
        }
    }

    @Test func discardOneArchiveLeavesTheOthers() throws {
        try withTemporaryStore { store in
            let scene = try ArchiveName("scene-2")
            try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
            try store.save(try SampleArchives.tree(count: 5), header: SampleArchives.header, in: scene)
            try store.discard(scene, reason: "window closed")
            #expect(try store.snapshot()?.nodes.count == 4)
            #expect(try store.snapshot(of: scene) == nil)
        }
    }

    @Test func discardedContentsAreInNoneOfTheStoreFiles() throws {
        try withTemporaryStorePath { path in
            let secret = Array("TOP-SECRET-DRAFT-4242".utf8)
            let store = try ArchiveStore(path: path)
            var nodes = try SampleArchives.tree(count: 20)
            // Small (in-page) and large (overflow pages) state, in every retained generation.
            nodes[3].state = secret
            nodes[4].state = Array((0..<300).flatMap { _ in secret })
            var base = try store.save(nodes, header: SampleArchives.header).generation
            nodes[3].state = secret + [1]
            base = try store.saveChanges([nodes[3]], basedOn: base, header: SampleArchives.header).generation
            let files = [path, path + "-wal", path + "-shm"]
            #expect(files.contains { fileBytes($0)?.contains(bytes: secret) == true })

            let result = try store.discard(reason: "the user quit the app")
            #expect(result.writeAheadLogTruncated)
            for file in files {
                #expect(fileBytes(file)?.contains(bytes: secret) != true, "\(file) still holds discarded state")
            }
        }
    }

    @Test func discardReportsWhenAReaderKeepsTheLogFromBeingTruncated() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path, configuration: .init(busyTimeout: .milliseconds(50)))
            try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            let result = try reader.withConnection { connection in
                try connection.transaction(.deferred) {
                    _ = try connection.pragmaInteger("SELECT count(*) FROM node")
                    return try store.discard(reason: "quit")
                }
            }
            #expect(!result.writeAheadLogTruncated)
            #expect(try store.snapshot() == nil)
        }
    }
}
