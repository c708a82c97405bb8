import Examples
import Foundation
import Logging
import RestorationArchive
import TestSupport

/// Threads of one process using one store at once, as an app's scenes, its background work and
/// a look at the store (a debug screen, a tool built in) do: each thread has a read-write store
/// of its own and a read-only one, and shares a third with the others; they save full and
/// incremental trees into three archives, read them (newest and retained, through each store,
/// and through read-only stores opened for one read), discard them, record lifecycle events,
/// live short launches of their own, restore the example app's screens through the engine and
/// preserve them, preserve screens of their own again and again through one engine, check the
/// store, read its journal, reports and footprint, and now and then erase it, at random for a
/// while. Every generation of the three archives carries its content's digest in its header.
/// Each trial runs under a crash policy drawn from ``crashPolicies`` (half of them judge
/// launches, `discardAfterForegroundDeath`), and no launch or restoration dies: no generation
/// may be invalidated.
enum Threads {
    static let archives = ["main", "scene-2", "scene-3"]
    /// The archive the example app's screens are restored from and preserved into, through
    /// the engine, with a crash marker during each restoration.
    static let appArchive = "app"

    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("threads")
        let calls = Guarded<[String: Int]>([:])
        for index in 0..<scale.trials(quick: 8, full: 40) {
            let seeds = (0..<4).map { _ in random.next() }
            let policy = crashPolicies[Int.random(in: 0..<crashPolicies.count, using: &random)]
            scenario.trial("trial \(index) (\(policy))") { trial in
                try withTemporaryDirectory { directory in
                    let saved = Guarded<Set<UInt64>>([])
                    let problems = Guarded<[String]>([])
                    let race = try Race(
                        path: directory + "/store.sqlite", crashPolicy: policy, deadline: Date().addingTimeInterval(1.5),
                        saving: { digest in saved.withLock { _ = $0.insert(digest) } },
                        failing: { problem in problems.withLock { if $0.count < 20 { $0.append(problem) } } },
                        counting: { call in calls.withLock { $0[call, default: 0] += 1 } },
                        // No launch dies: each store records that its app terminates before it is
                        // released, and each restoration completes.
                        invalidating: { warning in
                            problems.withLock { $0.append("a generation was invalidated, no launch dead: \(warning)") }
                        })
                    race.run(seeds: seeds)
                    try race.finalCheck(saved: saved.withLock { $0 }, trial: &trial)
                    for problem in problems.withLock({ $0 }) { trial.fail(problem) }
                }
            }
        }
        let counts = calls.withLock { $0 }
        scenario.remark(
            "calls: " + counts.listed { name, count in "\(name) \(count)" })
        return scenario
    }

    /// What the threads of one process share in a trial: of this scenario, or of a child
    /// process of `processes`, which tells its parent what it saved and found wrong.
    final class Race: Sendable {
        let path: String
        /// The stores' configuration: ``Threads/configuration`` under the trial's crash policy.
        let configuration: ArchiveStore.Configuration
        let shared: ArchiveStore
        let deadline: Date
        /// Taken by an erase, and from an incremental save's read of its base to the save:
        /// changes computed before an erase must not be saved after it (a base is known by its
        /// number, which an erase starts again); and from an engine's save to the read that
        /// checks it, so that the generation read is the one saved.
        let eraseGate: EraseGate
        /// Told each tree's digest before it is saved (the newest generation must be one of them).
        private let saving: @Sendable (UInt64) -> Void
        /// Told what went wrong.
        private let failing: @Sendable (String) -> Void
        /// Told each call made, by name.
        private let counting: @Sendable (String) -> Void
        /// The stores' logger, which tells `invalidating` each generation invalidated.
        let logger: Logger

        init(
            path: String, crashPolicy: CrashPolicy, deadline: Date, saving: @escaping @Sendable (UInt64) -> Void,
            failing: @escaping @Sendable (String) -> Void, counting: @escaping @Sendable (String) -> Void,
            invalidating: @escaping @Sendable (String) -> Void
        ) throws {
            self.path = path
            var configuration = Threads.configuration
            configuration.crashPolicy = crashPolicy
            self.configuration = configuration
            logger = Logger(label: "race") { _ in Invalidations(told: invalidating) }
            shared = try ArchiveStore(path: path, configuration: configuration, logger: logger)
            self.deadline = deadline
            eraseGate = EraseGate(path: path + ".erase-gate")
            self.saving = saving
            self.failing = failing
            self.counting = counting
        }

        func saved(_ tree: [ArchivedNode]) { saving(Content.digest(tree)) }

        func fail(_ problem: String) { failing(problem) }

        /// A read must be a whole generation: its nodes are what its header says.
        func expectWhole(_ snapshot: ArchiveSnapshot?, _ read: String) {
            guard let snapshot else { return }
            guard case .int(let digest)? = snapshot.header.appValues["digest"] else {
                return fail("\(read): generation \(snapshot.header.generation) has no digest in its header")
            }
            if UInt64(bitPattern: digest) != Content.digest(snapshot.nodes) {
                fail("\(read): generation \(snapshot.header.generation) is not the tree its header names")
            }
        }

        /// Runs a thread per seed until the deadline, each with a read-write store of its own
        /// and a read-only one besides the shared store, making calls at random. Each
        /// read-write store records that its app terminates before it is released, so that no
        /// launch that ends is taken for a death.
        func run(seeds: [UInt64]) {
            let finished = DispatchGroup()
            for seed in seeds {
                finished.enter()
                // Threads of their own: the shared ones would run the calls one after another.
                Thread {
                    defer { finished.leave() }
                    var random = SeededGenerator(seed: seed)
                    do {
                        let own = try ArchiveStore(path: self.path, configuration: self.configuration, logger: self.logger)
                        let reader = try ArchiveStore(path: self.path, mode: .readOnly, configuration: self.configuration)
                        let screens = try Screens(store: own, scratchPath: "\(self.path)-scratch-\(getpid())-\(seed)")
                        while Date() < self.deadline {
                            self.counting(try step(self, own: own, reader: reader, screens: screens, random: &random))
                        }
                        screens.finishLoading()
                        try own.record(.willTerminate)
                    } catch {
                        self.fail("a thread stopped: \(error)")
                    }
                }.start()
            }
            finished.wait()
            do {
                try shared.record(.willTerminate)
            } catch {
                fail("the shared store's last event: \(error)")
            }
        }

        /// Once every call is done: a sound store whose archives (but the app's) each hold a
        /// whole tree of `saved`.
        func finalCheck(saved: Set<UInt64>, trial: inout Trial) throws {
            let problems = try shared.check()
            trial.expect(problems.isEmpty, "check() at the end: \(problems)")
            // The app's archive holds what the engine saved, without a digest.
            for summary in try shared.archives() where !summary.generations.isEmpty && summary.name.rawValue != appArchive {
                let snapshot = try shared.snapshot(of: summary.name)
                expectWhole(snapshot, "the end's read of '\(summary.name)'")
                if let snapshot {
                    trial.expect(saved.contains(Content.digest(snapshot.nodes)), "'\(summary.name)' holds a tree never saved")
                }
            }
        }
    }

    /// A lock on a file beside the store (`flock`, on a descriptor of its own at each use), so
    /// that it holds between threads and between processes alike, and a process killed while
    /// holding it lets it go.
    struct EraseGate: Sendable {
        let path: String

        /// Runs `body` holding the gate alone (an erase).
        func exclusively<Result>(_ body: () throws -> Result) throws -> Result {
            try holding(LOCK_EX, body)
        }

        /// Runs `body` holding the gate with others that do not erase (an incremental save, a
        /// save and its check).
        func shared<Result>(_ body: () throws -> Result) throws -> Result {
            try holding(LOCK_SH, body)
        }

        private func holding<Result>(_ operation: Int32, _ body: () throws -> Result) throws -> Result {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw GateError(operation: "open", errno: errno) }
            defer { close(descriptor) }
            while flock(descriptor, operation) != 0 {
                guard errno == EINTR else { throw GateError(operation: "flock", errno: errno) }
            }
            return try body()
        }

        struct GateError: Error {
            let operation: String
            let errno: Int32
        }
    }

    /// A busy timeout no call of a trial waits out (a discard compacting the store, readers
    /// holding a truncation back); a trial's crash policy is one of ``crashPolicies``.
    static let configuration = ArchiveStore.Configuration(busyTimeout: .seconds(30))

    /// The crash policies trials run under, one at random: half of them judge launches (R15),
    /// the others restorations that died only (R11).
    static let crashPolicies: [CrashPolicy] = [
        .discardAfterForegroundDeath, .discardAfterForegroundDeath, .discard, .fallBackToKnownGood, .retry(attempts: 2),
    ]

    /// An engine of the example app on `store`.
    private static func appEngine(on store: ArchiveStore) throws(RestorationError) -> RestorationEngine {
        try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry())
    }

    /// A launch of the example app: its screens restored from ``appArchive`` through the
    /// engine (a crash marker is committed before the first node is decoded, and removed once
    /// its pages have loaded: with `screens`, half the time only at the thread's next
    /// restoration or its end), a session of use now and then, and its screens preserved.
    /// Returns what the restoration did, for the note.
    private static func restoreAndPreserve(
        _ race: Race, store: ArchiveStore, loadingLater screens: Screens? = nil, random: inout SeededGenerator
    ) throws -> String {
        do {
            screens?.finishLoading()
            let app = OrderApp()
            let engine = try appEngine(on: store)
            let restored = try engine.restore(app.roots, from: ArchiveName(appArchive))
            // Half the time the pages load later (after other calls of the thread): the
            // restoration, and its crash marker, last until then, and a save meanwhile carries
            // the marker on.
            let later = screens != nil && !restored.isComplete && Bool.random(using: &random)
            if !later { app.finishLoadingPages() }
            if Bool.random(using: &random) { app.simulateSession() }
            try engine.preserve(app.roots, in: ArchiveName(appArchive))
            if later { screens?.loading = (app, engine) }
            switch restored.report.outcome {
            case .restored: return later ? "restored, pages loading" : "restored"
            case .nothingToRestore: return "nothing to restore"
            case .refused: return "refused"
            case .failed(let reason):
                race.fail("a restoration failed: \(reason)")
                return "failed"
            }
        } catch RestorationError.store(let error) {
            throw error
        }
    }

    /// A thread's example app, preserved again and again by one engine on the thread's own
    /// store (incrementally, when few screens changed since its last save or restoration), and
    /// a store of its own that a new engine saves the same screens into in full, for comparison;
    /// and the thread's restoration whose pages are still loading, if any.
    final class Screens {
        let app = OrderApp()
        let engine: RestorationEngine
        let scratch: ArchiveStore

        init(store: ArchiveStore, scratchPath: String) throws {
            engine = try appEngine(on: store)
            scratch = try ArchiveStore(path: scratchPath)
        }

        /// A restoration of the app's screens whose pages are still loading (R10): it is in
        /// progress, its crash marker in the store, until ``finishLoading()``.
        var loading: (app: OrderApp, engine: RestorationEngine)?

        /// Completes the restoration whose pages are loading, if any.
        func finishLoading() {
            loading?.app.finishLoadingPages()
            loading = nil
        }

        /// What a user changes between two saves: a field, a scroll position, the tab, or a
        /// whole session (screens pushed, pages opened).
        func change(using random: inout SeededGenerator) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: app.profile.editedText = "text \(random.next() % 1_000)"
            case 1: (app.menuNavigation.screens.first as? CategoryList)?.scrollOffset = Double(random.next() % 1_000)
            case 2: app.tabs.selectedIndex = Int.random(in: 0..<4, using: &random)
            default: app.simulateSession()
            }
        }
    }

    /// Changes the thread's screens and preserves them into ``appArchive`` through its engine,
    /// which saves only what changed since its last save when it can. Then the generation saved
    /// must hold what a full save of the same screens holds: changes saved on a base another
    /// thread or process replaced (its save, its erase and saves up to the same number) would
    /// mix two trees. Held with the erase gate, so that the generation read is the one saved
    /// (pruned by other saves since, it is not read). Returns the save's kind, for the note.
    private static func preserveAgain(_ race: Race, _ screens: Screens, random: inout SeededGenerator) throws -> String {
        screens.change(using: &random)
        let archive = try ArchiveName(appArchive)
        return try race.eraseGate.shared {
            do {
                guard let save = try screens.engine.preserve(screens.app.roots, in: archive).save else { return "vetoed" }
                let saved: ArchiveSnapshot?
                do {
                    saved = try race.shared.snapshot(of: archive, generation: save.generation)
                } catch ArchiveStoreError.generationNotFound {
                    return "\(save.kind), pruned before its read"
                }
                guard let saved else { return "\(save.kind), pruned before its read" }
                let full = try appEngine(on: screens.scratch)
                try full.preserve(screens.app.roots, in: archive)
                let expected = try screens.scratch.snapshot(of: archive)?.nodes ?? []
                if Set(saved.nodes) != Set(expected) {
                    let differing = Set(saved.nodes).symmetricDifference(expected).map(\.path.description).sorted()
                    race.fail(
                        "a \(save.kind) preservation saved generation \(save.generation) of '\(archive)' unlike the screens: "
                            + differing.prefix(6).joined(separator: ", "))
                }
                return "\(save.kind)"
            } catch RestorationError.store(let error) {
                throw error
            }
        }
    }

    /// A log handler telling each generation invalidated (a launch or a restoration taken for a death).
    private struct Invalidations: LogHandler {
        let told: @Sendable (String) -> Void
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .warning

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let message = event.message.description
            // A launch taken for a death, or a restoration.
            if message.hasPrefix("Invalidated") || message.hasPrefix("The app died while restoring") { told(message) }
        }
    }

    /// Makes one call at random; returns its name. Throws only what no call may throw.
    private static func step(
        _ race: Race, own: ArchiveStore, reader: ArchiveStore, screens: Screens, random: inout SeededGenerator
    ) throws -> String {
        let store = Bool.random(using: &random) ? race.shared : own
        let archive = try ArchiveName(archives[Int.random(in: 0..<archives.count, using: &random)])
        let call = Int.random(in: 0..<42, using: &random)
        var name = "a call"
        do {
            switch call {
            case 0..<8:
                name = "save"
                let tree = try Content.tree(count: Int.random(in: 1...60, using: &random), stateSize: 8...120, using: &random)
                race.saved(tree)
                try store.save(tree, header: header(of: tree), in: archive)
            case 8..<12:
                name = "saveChanges"
                try race.eraseGate.shared {
                    guard let base = try store.snapshot(of: archive) else { return }
                    race.expectWhole(base, "a read before an incremental save")
                    let change = try Content.change(base.nodes, using: &random)
                    race.saved(change.tree)
                    try store.saveChanges(
                        change.changed, removing: change.removed, basedOn: base.header.generation,
                        header: header(of: change.tree), in: archive)
                }
            case 12..<18:
                name = "snapshot"
                race.expectWhole(try store.snapshot(of: archive), "a read")
            case 18..<21:
                name = "read-only open"
                let look = try ArchiveStore(path: race.path, mode: .readOnly, configuration: race.configuration, logger: race.logger)
                race.expectWhole(try look.snapshot(of: archive), "a read-only open's read")
            case 21..<24:
                name = "held read-only read"
                race.expectWhole(try reader.snapshot(of: archive), "a held read-only store's read")
            case 24..<26:
                name = "retained generation"
                let generations = try store.archives().first { $0.name == archive }?.generations ?? []
                guard let generation = generations.randomElement(using: &random) else { break }
                race.expectWhole(try store.snapshot(of: archive, generation: generation.generation), "a retained read")
            case 26..<28:
                name = "discard"
                _ = try store.discard(archive, reason: "The scene's window was closed")
            case 28..<30:
                name = "record"
                let events: [LifecycleEvent] = [.willResignActive, .didEnterBackground, .willEnterForeground, .didBecomeActive]
                _ = try store.record(events[Int.random(in: 0..<events.count, using: &random)])
            case 30:
                // A short launch of its own (an extension's), which judges the launch before it;
                // half of them restore first, which starts the launch, and record
                // willFinishLaunching after (R9's order reversed).
                name = "short launch"
                let launch = try ArchiveStore(path: race.path, configuration: race.configuration, logger: race.logger)
                var restoring: (any Error)? = nil
                if Bool.random(using: &random) {
                    name = "short launch restoring first"
                    do { _ = try restoreAndPreserve(race, store: launch, random: &random) } catch { restoring = error }
                }
                try launch.record(.willFinishLaunching)
                try launch.record(.didBecomeActive)
                try launch.record(.willTerminate)
                if let restoring { throw restoring }
            case 31..<33:
                name = "check"
                let problems = try store.check()
                if !problems.isEmpty { race.fail("check(): \(problems)") }
            case 33:
                name = "erase"
                try race.eraseGate.exclusively {
                    try ArchiveStore.erase(at: race.path, busyTimeout: race.configuration.busyTimeout)
                }
            case 34..<36:
                name = "journal"
                _ = try store.previousLaunch()
                _ = try store.launches()
            case 36..<38:
                name = "restoration"  // what a failure names; the count names what it did
                name += " (\(try restoreAndPreserve(race, store: store, loadingLater: screens, random: &random)))"
            case 40..<42:
                name = "preservation"
                name += " (\(try preserveAgain(race, screens, random: &random)))"
            default:
                name = "reports and footprint"
                _ = try store.restoreReports(of: archive)
                _ = try store.footprint()
            }
        } catch ArchiveStoreError.archiveNotFound, ArchiveStoreError.generationNotFound,
            ArchiveStoreError.generationConflict
        {
            // Another thread discarded, pruned, erased or saved in between.
            return "raced"
        } catch ArchiveStoreError.database(let error)
            where error.resultCode == .busy && ["read-only open", "held read-only read"].contains(name)
        {
            // The file changed under five reads in a row (a read-only store then gives up).
            return "read-only busy"
        } catch {
            race.fail("\(name) of '\(archive)': \(error)")
            return "failed"
        }
        return name
    }

    /// A value under a lock. `Synchronization.Mutex` would do, but ThreadSanitizer does not see
    /// its lock (the standard library is not instrumented) and reports each contended use.
    final class Guarded<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value

        init(_ value: Value) { self.value = value }

        func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
            lock.lock()
            defer { lock.unlock() }
            return try body(&value)
        }
    }

    /// A header naming `tree`'s digest.
    private static func header(of tree: [ArchivedNode]) -> SaveHeader {
        var header = Content.header
        header.appValues["digest"] = .int(Int64(bitPattern: Content.digest(tree)))
        return header
    }
}
