import CSQLite
import Foundation
import Logging
import Testing
import TestSupport
@testable import RestorationArchive

/// A restoration that completes while its end cannot be recorded: another connection holds
/// the store's write lock past the busy timeout (an app extension saving, `restorectl erase`
/// waiting), or the disk is full. The restoration did complete: its marker, still there, is
/// no restoration that died, for this process's next restoration or save of the archive.
@Suite("A restoration's end that could not be recorded")
struct UnrecordedRestorationEndTests {
    /// Generation 1 holding "first", restored by a screen whose extension completes while
    /// another connection holds the write lock: the end is not recorded, and the marker stays.
    /// `body` runs once the lock is released, with the store and its log.
    private func withEndNotRecorded(
        policy: CrashPolicy = .discard, _ body: (_ path: String, _ store: ArchiveStore, _ log: LogSink) throws -> Void
    ) throws {
        try withTemporaryStorePath { path in
            let log = LogSink()
            let configuration = ArchiveStore.Configuration(busyTimeout: .milliseconds(50), crashPolicy: policy)
            let store = try ArchiveStore(path: path, configuration: configuration, logger: Logger(label: "test") { _ in log })
            try makeEngine(store).preserve([Probe("Root", value: "first")])
            let engine = try RestorationEngine(
                store: store, app: SampleArchives.app,
                registry: RestorationRegistry(), logger: Logger(label: "test") { _ in log })
            let slow = SlowScreen("Root")
            let result = try engine.restore([slow])
            #expect(result.report.outcome == .restored && !result.isComplete)

            let holder = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
            try holder.execute("BEGIN IMMEDIATE")
            #expect(slow.extensions.count == 1 && slow.extensions[0].complete())
            try holder.execute("COMMIT")
            #expect(result.isComplete)
            #expect(
                log.messages.contains {
                    $0.hasPrefix("The end of restoring archive 'main' generation 1 was not recorded: ")
                        && $0.hasSuffix("; the archive's next save or restoration in this process records it")
                }, "\(log.messages)")
            #expect(try store.crashMarkers().map(\.generation) == [1])
            #expect(try store.restoreReports().isEmpty)
            try body(path, store, log)
        }
    }

    /// It was taken for a restoration that died: generation 1 invalidated, nothing restored.
    @Test(arguments: [CrashPolicy.discard, .fallBackToKnownGood, .retry(attempts: 1)])
    func theNextRestorationInThisProcessRecordsTheEndAndRestores(policy: CrashPolicy) throws {
        try withEndNotRecorded(policy: policy) { path, store, log in
            // A read-only store of this process decides as the writer will, writing nothing.
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            let read = Probe("Root")
            #expect(try makeEngine(reader).restore([read]).report.outcome == .restored)
            #expect(read.value == "first")
            #expect(try store.crashMarkers().map(\.generation) == [1])

            let root = Probe("Root")
            let next = try makeEngine(store).restore([root])
            #expect(next.report.outcome == .restored && next.report.generation == 1)
            #expect(root.value == "first")
            #expect(try store.header()?.state == .valid)
            #expect(try !store.hasCrashMarker())
            let generation = try #require(try store.generations().first)
            #expect(generation.restoredCleanly && generation.restoreAttempts == 0)
            // The first restoration's report is kept, once, before this one's.
            #expect(try store.restoreReports().count == 2)
            #expect(
                log.messages.filter {
                    $0.contains("The end of restoring archive 'main' generation 1, which could not be recorded")
                }.count == 1)
        }
    }

    /// Its marker stayed on generation 1 for the next launch to take for a death.
    @Test func theArchivesNextSaveRecordsTheEnd() throws {
        try withEndNotRecorded { path, store, _ in
            try makeEngine(store).preserve([Probe("Root", value: "second")])
            #expect(try !store.hasCrashMarker())
            let generations = try store.generations()
            #expect(generations.map(\.generation) == [2, 1])
            #expect(generations.map(\.restoredCleanly) == [false, true])
            #expect(generations.map(\.restoreAttempts) == [0, 0])
            #expect(try store.restoreReports().map(\.generation) == [1])
            // Recorded once: the next save and restoration find nothing left to record.
            try makeEngine(store).preserve([Probe("Root", value: "third")])
            let root = Probe("Root")
            #expect(try makeEngine(store).restore([root]).report.outcome == .restored)
            #expect(root.value == "third")
            #expect(try store.restoreReports().map(\.generation) == [3, 1])
        }
    }

    /// A save of another archive leaves the marker alone: the end is the restored archive's.
    @Test func aSaveOfAnotherArchiveLeavesTheEndForLater() throws {
        try withEndNotRecorded { _, store, _ in
            try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header, in: try ArchiveName("other"))
            #expect(try store.crashMarkers().map(\.generation) == [1])
            #expect(try makeEngine(store).restore([Probe("Root")]).report.outcome == .restored)
            #expect(try !store.hasCrashMarker())
        }
    }
}
