import Foundation
import Logging
@testable import RestorationArchive
import Synchronization
import Testing
import TestSupport

/// A screen that extends restoration and never completes the extension unless told to: what
/// an app killed in the middle of restoring leaves behind (R10, R11).
final class SlowScreen: Probe {
    override class var restorationClassName: String { "Probe" }
    var extensions: [RestorationExtension] = []

    override func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        try super.decodeRestorableState(with: coder, context: context)
        extensions.append(context.extendRestoration())
    }
}

/// The id of a process that has exited, for markers whose restoration died.
func deadProcessID() throws -> Int32 {
    let process = Process()
    process.executableURL = URL(filePath: "/bin/true")
    try process.run()
    process.waitUntilExit()
    return process.processIdentifier
}


/// Restores `path`'s main archive the way a launch that then dies does: the marker is
/// committed, the restoration never completes, and the process is gone.
func restoreAndDie(_ path: String, configuration: ArchiveStore.Configuration = .init()) throws {
    let store = try ArchiveStore(path: path, configuration: configuration)
    let screen = SlowScreen("Root")
    let result = try makeEngine(store).restore([screen])
    #expect(result.report.outcome == .restored && !result.isComplete)
    #expect(try store.hasCrashMarker())
    try markRestorationDead(at: path)
}

/// The launch after generation 1's restoration died (R11): it finds the marker, invalidates
/// the generation, decodes nothing and clears the marker.
@discardableResult
func expectNextLaunchInvalidatesGeneration1(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws
    -> RestorationResult
{
    let store = try ArchiveStore(path: path)
    let root = Probe("Root")
    let next = try makeEngine(store).restore([root])
    #expect(
        next.report.outcome == .refused(reason: "generation 1 was invalidated: the app died while restoring it"),
        sourceLocation: sourceLocation)
    #expect(root.decodeCount == 0, sourceLocation: sourceLocation)
    #expect(try !store.hasCrashMarker(), sourceLocation: sourceLocation)
    return next
}

@Suite("Crash markers and policies")
struct CrashMarkerTests {
    @Test func R11_restorationThatDiedIsInvalidatedAndNeverRestoredAgain() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "crashes the app")])
            try restoreAndDie(path)

            let next = try expectNextLaunchInvalidatesGeneration1(path)
            guard case .invalidated(let reason, _)? = try store.header()?.state else {
                Issue.record("the header must say the generation was invalidated")
                return
            }
            #expect(reason == "the app died while restoring it")
            // The launch after that does not loop: still nothing restored, nothing written.
            let root = Probe("Root")
            let again = try makeEngine(try ArchiveStore(path: path)).restore([root])
            #expect(again.report.outcome == next.report.outcome && root.decodeCount == 0)
            // A new save is restored normally.
            try makeEngine(store).preserve([Probe("Root", value: "fine")])
            let fresh = Probe("Root")
            #expect(try makeEngine(store).restore([fresh]).report.outcome == .restored)
            #expect(fresh.value == "fine")
        }
    }

    @Test func R11_cleanRestorationsAreNeverInvalidated() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "kept")])
            for _ in 0..<3 {
                let root = Probe("Root")
                let result = try makeEngine(try ArchiveStore(path: path)).restore([root])
                #expect(result.report.outcome == .restored && result.isComplete && root.value == "kept")
                #expect(try !store.hasCrashMarker())
            }
            #expect(try store.header()?.state == .valid)
        }
    }

    /// A store under ``CrashPolicy/fallBackToKnownGood`` whose generation 1 ("good") once
    /// completed a restoration, and whose generation 2 ("bad") died restoring.
    private func withKnownGoodThenADeadGeneration(
        _ body: (String, ArchiveStore.Configuration, ArchiveStore) throws -> Void
    ) throws {
        try withTemporaryStorePath { path in
            let configuration = ArchiveStore.Configuration(crashPolicy: .fallBackToKnownGood)
            let store = try ArchiveStore(path: path, configuration: configuration)
            try makeEngine(store).preserve([Probe("Root", value: "good")])
            _ = try makeEngine(store).restore([Probe("Root")])  // generation 1 completes: known good
            try makeEngine(store).preserve([Probe("Root", value: "bad")])
            try restoreAndDie(path, configuration: configuration)
            try body(path, configuration, store)
        }
    }

    @Test func R11_fallBackToKnownGoodRestoresTheNewestGenerationThatOnceCompleted() throws {
        try withKnownGoodThenADeadGeneration { path, configuration, store in
            let root = Probe("Root")
            let next = try makeEngine(try ArchiveStore(path: path, configuration: configuration)).restore([root])
            #expect(next.report.outcome == .restored && next.report.generation == 1)
            #expect(root.value == "good")
            // The context gave the header of the generation restored, not the newest one's.
            #expect(root.decodedHeader?.generation == 1)
            #expect(try store.generations().map(\.state.isValid) == [false, true])
        }
    }

    @Test func R11_fallBackWithoutAKnownGoodGenerationRestoresNothing() throws {
        try withTemporaryStorePath { path in
            let configuration = ArchiveStore.Configuration(crashPolicy: .fallBackToKnownGood)
            let store = try ArchiveStore(path: path, configuration: configuration)
            try makeEngine(store).preserve([Probe("Root", value: "never restored")])
            try makeEngine(store).preserve([Probe("Root", value: "bad")])
            try restoreAndDie(path, configuration: configuration)
            let next = try makeEngine(try ArchiveStore(path: path, configuration: configuration)).restore([Probe("Root")])
            guard case .refused = next.report.outcome else {
                Issue.record("nothing was ever restored cleanly: nothing to fall back to, got \(next.report.outcome)")
                return
            }
        }
    }

    /// A generation the fall-back policy restored, known good since an earlier restoration,
    /// whose restoration then died too: it is invalidated like any other, and the next launch
    /// restores nothing rather than that generation a second time (R11: no policy lets the
    /// same crashing generation run twice).
    @Test func R11_fallBackNeverRestoresAKnownGoodGenerationWhoseRestorationDied() throws {
        try withKnownGoodThenADeadGeneration { path, configuration, store in
            try restoreAndDie(path, configuration: configuration)  // the fall-back to 1 dies too

            let root = Probe("Root")
            let next = try makeEngine(try ArchiveStore(path: path, configuration: configuration)).restore([root])
            #expect(next.report.outcome == .refused(reason: "generation 2 was invalidated: the app died while restoring it"))
            #expect(root.decodeCount == 0)
            #expect(try store.generations().map(\.state.isValid) == [false, false])
        }
    }

    @Test func R11_retryPolicyAllowsItsAttemptsThenInvalidates() throws {
        try withTemporaryStorePath { path in
            let configuration = ArchiveStore.Configuration(crashPolicy: .retry(attempts: 2))
            let store = try ArchiveStore(path: path, configuration: configuration)
            try makeEngine(store).preserve([Probe("Root", value: "flaky")])
            try restoreAndDie(path, configuration: configuration)  // attempt 1 dies
            try restoreAndDie(path, configuration: configuration)  // attempt 2 is allowed, and dies
            let root = Probe("Root")
            let third = try makeEngine(try ArchiveStore(path: path, configuration: configuration)).restore([root])
            #expect(third.report.outcome == .refused(reason: "generation 1 was invalidated: the app died during each of its last 2 restorations"))
            #expect(root.decodeCount == 0)
        }
    }

    @Test func R11_retryCountsCrashesInARowOnly() throws {
        try withTemporaryStorePath { path in
            let configuration = ArchiveStore.Configuration(crashPolicy: .retry(attempts: 2))
            let store = try ArchiveStore(path: path, configuration: configuration)
            try makeEngine(store).preserve([Probe("Root", value: "flaky")])
            try restoreAndDie(path, configuration: configuration)
            // A restoration that completes starts the count again…
            #expect(try makeEngine(try ArchiveStore(path: path, configuration: configuration)).restore([Probe("Root")]).isComplete)
            try restoreAndDie(path, configuration: configuration)
            // …so one more crash is still within the allowance.
            let root = Probe("Root")
            let next = try makeEngine(try ArchiveStore(path: path, configuration: configuration)).restore([root])
            #expect(next.report.outcome == .restored && root.value == "flaky")
        }
    }

    /// Each launch saves while its restoration is still in progress (the page that crashes
    /// the app still loading), then dies: the save's generation takes on the marker and the
    /// attempts counted so far, so the allowance runs out as it does without the saves. Had
    /// each save started the count again, the app would crash at every launch for good.
    @Test func R11_retryCountsAttemptsThroughSavesDuringRestoration() throws {
        try withTemporaryStorePath { path in
            let configuration = ArchiveStore.Configuration(crashPolicy: .retry(attempts: 2))
            let first = try ArchiveStore(path: path, configuration: configuration)
            try makeEngine(first).preserve([Probe("Root", value: "flaky")])
            for (attempt, saved) in [(1, Generation(2)), (2, Generation(3))] {
                let store = try ArchiveStore(path: path, configuration: configuration)
                let engine = try makeEngine(store)
                let slow = SlowScreen("Root")
                let result = try engine.restore([slow])
                #expect(result.report.outcome == .restored && !result.isComplete, "attempt \(attempt)")
                slow.value = "saved while the page loads, attempt \(attempt)"
                #expect(try engine.preserve([slow]).save?.generation == saved)
                #expect(try store.crashMarkers().map(\.generation) == [saved])
                try markRestorationDead(at: path)
                withExtendedLifetime((slow, result)) {}
            }
            let root = Probe("Root")
            let third = try makeEngine(try ArchiveStore(path: path, configuration: configuration)).restore([root])
            #expect(
                third.report.outcome
                    == .refused(reason: "generation 3 was invalidated: the app died during each of its last 2 restorations"))
            #expect(root.decodeCount == 0)
        }
    }

    @Test func R10_extensionsKeepRestorationInProgressUntilCompleted() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([Probe("Root", value: "v", [Probe("A")])])
            let child = SlowScreen("A")
            let root = SlowScreen("Root", [child])
            let result = try makeEngine(store).restore([root])
            #expect(!result.isComplete)
            #expect(try store.hasCrashMarker())
            #expect(try store.restoreReports().isEmpty, "the report is kept when restoration completes")
            let extensions = root.extensions + child.extensions
            #expect(extensions.count == 2)
            // Completed from another thread, as asynchronous work does.
            let first = extensions[0]
            let thread = Thread { first.complete() }
            thread.start()
            while !thread.isFinished { usleep(1000) }
            #expect(!result.isComplete)
            #expect(try store.hasCrashMarker())
            #expect(extensions[1].complete())
            #expect(result.isComplete)
            #expect(try !store.hasCrashMarker())
            #expect(try store.restoreReports().first == result.report)
            // Completing twice is a programming error: reported, never a crash, nothing changes.
            #expect(!extensions[1].complete())
        }
    }

    /// Extensions released without being completed: nothing can end that restoration any
    /// more. It stays in progress in this process, with its marker (R10), and the log names
    /// each object whose extension was dropped, once, when it goes.
    @Test func R10_extensionsReleasedWithoutBeingCompletedAreLogged() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([Probe("Root", value: "v", [Probe("A"), Probe("B")])])
            let sink = LogSink()
            let engine = try RestorationEngine(
                store: store, app: SampleArchives.app,
                registry: RestorationRegistry(), logger: Logger(label: "test") { _ in sink })
            let messages = ["Root", "Root/A"].map { path in
                "The restoration extension of '\(path)' was released without being completed: "
                    + "restoring archive 'main' generation 1 can never complete"
            }
            do {
                let completed = SlowScreen("B")
                let screens = [SlowScreen("Root", [SlowScreen("A"), completed])]
                let result = try engine.restore(screens)
                #expect(completed.extensions.count == 1 && completed.extensions[0].complete())
                // Completing twice is logged too, naming the object.
                #expect(!completed.extensions[0].complete())
                #expect(sink.messages.contains {
                    $0.contains("The restoration extension of 'Root/B' in archive 'main' was completed twice")
                })
                withExtendedLifetime((screens, result)) {
                    #expect(!result.isComplete)
                    #expect(!sink.messages.contains { $0.contains("was released without being completed") })
                }
            }
            for message in messages {
                #expect(sink.messages.filter { $0.contains(message) }.count == 1, "\(sink.messages)")
            }
            // The one completed is not named.
            #expect(!sink.messages.contains { $0.contains("'Root/B' was released") })
            #expect(try store.hasCrashMarker())
            let again = try makeEngine(store).restore([Probe("Root")])
            #expect(again.report.outcome == .refused(reason: "its restoration in this process is still in progress"))
        }
    }

    /// A screen that keeps its restoration context, to extend restoration later.
    final class ContextKeepingScreen: Probe {
        override class var restorationClassName: String { "Probe" }
        var context: RestorationContext?

        override func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
            try super.decodeRestorableState(with: coder, context: context)
            self.context = context
        }
    }

    /// A context kept past its object's decoding extends restoration while another extension
    /// is pending: that extension holds restoration back too. Once restoration has completed,
    /// an extension holds nothing back: a programming error, logged, and neither completing
    /// nor releasing it changes anything. It was silently accepted, and its release logged
    /// that restoration "can never complete".
    @Test func R10_anExtensionMadeAfterRestorationCompletedHoldsNothingBackAndIsLogged() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([Probe("Root", value: "v", [Probe("A")])])
            let sink = LogSink()
            let engine = try RestorationEngine(
                store: store, app: SampleArchives.app,
                registry: RestorationRegistry(), logger: Logger(label: "test") { _ in sink })
            let keeper = ContextKeepingScreen("A")
            let slow = SlowScreen("Root", [keeper])
            let result = try engine.restore([slow])
            let context = try #require(keeper.context)
            // While the slow screen's extension is pending, a later one holds restoration too.
            let pending = context.extendRestoration()
            #expect(slow.extensions.count == 1 && slow.extensions[0].complete())
            #expect(!result.isComplete)
            #expect(try store.hasCrashMarker())
            #expect(pending.complete())
            #expect(result.isComplete)
            #expect(try !store.hasCrashMarker())
            #expect(!sink.messages.contains { $0.contains("after it had completed") })

            let message =
                "'Root/A' extended the restoration of archive 'main' generation 1 after it had completed: "
                + "the extension holds nothing back"
            do {
                let late = context.extendRestoration()
                #expect(sink.messages.filter { $0.contains(message) }.count == 1, "\(sink.messages)")
                #expect(late.complete())
                #expect(!late.complete())
                _ = context.extendRestoration()  // released at once, never completed
            }
            #expect(sink.messages.filter { $0.contains(message) }.count == 2)
            #expect(!sink.messages.contains { $0.contains("was released without being completed") }, "\(sink.messages)")
            #expect(result.isComplete)
            #expect(try !store.hasCrashMarker())
            #expect(try store.restoreReports().count == 1)
            #expect(try makeEngine(store).restore([Probe("Root")]).report.outcome == .restored)
        }
    }

    /// An object that keeps its context (to extend restoration later) held, through it, every
    /// object restored with it, itself included, and the store: none was ever released.
    @Test func aContextItsObjectKeepsDoesNotKeepTheRestoredObjectsAlive() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([Probe("Root", value: "v", [Probe("A")])])
            weak var keeper: ContextKeepingScreen?
            weak var root: Probe?
            do {
                let kept = ContextKeepingScreen("A")
                let parent = Probe("Root", [kept])
                let result = try makeEngine(store).restore([parent])
                let (rootPath, keptPath) = (try RestorationPath(parsing: "Root"), try RestorationPath(parsing: "Root/A"))
                #expect(result.isComplete)
                #expect(result.object(at: keptPath) === kept)
                #expect(kept.context?.object(at: rootPath) == nil)
                (keeper, root) = (kept, parent)
            }
            #expect(keeper == nil)
            #expect(root == nil)
        }
    }

    /// A store whose generation 1 this process is restoring (a slow screen's extension keeps
    /// the restoration in progress), its crash marker then rewritten to name `other`, a
    /// process that runs and began before the restoration did.
    private func withRestorationMarkedAsAnotherProcess(
        _ body: (_ path: String, _ store: ArchiveStore, _ slow: SlowScreen, _ result: RestorationResult, _ other: Process)
            throws -> Void
    ) throws {
        try withTemporaryStorePath { path in
            try withRunningProcess { other in
                let store = try ArchiveStore(path: path)
                try makeEngine(store).preserve([Probe("Root")])
                let slow = SlowScreen("Root")
                let result = try makeEngine(store).restore([slow])
                try tamper(with: path, "UPDATE crash_marker SET \(try writer(other)), checksum = NULL")
                try rewriteMarker(at: path) { _ in }  // with its checksum, as that process writes it
                try body(path, store, slow, result, other)
            }
        }
    }

    @Test func markerOfAProcessStillRestoringIsLeftAlone() throws {
        try withRestorationMarkedAsAnotherProcess { path, store, _, _, sleeper in
            let other = try makeEngine(try ArchiveStore(path: path)).restore([Probe("Root")])
            #expect(other.report.outcome == .refused(reason: "another process (\(sleeper.processIdentifier)) is restoring it"))
            #expect(try store.header()?.state == .valid)
        }
    }

    /// A restoration in progress in another process stays so when the wall clock was
    /// stepped forward since it began (NTP, a user setting the time): its marker's time then
    /// lies before the process seems to have started, which the comparison by wall-clock time
    /// (before schema v0010) took for another process given the id, and a launch then
    /// invalidated the generation being restored.
    @Test func markerOfAProcessStillRestoringIsLeftAloneAfterTheClockWasSteppedForward() throws {
        try withRestorationMarkedAsAnotherProcess { path, store, _, _, sleeper in
            try rewriteMarker(at: path) { $0.startedAt -= 3_600_000 }
            #expect(try store.crashMarkers().map(\.processIsRunning) == [true])
            let other = try makeEngine(try ArchiveStore(path: path)).restore([Probe("Root")])
            let reason = "another process (\(sleeper.processIdentifier)) is restoring it"
            #expect(other.report.outcome == .refused(reason: reason))
            #expect(try store.header()?.state == .valid)
        }
    }

    /// A marker, or a restore report, whose archive id damage changed belongs to no archive:
    /// `check()` names it, where it called the store healthy; so are an archive's generations
    /// and nodes once its row is gone. (A marker with a checksum, written since schema v0013,
    /// is still its archive's: `aMarkerMovedOffItsArchiveByDamageIsStillJudged`. This one
    /// has none, as one written before, in a store of two archives: either may be its own.)
    @Test func aMarkerOrAReportOfNoArchiveIsAProblem() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "crashes the app")])
            #expect(try makeEngine(store).restore([Probe("Root")]).isComplete)
            try restoreAndDie(path)
            try makeEngine(store).preserve([Probe("Root")], in: try ArchiveName("other"))
            #expect(try store.check().isEmpty)
            try tamper(
                with: path, "UPDATE crash_marker SET archive_id = 9, checksum = NULL; UPDATE restore_report SET archive_id = 12")
            #expect(try store.crashMarkers().isEmpty)
            #expect(
                try store.check().map(\.description) == [
                    "a crash marker of no archive of the store (archive id 9)",
                    "restore reports of no archive of the store (archive id 12)",
                ])
            // The archive's row taken away: a lookup of the archive says so (its generations
            // are left), and `check()` names everything it held, where it named nothing. The
            // other archive, now the only one, does not take the marker for its own: the store
            // lost the archive it may be of.
            try tamper(with: path, "DELETE FROM archive WHERE name = 'main'")
            #expect(try store.crashMarkers().isEmpty)
            #expect(throws: ArchiveStoreError.damagedStore("the archive table or its name index lost or mixed up archives")) {
                try store.summary(of: .main)
            }
            #expect(
                try store.check().map(\.description) == [
                    "generations of no archive of the store (archive id 1)",
                    "node rows of no archive of the store (archive id 1)",
                    "a crash marker of no archive of the store (archive id 9)",
                    "restore reports of no archive of the store (archive id 12)",
                ])
        }
    }

    /// Runs `body` on a store whose main archive (id 1) has the marker of a restoration that
    /// died (generation 1), and whose archive `other` (id 2) holds a saved generation.
    private func withDeadRestorationBesideAnotherArchive(
        _ body: (_ path: String, _ store: ArchiveStore, _ other: ArchiveName) throws -> Void
    ) throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "crashes the app")])
            try restoreAndDie(path)
            let other = try ArchiveName("other")
            try makeEngine(store).preserve([Probe("Root", value: "other state")], in: other)
            try body(path, store, other)
        }
    }

    /// A marker whose key damage changed (a flipped bit: archive id 1 read as 9, an id of no
    /// archive, or as 2, another archive's) is still its archive's: its checksum names the
    /// archive. Looked up by the archive's id alone, it was not found, and the generation
    /// whose restoration died was restored again; under another archive's id it was read as
    /// that archive's marker, damaged, a restoration of that archive that died. `check()`
    /// names it as its archive's.
    @Test(arguments: [9, 2])
    func aMarkerMovedOffItsArchiveByDamageIsStillJudged(_ key: Int64) throws {
        try withDeadRestorationBesideAnotherArchive { path, store, other in
            try tamper(with: path, "UPDATE crash_marker SET archive_id = \(key)")
            let listed = try store.crashMarkers()
            #expect(listed.map(\.archive) == [.main] && listed.map(\.generation) == [Generation(1)])
            #expect(listed.map(\.isDamaged) == [false])
            #expect(try !store.hasCrashMarker(other))
            #expect(
                try store.check().map(\.description) == [
                    "archive 'main': its crash marker is stored under archive id \(key), not its own (1): damage changed "
                        + "its key (the archive's next launch still finds it)"
                ])
            // The other archive restores its state, whichever launches first.
            let root = Probe("Root")
            #expect(try makeEngine(try ArchiveStore(path: path)).restore([root], from: other).isComplete)
            #expect(root.value == "other state")
            try expectNextLaunchInvalidatesGeneration1(path)
            #expect(try store.check().isEmpty)
        }
    }

    /// A restoration's marker replaces its archive's marker wherever damage moved it: one of
    /// this process that no restoration here names, which the launch's look did not see
    /// (written after it), was left beside the new one, and judged once that one was gone.
    @Test func aRestorationsMarkerReplacesItsArchivesMarkerWhereverDamageMovedIt() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            // An archive no other test restores: this process lists its restorations by store
            // file and archive name, and another test's restoration still listed for a file
            // whose inode this one was given would refuse this one ("in progress here").
            let archive = try ArchiveName("moved-marker")
            try makeEngine(store).preserve([Probe("Root")], in: archive)
            let snapshot = try #require(try store.prepareRestoration(of: archive).snapshot)
            try writeMarker(
                ArchiveStore.Marker(generation: Generation(1), processID: Int64(getpid()), startedAt: 0, processStart: nil),
                at: path, of: archive)
            try tamper(with: path, "UPDATE crash_marker SET archive_id = 9")
            #expect(try store.crashMarkers().map(\.startedAt) == [Date(timeIntervalSince1970: 0)])
            let start = try store.beginRestoration(of: archive, generation: Generation(1), nodeDigest: snapshot.nodeDigest)
            guard case .began = start else {
                Issue.record("the restoration did not begin: \(start)")
                return
            }
            #expect(try store.crashMarkers().map(\.startedAt) != [Date(timeIntervalSince1970: 0)])
            #expect(try store.check().isEmpty)
        }
    }

    /// A discard deletes its archive's marker wherever damage moved it, and not another
    /// archive's marker that damage moved under its id: that one is moved back, still judged
    /// by its archive's next launch.
    @Test func aDiscardDeletesItsArchivesMovedMarkerAndMovesBackAnothers() throws {
        try withDeadRestorationBesideAnotherArchive { path, store, other in
            try tamper(with: path, "UPDATE crash_marker SET archive_id = 2")
            try store.discard(other, reason: "the scene was closed")
            #expect(try store.crashMarkers().map(\.archive) == [.main])
            #expect(try store.check().isEmpty)
            try tamper(with: path, "UPDATE crash_marker SET archive_id = 9")
            try store.discard(.main, reason: "the user quit the app")
            #expect(try store.crashMarkers().isEmpty)
            #expect(try store.check().isEmpty)
        }
    }

    /// A marker moved off its archive whose values damage changed too (or written before
    /// schema v0013, without a checksum) names no archive: in a store whose only archive is
    /// one, it is that archive's, a restoration that died whose values cannot be read. The
    /// next launch invalidated nothing and restored the state that had just crashed the app,
    /// and the row stayed for good, named by every `check()`.
    @Test(arguments: ["archive_id = 9, generation = 7", "archive_id = 9, checksum = NULL"])
    func aMarkerOfNoArchiveThatNoChecksumNamesIsTheOnlyArchives(_ damage: String) throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "crashes the app")])
            try restoreAndDie(path)
            try tamper(with: path, "UPDATE crash_marker SET \(damage)")
            let listed = try store.crashMarkers()
            #expect(listed.map(\.archive) == [.main] && listed.map(\.isDamaged) == [true])
            #expect(
                try store.check().map(\.description) == [
                    "archive 'main': a crash marker stored under archive id 9, of no archive, whose values match no "
                        + "archive's: as the store's only archive, its next launch takes it for a restoration of it that died"
                ])
            try expectNextLaunchInvalidatesGeneration1(path)
            #expect(try store.check().isEmpty)
        }
    }

    /// A table of markers that cannot be read is named once: by the check of each archive,
    /// which reads it, and not again by the look for markers of no archive; with no archive
    /// to check, by that look.
    @Test func aMarkerTableThatCannotBeReadIsNamedOnce() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try tamper(with: path, "DROP TABLE crash_marker")
            let dropped = "The store is damaged: its schema does not hold what its migrations made (no such table: crash_marker)."
            #expect(try store.check().map(\.description) == ["a crash marker: \(dropped)"])
            try tamper(with: path, "CREATE TABLE crash_marker (archive_id INTEGER PRIMARY KEY)")
            try makeEngine(store).preserve([Probe("Root")])
            try tamper(with: path, "DROP TABLE crash_marker")
            #expect(try store.check().map(\.description) == ["archive 'main': its crash marker: \(dropped)"])
        }
    }

    /// A marker without a checksum (written before schema v0013) whose recorded start cannot
    /// be read (text that is not UTF-8) is judged by its time, as a marker written before
    /// v0010 is, rather than taken for damage. (With a checksum, that does not match: see
    /// `aMarkerChangedByDamageIsARestorationThatDied`.)
    @Test func markerWhoseRecordedStartIsDamagedIsJudgedByItsTime() throws {
        try withRestorationMarkedAsAnotherProcess { path, store, _, _, sleeper in
            try tamper(with: path, "UPDATE crash_marker SET process_boot = CAST(x'ff' AS TEXT), checksum = NULL")
            #expect(try store.crashMarkers().map(\.processIsRunning) == [true])
            #expect(try store.check().isEmpty)
            let other = try makeEngine(try ArchiveStore(path: path)).restore([Probe("Root")])
            let reason = "another process (\(sleeper.processIdentifier)) is restoring it"
            #expect(other.report.outcome == .refused(reason: reason))
        }
    }

    /// A marker whose columns cannot be read (a value of another type, which only damage
    /// leaves) is a restoration that died, of the newest generation: the crash policy deals
    /// with it and removes it. It stopped every restoration of the archive, at every launch,
    /// saves or not, with an error that says the whole store is damaged. `check()` names it.
    @Test(arguments: ["started_at = 'x'", "process_id = 'x'", "generation = 'x'"])
    func anUnreadableMarkerIsARestorationThatDied(_ change: String) throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "crashes the app")])
            try restoreAndDie(path)
            try tamperBypassingStrict(with: path, table: "crash_marker", "UPDATE crash_marker SET \(change)")
            let column = change.prefix { $0 != " " }
            let problems = try store.check().map(\.description)
            #expect(
                problems.contains(
                    "archive 'main': its crash marker is damaged (column '\(column)' holds a value that is not integer): the "
                        + "archive's next launch takes it for a restoration that died"),
                "\(problems)")
            #expect(try store.hasCrashMarker())
            let listed = try store.crashMarkers()
            #expect(listed.map(\.archive) == [.main] && listed.map(\.generation) == [Generation(1)])
            #expect(listed.map(\.isDamaged) == [true] && listed.map(\.processIsRunning) == [false])
            try expectNextLaunchInvalidatesGeneration1(path)
            #expect(try store.check() == [])
            try makeEngine(store).preserve([Probe("Root", value: "saved again")])
            let root = Probe("Root")
            #expect(try makeEngine(store).restore([root]).isComplete)
            #expect(root.value == "saved again")
        }
    }

    /// A marker whose values damage changed (every one still readable: a bit flipped in its
    /// row read back as generation -125, another process, another time) does not match its
    /// checksum (schema v0013), and is a restoration that died, of the newest generation, as
    /// a marker whose values cannot be read is. Read as it was, generation -125 was
    /// invalidated, which no generation is, and the generation whose restoration died was
    /// restored again; a process that runs kept every restoration refused.
    @Test(arguments: ["generation = -125", "process_id = %running%", "started_at = started_at - 1"])
    func aMarkerChangedByDamageIsARestorationThatDied(_ change: String) throws {
        try withTemporaryStorePath { path in
            try withRunningProcess { running in
                let store = try ArchiveStore(path: path)
                try makeEngine(store).preserve([Probe("Root", value: "crashes the app")])
                try restoreAndDie(path)
                let written = try #require(try store.crashMarkers().first)
                #expect(!written.isDamaged && !written.processIsRunning)
                #expect(try store.check().isEmpty)
                let damaged = change.replacingOccurrences(of: "%running%", with: "\(running.processIdentifier)")
                try tamper(with: path, "UPDATE crash_marker SET \(damaged)")
                #expect(try store.crashMarkers().map(\.isDamaged) == [true])
                #expect(
                    try store.check().map(\.description)
                        == [
                            "archive 'main': its crash marker is damaged (it does not match its checksum): the archive's "
                                + "next launch takes it for a restoration that died"
                        ])
                try expectNextLaunchInvalidatesGeneration1(path)
            }
        }
    }

    /// The id of a process that died restoring may be given to another process, started
    /// later, that runs for hours: that one is no restoration in progress, or no launch would
    /// restore (nor apply the crash policy) until it exits. Told by the start the marker
    /// records, whatever the clock did (here: the marker's time an hour after the process
    /// started, as after a clock stepped back); a marker written before schema v0010 records
    /// none, and is told by its time (a minute before the process started).
    @Test(arguments: [
        ("started_at = started_at + 3600000", true),
        ("started_at = started_at - 60000, process_boot = NULL, process_start = NULL", false),
    ])
    func markerWhoseProcessIDWasGivenToALaterProcessIsARestorationThatDied(_ assignments: String, sealed: Bool) throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "crashes the app")])
            try restoreAndDie(path)
            try withRunningProcess { sleeper in
                try tamper(
                    with: path, "UPDATE crash_marker SET process_id = \(sleeper.processIdentifier), checksum = NULL, \(assignments)")
                // With its checksum, as a marker of now; without, as one written before v0010.
                if sealed { try rewriteMarker(at: path) { _ in } }
                #expect(try store.crashMarkers().map(\.processIsRunning) == [false])
                try expectNextLaunchInvalidatesGeneration1(path)
            }
        }
    }

    /// A marker records the start of the process that wrote it, as the system counts it.
    @Test func aMarkerRecordsItsProcesssStart() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root")])
            let slow = SlowScreen("Root")
            _ = try makeEngine(store).restore([slow])
            let connection = try Connection(filename: path, flags: 1 /* SQLITE_OPEN_READONLY */)
            let boot = try connection.pragmaText("SELECT process_boot FROM crash_marker")
            let ticks = try connection.pragmaInteger("SELECT process_start FROM crash_marker")
            #expect(ProcessStart(boot: boot, ticks: ticks) == ProcessIdentity.start(of: getpid()))
            #expect(ProcessStart.current != nil)
            withExtendedLifetime(slow) {}
        }
    }

    /// A marker with this process's id but no restoration of this process in progress was
    /// left by an earlier process that had the same id (in a container the app may always be
    /// process 1): a restoration that died, not one still running.
    @Test func markerWithThisProcesssIDButNoRestorationHereIsARestorationThatDied() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "crashes the app")])
            // A restoration of this process that completes on this file, so that none is in
            // progress here whatever the file (by its inode) had before: one whose extensions
            // were released without being completed stays in progress.
            #expect(try makeEngine(store).restore([Probe("Root")]).isComplete)
            // The marker as that earlier process left it.
            let pid = ProcessInfo.processInfo.processIdentifier
            try tamper(
                with: path,
                "INSERT INTO crash_marker (archive_id, generation, started_at, process_id) "
                    + "SELECT id, generation, 0, \(pid) FROM archive")
            #expect(try store.hasCrashMarker())
            let listed = try store.crashMarkers()
            #expect(listed.map(\.archive) == [.main] && listed.map(\.generation) == [Generation(1)])
            #expect(listed.map(\.isDamaged) == [false] && listed.map(\.processIsRunning) == [false])
            try expectNextLaunchInvalidatesGeneration1(path)
        }
    }

    /// Completing a restoration removes this process's marker only: a marker another process
    /// wrote on the generation since (its own restoration, begun once this one's marker was
    /// taken for a death) stays, for a crash of that process to be seen.
    @Test func finishingARestorationLeavesAnotherProcesssMarker() throws {
        try withRestorationMarkedAsAnotherProcess { _, store, slow, result, other throws in
            slow.extensions.forEach { $0.complete() }
            #expect(result.isComplete)
            #expect(try store.crashMarkers().map(\.processID) == [Int64(other.processIdentifier)])
        }
    }

    /// Two stores of this process on one file, whose main archive holds generation 1: `first`
    /// runs `meanwhile` while `waiting` runs on another thread with `second`, whose
    /// connection a check of a large archive keeps busy, so that `waiting` has begun (and
    /// waits for the connection) before `meanwhile` begins. Returns once `waiting` has ended.
    private func whileAnotherStoreWaits(
        _ path: String, _ waiting: @escaping @Sendable (ArchiveStore) -> Void,
        meanwhile: (ArchiveStore) throws -> Void
    ) throws {
        let first = try ArchiveStore(path: path)
        let second = try ArchiveStore(path: path)
        try makeEngine(first).preserve([Probe("Root", value: "v")])
        try second.save(try SampleArchives.tree(count: 20_000), header: SampleArchives.header, in: ArchiveName("large"))
        let checking = Thread { _ = try? second.check() }
        checking.start()
        usleep(50_000)
        let thread = Thread { waiting(second) }
        thread.start()
        usleep(50_000)
        try meanwhile(first)
        #expect(!checking.isFinished, "the check ended before `meanwhile` did: nothing was shown")
        while !thread.isFinished { usleep(1_000) }
    }

    /// Two stores of this process restore one archive at once, on two threads: the second
    /// must find the first's restoration in progress. It looked up the restorations in
    /// progress before its transaction, so one that began in between (its marker committed
    /// by then) read as a marker a dead process left, and the generation being restored was
    /// invalidated.
    @Test func aRestorationThatBeginsWhileAnotherStoreOfThisProcessPreparesIsInProgressThere() throws {
        try withTemporaryStorePath { path in
            let outcome = Mutex<RestoreReport.Outcome?>(nil)
            let slow = SlowScreen("Root")
            var inProgress: RestorationResult?
            try whileAnotherStoreWaits(path) { second in
                let result = try? makeEngine(second).restore([Probe("Root")])
                outcome.withLock { $0 = result?.report.outcome }
            } meanwhile: { first in
                inProgress = try makeEngine(first).restore([slow])
            }
            let result = try #require(inProgress)
            #expect(result.report.outcome == .restored && !result.isComplete)
            #expect(outcome.withLock { $0 } == .refused(reason: "its restoration in this process is still in progress"))
            let store = try ArchiveStore(path: path)
            #expect(try store.generations(of: .main).allSatisfy { $0.state == .valid })
            slow.extensions.forEach { $0.complete() }
            #expect(result.isComplete)
            #expect(try makeEngine(store).restore([Probe("Root")]).report.outcome == .restored)
        }
    }

    /// The same for a save by another store of this process: it looked up the restorations
    /// in progress before its transaction, so it did not carry on the marker of one that
    /// began in between, and a death then invalidated the generation restored, not the one
    /// saved during its restoration (R11).
    @Test func aSaveWhileARestorationBeginsInAnotherStoreOfThisProcessCarriesItsMarkerOn() throws {
        try withTemporaryStorePath { path in
            let slow = SlowScreen("Root")
            try whileAnotherStoreWaits(path) { second in
                _ = try? makeEngine(second).preserve([Probe("Root", value: "w")])
            } meanwhile: { first in
                let inProgress = try makeEngine(first).restore([slow])
                #expect(inProgress.report.outcome == .restored && !inProgress.isComplete)
            }
            #expect(try ArchiveStore(path: path).crashMarkers().map(\.generation) == [2])
            // The app dies before the restoration completes.
            try markRestorationDead(at: path)
            let next = try makeEngine(try ArchiveStore(path: path)).restore([Probe("Root")])
            #expect(next.report.outcome == .refused(reason: "generation 2 was invalidated: the app died while restoring it"))
        }
    }

    /// The generation a dead restoration left its marker on may be damaged since: the policy
    /// has nothing to invalidate there (a damaged generation is never restored), and its
    /// damage must not keep the marker, which every launch after read and failed on.
    @Test func markerOnADamagedGenerationIsClearedAndTheNextSaveRestores() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "crashes the app")])
            try restoreAndDie(path)
            try tamper(with: path, "UPDATE generation SET app_version = '12.0' WHERE generation = 1")
            let first = try makeEngine(try ArchiveStore(path: path)).restore([Probe("Root")])
            guard case .failed = first.report.outcome else {
                Issue.record("a damaged generation is not restored: \(first.report.outcome)")
                return
            }
            #expect(try !store.hasCrashMarker())
            try makeEngine(store).preserve([Probe("Root", value: "fine")])
            let next = Probe("Root")
            #expect(try makeEngine(try ArchiveStore(path: path)).restore([next]).report.outcome == .restored)
            #expect(next.value == "fine")
        }
    }

    /// A damaged older generation is no candidate for restoring: it must not stop the
    /// newest's restoration (it did, at every launch, until it was pruned), nor be fallen back
    /// to.
    @Test(arguments: [CrashPolicy.discard, .fallBackToKnownGood])
    func aDamagedOlderGenerationDoesNotStopTheNewestsRestoration(policy: CrashPolicy) throws {
        try withTemporaryStorePath { path in
            let configuration = ArchiveStore.Configuration(retainedGenerations: 3, crashPolicy: policy)
            let store = try ArchiveStore(path: path, configuration: configuration)
            try makeEngine(store).preserve([Probe("Root", value: "first")])
            #expect(try makeEngine(store).restore([Probe("Root")]).isComplete, "generation 1 restored cleanly")
            try store.save(
                [ArchivedNode(path: try RestorationPath("Root"), className: "Probe", state: try Self.state("second"))],
                header: SaveHeader(appVersion: "11.0", appBuild: "1024", platform: "linux", idiom: "phone"))
            try tamper(with: path, "UPDATE generation SET app_version = '12.0' WHERE generation = 1")
            let root = Probe("Root")
            #expect(try makeEngine(try ArchiveStore(path: path, configuration: configuration)).restore([root]).report.outcome == .restored)
            #expect(root.value == "second")
            // The newest invalidated: the damaged older one is not fallen back to.
            try restoreAndDie(path, configuration: configuration)
            let after = Probe("Root")
            let outcome = try makeEngine(try ArchiveStore(path: path, configuration: configuration)).restore([after]).report.outcome
            #expect(outcome == .refused(reason: "generation 2 was invalidated: the app died while restoring it"))
            #expect(after.decodeCount == 0)
        }
    }

    private static func state(_ value: String) throws -> [UInt8] {
        let coder = StateEncoder()
        try coder.encode(value, forKey: "value")
        return try coder.encodedBlob()
    }

    /// Also when the second store names the file another way (`/./` in its path).
    @Test(arguments: [false, true])
    func restorationStillInProgressInThisProcessIsNotACrash(otherSpelling: Bool) throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root")])
            let slow = SlowScreen("Root")
            let first = try makeEngine(store).restore([slow])
            #expect(!first.isComplete)
            let secondPath = otherSpelling ? spelledAnotherWay(path) : path
            let second = try makeEngine(try ArchiveStore(path: secondPath)).restore([Probe("Root")])
            #expect(second.report.outcome == .refused(reason: "its restoration in this process is still in progress"))
            #expect(try store.header()?.state == .valid)
            slow.extensions.forEach { $0.complete() }
            #expect(first.isComplete)
            #expect(try makeEngine(store).restore([Probe("Root")]).report.outcome == .restored)
        }
    }

    /// Saves generation 1 holding `value`, restores it with an extension left pending (a page
    /// still loading), and saves generation 2 during that restoration. Returns the loading
    /// screen (keep it: completing its extensions ends the restoration) and the restoration.
    private func restoreAndSaveDuringIt(
        _ store: ArchiveStore, value: String = "first"
    ) throws -> (SlowScreen, RestorationResult) {
        try makeEngine(store).preserve([Probe("Root", value: value)])
        let slow = SlowScreen("Root")
        let engine = try makeEngine(store)
        let result = try engine.restore([slow])
        #expect(result.report.outcome == .restored && !result.isComplete)
        slow.value = "saved while the page loads"
        #expect(try engine.preserve([slow]).save?.generation == 2)
        // The marker moved to the new generation, written whole again (its checksum too).
        let carried = try store.crashMarkers()
        #expect(carried.map(\.generation) == [2] && carried.map(\.isDamaged) == [false])
        return (slow, result)
    }

    /// The app saves while its restoration is still in progress (an object's extension has
    /// not completed: a page still loading), then dies. The generation it saved holds the
    /// state whose restoration it did not survive, the page that was loading: the crash rule
    /// applies to it, as UIKit deletes whatever state it has after a crash during
    /// restoration. Otherwise the next launch would restore it and die the same way, and
    /// under one retained generation, with the restored one pruned, nothing would be
    /// invalidated at all.
    @Test(arguments: [
        (CrashPolicy.discard, 2), (.discard, 1), (.fallBackToKnownGood, 2), (.retry(attempts: 1), 2),
    ])
    func R11_aGenerationSavedWhileRestorationIsInProgressIsTheOneInvalidated(policy: CrashPolicy, retained: Int) throws {
        try withTemporaryStorePath { path in
            let configuration = ArchiveStore.Configuration(retainedGenerations: retained, crashPolicy: policy)
            let store = try ArchiveStore(path: path, configuration: configuration)
            let (slow, result) = try restoreAndSaveDuringIt(store, value: "loads a page that crashes the app")
            try markRestorationDead(at: path)

            let root = Probe("Root")
            let next = try makeEngine(try ArchiveStore(path: path, configuration: configuration)).restore([root])
            #expect(next.report.outcome == .refused(reason: "generation 2 was invalidated: the app died while restoring it"))
            #expect(root.decodeCount == 0)
            #expect(try !store.hasCrashMarker())
            withExtendedLifetime((slow, result)) {}  // the page still loading all along
        }
    }

    /// An extension released without being completed (a programming error, logged) leaves
    /// its restoration in progress for the rest of the process, but its work is gone with it:
    /// nothing of it can crash the app any more. A save after that does not carry the marker
    /// on, so a later death of the process (killed in the background, as is normal) costs the
    /// generation restored, not the one saved since.
    @Test func aSaveAfterAnExtensionWasAbandonedLeavesTheMarkerWhereItIs() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "first")])
            let engine = try makeEngine(store)
            do {
                let slow = SlowScreen("Root")
                let result = try engine.restore([slow])
                #expect(!result.isComplete)
            }  // the screen, and its extension, released
            try engine.preserve([Probe("Root", value: "saved after")])
            #expect(try store.crashMarkers().map(\.generation) == [1])
            try markRestorationDead(at: path)

            let root = Probe("Root")
            let next = try makeEngine(try ArchiveStore(path: path)).restore([root])
            #expect(next.report.outcome == .restored && next.report.generation == 2)
            #expect(root.value == "saved after")
        }
    }

    /// A restoration of this process still in progress when the store is erased, and then
    /// another restoration of the archive saved since: the first one completing is not the
    /// second one's end. It removed the marker, which this process's marker was, and the
    /// second restoration ran unguarded: a death then went unnoticed (R11).
    @Test func aRestorationThatEndsAfterAnEraseLeavesTheNextRestorationsMarker() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "before the erase")])
            let first = SlowScreen("Root")
            let firstResult = try makeEngine(store).restore([first])
            #expect(!firstResult.isComplete)

            try ArchiveStore.erase(at: path)
            try makeEngine(store).preserve([Probe("Root", value: "after the erase")])
            let second = SlowScreen("Root")
            let secondResult = try makeEngine(store).restore([second])
            #expect(secondResult.report.outcome == .restored && !secondResult.isComplete)
            #expect(second.value == "after the erase")

            first.extensions.forEach { $0.complete() }
            #expect(firstResult.isComplete)
            #expect(try store.crashMarkers().map(\.generation) == [1])
            #expect(try store.generations().map(\.restoredCleanly) == [false])
            #expect(try store.restoreReports().isEmpty, "the first report is about a store erased since")
            // The second restoration is still in progress, then ends as any other.
            #expect(
                try makeEngine(store).restore([Probe("Root")]).report.outcome
                    == .refused(reason: "its restoration in this process is still in progress"))
            second.extensions.forEach { $0.complete() }
            #expect(secondResult.isComplete)
            #expect(try !store.hasCrashMarker())
            #expect(try store.generations().map(\.restoredCleanly) == [true])
        }
    }

    /// Another process (another instance of the app) began restoring the archive while this
    /// one's restore gate decided: both had found no marker. This one's start replaced the
    /// other's marker, and the other ran unguarded (its death would have gone unnoticed).
    /// Now it is refused, writing nothing.
    @Test func aRestorationThatAnotherProcessBeganFirstIsRefused() throws {
        try withTemporaryStorePath { path in
            try withRunningProcess { other in
                let processID = Int64(other.processIdentifier)
                try expectRefusedAtItsStart(
                    path, besideAMarkerOf: processID, saying: "another process (\(processID)) is restoring it")
            }
        }
    }

    /// The same when that process has died by then: the start is refused all the same, and
    /// the next restoration applies the crash policy to the marker.
    @Test func aRestorationThatAProcessNowDeadBeganFirstIsRefusedThenJudged() throws {
        try withTemporaryStorePath { path in
            let processID = Int64(try deadProcessID())
            try expectRefusedAtItsStart(
                path, besideAMarkerOf: processID,
                saying: "a restoration of another process (\(processID)) died as this one began")
            #expect(
                try makeEngine(try ArchiveStore(path: path)).restore([Probe("Root")]).report.outcome
                    == .refused(reason: "generation 1 was invalidated: the app died while restoring it"))
        }
    }

    /// The same with a marker that cannot be read: refused without naming a process (it named
    /// process 0), and the next restoration takes it for one that died.
    @Test func aRestorationBesideAnUnreadableMarkerThatAppearedIsRefusedThenJudged() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "saved")])
            let engine = try makeEngine(store)
            engine.restoreGate = { header, app in
                #expect(throws: Never.self) {
                    try tamper(
                        with: path,
                        "INSERT INTO crash_marker (archive_id, generation, started_at, process_id) SELECT id, 1, 5, \(try deadProcessID()) FROM archive")
                    try tamperBypassingStrict(with: path, table: "crash_marker", "UPDATE crash_marker SET started_at = 'x'")
                }
                return .standard(for: header, app: app)
            }
            let root = Probe("Root")
            #expect(
                try engine.restore([root]).report.outcome
                    == .refused(reason: "a restoration whose crash marker cannot be read died as this one began"))
            #expect(root.decodeCount == 0)
            try expectNextLaunchInvalidatesGeneration1(path)
        }
    }

    /// A restoration that invalidates a generation whose restoration died, while another
    /// thread records the store's first event: the invalidation committed after that event
    /// belongs to the launch it started, as ``ArchiveStore/launches()`` counts it, not to none.
    @Test func anInvalidationCommittedAfterTheLaunchStartedOnAnotherThreadIsThatLaunchs() throws {
        try withTemporaryStorePath { path in
            let failures = Mutex<[String]>([])
            for attempt in 0..<40 {
                try makeEngine(try ArchiveStore(path: path)).preserve([Probe("Root", value: "\(attempt)")])
                try restoreAndDie(path)
                let store = try ArchiveStore(path: path)
                let started = DispatchSemaphore(value: 0)
                let recorded = DispatchSemaphore(value: 0)
                let launchEntry = Mutex<JournalEntry?>(nil)
                Thread {
                    started.signal()
                    do {
                        let entry = try store.record(.willFinishLaunching)
                        launchEntry.withLock { $0 = entry }
                    } catch { failures.withLock { $0.append("\(error)") } }
                    recorded.signal()
                }.start()
                started.wait()
                let outcome = try makeEngine(store).restore([Probe("Root")]).report.outcome
                recorded.wait()
                guard case .refused = outcome, let launch = launchEntry.withLock({ $0 }) else {
                    Issue.record("attempt \(attempt): \(outcome), the launch \(String(describing: launchEntry.withLock { $0 }))")
                    continue
                }
                for entry in try store.journal() where entry.sequence > launch.sequence {
                    guard case .invalidated = entry.kind, entry.launch != launch.launch else { continue }
                    failures.withLock {
                        $0.append("\(entry.kind) in launch \(String(describing: entry.launch)), not \(String(describing: launch.launch))")
                    }
                }
                try store.record(.didEnterBackground)
            }
            #expect(failures.withLock { $0 }.isEmpty)
        }
    }

    /// Restores generation 1, saved at `path`, while, as its restore gate decides, another
    /// process's marker (`processID`'s) appears: the start must be refused with `reason`,
    /// writing nothing.
    private func expectRefusedAtItsStart(
        _ path: String, besideAMarkerOf processID: Int64, saying reason: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let store = try ArchiveStore(path: path)
        try makeEngine(store).preserve([Probe("Root", value: "saved")])
        let engine = try makeEngine(store)
        engine.restoreGate = { header, app in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(throws: Never.self, sourceLocation: sourceLocation) {
                try tamper(
                    with: path,
                    "INSERT INTO crash_marker (archive_id, generation, started_at, process_id) SELECT id, 1, \(now), \(processID) FROM archive"
                )
            }
            return .standard(for: header, app: app)
        }
        let root = Probe("Root")
        #expect(try engine.restore([root]).report.outcome == .refused(reason: reason), sourceLocation: sourceLocation)
        #expect(root.decodeCount == 0, sourceLocation: sourceLocation)
        #expect(try store.crashMarkers().map(\.processID) == [processID], sourceLocation: sourceLocation)
        #expect(try store.generations().map(\.restoreAttempts) == [0], sourceLocation: sourceLocation)
    }

    /// A restoration that completes after the app saved during it ends as any other: its
    /// marker goes, the generation it restored is known good, and the generation saved
    /// meanwhile is restored at the next launch.
    @Test func aRestorationCompletedAfterASaveDuringItEndsAsAnyOther() throws {
        try withTemporaryStorePath { path in
            let configuration = ArchiveStore.Configuration(crashPolicy: .retry(attempts: 1))
            let store = try ArchiveStore(path: path, configuration: configuration)
            let (slow, result) = try restoreAndSaveDuringIt(store)
            slow.extensions.forEach { $0.complete() }
            #expect(result.isComplete)
            #expect(try !store.hasCrashMarker())
            let generations = try store.generations()
            #expect(generations.map(\.restoredCleanly) == [false, true])
            #expect(generations.map(\.restoreAttempts) == [0, 0])

            let root = Probe("Root")
            let next = try makeEngine(try ArchiveStore(path: path, configuration: configuration)).restore([root])
            #expect(next.report.outcome == .restored && next.report.generation == 2)
            #expect(root.value == "saved while the page loads")
        }
    }

    /// Retaining one generation, the save during the restoration prunes the generation
    /// restored. Completing then still ends the restoration: the marker goes and the report
    /// is kept, though no generation is left to mark known good.
    @Test func aRestorationWhoseGenerationASaveDuringItPrunedStillEnds() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path, configuration: .init(retainedGenerations: 1))
            let (slow, result) = try restoreAndSaveDuringIt(store)
            #expect(try store.generations().map(\.generation) == [2])
            slow.extensions.forEach { $0.complete() }
            #expect(result.isComplete)
            #expect(try !store.hasCrashMarker())
            #expect(try store.restoreReports().map(\.generation) == [1])
            #expect(try store.generations().map(\.restoreAttempts) == [0])
        }
    }

    @Test func retryPolicyNeedsAnAttempt() throws {
        _ = try withTemporaryStorePath { path in
            #expect(throws: ArchiveStoreError.invalidConfiguration("a retry crash policy needs at least 1 attempt")) {
                try ArchiveStore(path: path, configuration: .init(crashPolicy: .retry(attempts: 0)))
            }
        }
    }

    /// A read-only store cannot deal with the marker a dead restoration left, but it decides
    /// what a read-write launch would, without writing: the generation that died is not
    /// restored under `discard` (R11), the known good one is under `fallBackToKnownGood`,
    /// and one with attempts left is under `retry`. It threw ``ArchiveStoreError/readOnly``.
    @Test(arguments: [CrashPolicy.discard, .fallBackToKnownGood, .retry(attempts: 2)])
    func aReadOnlyStoreDecidesOnAMarkerADeadRestorationLeftWithoutWriting(policy: CrashPolicy) throws {
        try withKnownGoodThenADeadGeneration { path, _, _ in
            let before = fileBytes(path)
            let store = try ArchiveStore(path: path, mode: .readOnly, configuration: .init(crashPolicy: policy))
            let root = Probe("Root")
            let result = try makeEngine(store).restore([root])
            switch policy {
            case .discard:
                #expect(
                    result.report.outcome
                        == .refused(reason: "the app died while restoring generation 2, which a read-write launch invalidates"))
                #expect(root.decodeCount == 0)
            case .fallBackToKnownGood:
                #expect(result.report.outcome == .restored && result.report.generation == 1 && root.value == "good")
            default:
                #expect(result.report.outcome == .restored && result.report.generation == 2 && root.value == "bad")
            }
            #expect(try store.crashMarkers().map(\.generation) == [2])
            #expect(fileBytes(path) == before)
        }
    }
}

extension ArchiveState {
    var isValid: Bool { self == .valid }
}

@Suite("Engine on a read-only store")
struct ReadOnlyEngineTests {
    @Test func readOnlyStoreRestoresWithoutWritingAndRefusesToSave() throws {
        try withTemporaryStorePath { path in
            try makeEngine(try ArchiveStore(path: path)).preserve([Probe("Root", value: "saved")])
            let before = fileBytes(path)
            let store = try ArchiveStore(path: path, mode: .readOnly)
            let root = Probe("Root")
            let result = try makeEngine(store).restore([root])
            #expect(result.report.outcome == .restored && result.isComplete && root.value == "saved")
            // No crash marker, no report: a read-only store is never written.
            #expect(try !store.hasCrashMarker())
            #expect(try store.restoreReports().isEmpty)
            #expect(fileBytes(path) == before)
            #expect(throws: RestorationError.store(.readOnly)) { try makeEngine(store).preserve([root]) }
        }
    }
}
