import CSQLite
import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

@Suite("Erasing a store an app cannot use")
struct StoreErasingTests {
    /// The state every node is saved with here: bytes no SQLite page holds by chance, looked
    /// for in the files after the erase.
    static let state = [UInt8](repeating: 0xA7, count: 48)

    static func savedStore(at path: String) throws {
        try ArchiveStore(path: path).save(try SampleArchives.tree(count: 40, stateSize: 48, fill: 0xA7), header: SampleArchives.header)
    }

    /// What stops an app using the store at `path`, if anything: opening it, reading back
    /// what ``savedStore(at:)`` saved, or saving.
    static func firstError(_ path: String) -> ArchiveStoreError? {
        do {
            let store = try ArchiveStore(path: path)
            let count = try store.snapshot()?.nodes.count
            guard count == 40 else {
                Issue.record("the store read back \(count.map(String.init) ?? "no") nodes without an error, not 40")
                return nil
            }
            try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header)
            return nil
        } catch let error as ArchiveStoreError {
            return error
        } catch {
            Issue.record("\(error)")
            return nil
        }
    }

    /// What makes a store unusable, each as an app would meet it: at opening
    /// (`notAStore`, `schemaTooNew`), at the first read (`damagedStore`) or at the first save.
    @Test(arguments: [
        "sound", "malformed-pages", "cut-short", "first-page-zeroed", "newer-schema", "schema-text", "format-version",
        "text-encoding-utf16le", "text-encoding-utf16be",
    ])
    func anErasedStoreIsEmptyAndSavesAgain(damage: String) throws {
        try withTemporaryStorePath { path in
            try Self.savedStore(at: path)
            switch damage {
            case "sound": break
            case "malformed-pages":
                let count = try #require(fileBytes(path)?.count)
                #expect(count > 4 * 4096)
                try overwrite(path, from: 2 * 4096, with: (2 * 4096..<count).map { UInt8(truncatingIfNeeded: $0 &* 131) })
            case "cut-short": #expect(truncate(path, 10) == 0)
            case "first-page-zeroed":
                try overwrite(path, from: 0, with: [UInt8](repeating: 0, count: 4096))
            case "newer-schema": try tamper(with: path, "PRAGMA user_version = 99")
            case "schema-text": try tamperWithSchema(of: path, table: "node", replacing: "class_name", with: "klass_name")
            // The header's text encoding (offset 56: 1 is UTF-8), as one flipped bit leaves it.
            case "text-encoding-utf16le": try overwrite(path, from: 56, with: [0, 0, 0, 2])
            case "text-encoding-utf16be": try overwrite(path, from: 56, with: [0, 0, 0, 3])
            default: try overwrite(path, from: 18, with: [255])
            }
            let error = Self.firstError(path)
            #expect((error == nil) == (damage == "sound"))
            #expect(error?.isUnusableStore ?? true, "\(String(describing: error))")
            if damage.hasPrefix("text-encoding") {
                // Not SQLite's "malformed database schema" under a table name read as UTF-16.
                #expect(error?.description.contains("its header says its text is UTF-16") == true, "\(String(describing: error))")
            }
            #expect(fileMode(path) == 0o600)
            if damage == "sound" {
                #expect([path, path + "-wal"].compactMap(fileBytes).contains { $0.contains(bytes: Self.state) })
            }

            try ArchiveStore.erase(at: path)

            do {
                let store = try ArchiveStore(path: path)
                #expect(try store.archiveNames().isEmpty)
                #expect(try store.snapshot() == nil)
                let tree = try SampleArchives.tree(count: 7)
                try store.save(tree, header: SampleArchives.header)
                #expect(try store.snapshot()?.nodes == tree.sorted { $0.path < $1.path })
            }
            // Still the same file, owner-only, and nothing of the old state is left in it or
            // in its write-ahead log.
            #expect(fileMode(path) == 0o600)
            for file in [path, path + "-wal"] {
                #expect(fileBytes(file)?.contains(bytes: Self.state) != true, "\(file) holds the erased state")
            }
        }
    }

    /// The example of README.md and of `ArchiveStore.erase(at:)`'s documentation, on a store
    /// cut short.
    @Test func theDocumentedRecoveryStartsAfresh() throws {
        try withTemporaryStorePath { path in
            try Self.savedStore(at: path)
            #expect(truncate(path, 10) == 0)

            let store: ArchiveStore
            do throws(ArchiveStoreError) {
                store = try ArchiveStore(path: path)
            } catch where error.isUnusableStore {
                try ArchiveStore.erase(at: path)
                store = try ArchiveStore(path: path)
            }

            #expect(try store.archiveNames().isEmpty)
        }
    }

    /// An erased store's incarnation is above the one of the store it replaces, which a
    /// launch begun before the erase holds. The clock alone gave it that incarnation when the
    /// erase came in the millisecond the store was created, or an earlier store's after the
    /// wall clock went back: a store created while the clock was an hour ahead stands for both.
    @Test func anErasedStoresIncarnationIsAboveTheOneItReplaces() throws {
        try withTemporaryStorePath { path in
            try Self.savedStore(at: path)
            func incarnation() throws -> Int64 {
                try ArchiveStore.incarnation(try Connection(filename: path, flags: SQLITE_OPEN_READONLY))
            }
            let ahead = Clock.nowMilliseconds() + 3_600_000
            try tamper(with: path, "UPDATE schema_migration SET applied_at = \(ahead)")
            try ArchiveStore.erase(at: path)
            #expect(try incarnation() == ahead + 1)
            // Behind the clock, or the highest integer (damage): the time of the erase.
            for replaced in [Int64(5), .max] {
                try tamper(with: path, "UPDATE schema_migration SET applied_at = \(replaced)")
                let before = Clock.nowMilliseconds()
                try ArchiveStore.erase(at: path)
                #expect((before...Clock.nowMilliseconds()).contains(try incarnation()))
            }
        }
    }

    /// The engine's store errors answer `isUnusableStore` as the store's own do.
    @Test func theEngineSaysWhenItsStoreIsUnusable() throws {
        #expect(RestorationError.store(.damagedStore("SQLite finds the file malformed")).isUnusableStore)
        #expect(RestorationError.store(.schemaTooNew(storeVersion: 99, libraryVersion: 1)).isUnusableStore)
        #expect(!RestorationError.store(.archiveNotFound(.main)).isUnusableStore)
        #expect(!RestorationError.invalidConfiguration("a limit").isUnusableStore)
        try withTemporaryStorePath { path in
            try Self.savedStore(at: path)
            let engine = try makeEngine(try ArchiveStore(path: path, mode: .readOnly))
            do throws(RestorationError) {
                try engine.preserve([Probe("Root")])
                Issue.record("a read-only store saved")
            } catch {
                #expect(error == .store(.readOnly) && !error.isUnusableStore)
            }
        }
    }

    /// A store damaged past its opening (a page of the node table SQLite cannot read, the
    /// schema's text) does not stop a launch: the engine's restoration says it failed, and why,
    /// touching no object; the next save throws the error whose `isUnusableStore` says to
    /// erase, and once the store is erased the same engine saves into the empty one.
    @Test(arguments: ["node-page", "schema-text"])
    func anEngineMeetsAStoreDamagedPastItsOpeningAtRestorationThenAtItsSave(damage: String) throws {
        try withTemporaryStorePath { path in
            try makeEngine(try ArchiveStore(path: path)).preserve([Probe("Root", value: "saved", [Probe("A")])])
            if damage == "node-page" {
                try makeRootPageUnreadable(of: "node", at: path)
            } else {
                try tamperWithSchema(of: path, table: "node", replacing: "class_name", with: "klass_name")
            }
            let engine = try makeEngine(try ArchiveStore(path: path))
            let root = Probe("Root", value: "fresh")
            let restoration = try engine.restore([root])
            guard case .failed(let reason) = restoration.report.outcome else {
                Issue.record("the restoration of a damaged store: \(restoration.report.outcome)")
                return
            }
            #expect(reason.hasPrefix("The store is damaged: "), "\(reason)")
            #expect(restoration.report.nodes.isEmpty && restoration.roots.isEmpty)
            #expect(root.value == "fresh" && root.decodeCount == 0)
            do throws(RestorationError) {
                try engine.preserve([root])
                Issue.record("a damaged store saved")
            } catch {
                #expect(error.isUnusableStore, "\(error)")
            }

            try ArchiveStore.erase(at: path)
            #expect(try engine.preserve([root]).save?.generation == 1)
            let restored = Probe("Root")
            #expect(try makeEngine(try ArchiveStore(path: path)).restore([restored]).report.restoredCount == 1)
            #expect(restored.value == "fresh")
        }
    }

    @Test func aStoreOpenWhileItIsErasedGoesOnWithTheEmptyStore() throws {
        try withTemporaryStorePath { path in
            let open = try ArchiveStore(path: path)
            try open.save(try SampleArchives.tree(count: 20), header: SampleArchives.header)
            let generation = try #require(try open.snapshot()?.header.generation)
            // An open reader in another connection too, as restorectl would be.
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try reader.snapshot()?.nodes.count == 20)

            try ArchiveStore.erase(at: path)

            // Both read the new schema, not the old one's pages: the erase moved the schema
            // version past the old one.
            #expect(try open.snapshot() == nil)
            #expect(try reader.snapshot() == nil)
            #expect(throws: ArchiveStoreError.archiveNotFound(.main)) {
                try open.saveChanges([], basedOn: generation, header: SampleArchives.header)
            }
            let tree = try SampleArchives.tree(count: 3)
            try open.save(tree, header: SampleArchives.header)
            #expect(try reader.snapshot()?.nodes == tree)
            #expect(try ArchiveStore(path: path).snapshot()?.nodes == tree)
        }
    }

    /// An erase that has to reset the file (SQLite cannot read its first page) gives it the
    /// store's schema at once, so that a store opened read-only next, as `restorectl` would be,
    /// finds the empty store rather than a file without tables.
    @Test func anUnreadableFileErasedIsAnEmptyStoreAtOnce() throws {
        try withTemporaryStorePath { path in
            try Self.savedStore(at: path)
            try overwrite(path, from: 0, with: [UInt8](repeating: 0, count: 4096))

            try ArchiveStore.erase(at: path)

            let reader = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try reader.archiveNames().isEmpty)
            #expect(try reader.snapshot() == nil)
            #expect(try reader.check().isEmpty)
        }
    }

    /// The store an open `ArchiveStore` finds while an erase is in progress is the old one or
    /// the empty one, never one in between. The erase emptied the file, then applied the
    /// schema's migrations one transaction at a time, and waited for reads in between (to
    /// truncate the log): a call meanwhile failed with ``ArchiveStoreError/damagedStore(_:)``
    /// ("no such table: archive"), which an app takes for a store to erase. A read held open
    /// in another connection keeps the erase waiting here.
    @Test func aStoreOpenWhileItIsErasedNeverFindsAStoreInBetween() throws {
        try withTemporaryStorePath { path in
            let open = try ArchiveStore(path: path)
            try open.save(try SampleArchives.tree(count: 20), header: SampleArchives.header)
            let reader = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
            try reader.execute("BEGIN")
            #expect(try reader.pragmaInteger("SELECT count(*) FROM node") == 20)
            let erased = Flag()
            let erasing = Thread {
                do {
                    try ArchiveStore.erase(at: path, busyTimeout: .seconds(10))
                } catch {
                    Issue.record("the erase failed: \(error)")
                }
                erased.set()
            }
            erasing.start()
            // Until the open store finds the erase's store (or the erase ends), every call
            // finds one or the other.
            let started = ContinuousClock.now
            var found: ArchiveSnapshot?? = nil
            while found == nil || found! != nil, !erased.isSet, ContinuousClock.now - started < .seconds(5) {
                found = try open.snapshot()
                #expect(found!.map(\.nodes.count) ?? 20 == 20)
                usleep(2_000)
            }
            #expect(found == .some(nil), "the erase never showed an empty store")
            try reader.execute("ROLLBACK")
            while !erased.isSet { usleep(2_000) }
            #expect(try open.snapshot() == nil)
            try open.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            #expect(try ArchiveStore(path: path).snapshot()?.nodes.count == 3)
        }
    }

    /// A launch recording its lifecycle events goes on recording them after the erase, as a
    /// launch of the empty store: the journal's numbering started again.
    @Test func aLaunchOpenWhileItsStoreIsErasedGoesOnRecordingItsEvents() throws {
        try withTemporaryStorePath { path in
            let earlier = try ArchiveStore(path: path)
            for event in [LifecycleEvent.willFinishLaunching, .didBecomeActive, .didEnterBackground] { try earlier.record(event) }
            let open = try ArchiveStore(path: path)
            try open.record(.willFinishLaunching)
            try open.record(.didBecomeActive)

            try ArchiveStore.erase(at: path)

            try open.record(.willResignActive)
            let entry = try open.record(.didEnterBackground)
            let launches = try ArchiveStore(path: path).launches()
            #expect(launches.count == 1)
            #expect(launches.first?.launch == entry.launch)
            #expect(launches.first?.ending == .inBackground)
            let next = try ArchiveStore(path: path, configuration: .init(crashPolicy: .discardAfterForegroundDeath))
            try next.record(.willFinishLaunching)
            #expect(try next.previousLaunch()?.ending == .inBackground)
            #expect(try next.previousLaunch()?.launch == entry.launch)
        }
    }

    /// A restoration still in progress (an object extended it) when the store is erased ends
    /// as it would have: its marker and report went with the store, and the next launch
    /// finds nothing to restore.
    @Test func aRestorationInProgressWhileItsStoreIsErasedEndsCleanly() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "saved")])
            let restoring = SlowScreen("Root")
            let result = try makeEngine(store).restore([restoring])
            #expect(!result.isComplete)

            try ArchiveStore.erase(at: path)

            #expect(restoring.extensions.count == 1)
            for extensionOfRestoration in restoring.extensions { #expect(extensionOfRestoration.complete()) }
            #expect(result.isComplete)
            #expect(try !store.hasCrashMarker())
            let next = try makeEngine(try ArchiveStore(path: path)).restore([Probe("Root")])
            #expect(next.report.outcome == .nothingToRestore)
            try makeEngine(store).preserve([Probe("Root", value: "after")])
            let root = Probe("Root")
            #expect(try makeEngine(try ArchiveStore(path: path)).restore([root]).report.outcome == .restored)
            #expect(root.value == "after")
        }
    }

    /// The erased store holds a generation of the number being restored by the time the
    /// restoration completes: another one, saved since. The restoration's end does not mark
    /// it known good (it was never restored), nor keep a report of it.
    @Test func aRestorationCompletedAfterAnEraseLeavesAnotherGenerationOfItsNumberAlone() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "saved")])
            let restoring = SlowScreen("Root")
            let result = try makeEngine(store).restore([restoring])

            try ArchiveStore.erase(at: path)
            let other = try ArchiveStore(path: path)
            #expect(try makeEngine(other).preserve([Probe("Root", value: "other")]).save?.generation == 1)

            for extensionOfRestoration in restoring.extensions { #expect(extensionOfRestoration.complete()) }
            #expect(result.isComplete)
            #expect(try other.generations().map(\.restoredCleanly) == [false])
            #expect(try other.restoreReports().isEmpty)
        }
    }

    /// The same at the restoration's start: the store is erased and saved again up to the
    /// generation number being restored after the launch read it (here while the restore gate
    /// decides), and before its crash marker is written. The marker named the other generation,
    /// and counted an attempt there: when the app then died, the next launch invalidated the
    /// other writer's state, which was never being restored.
    @Test func aRestorationBegunAfterAnEraseLeavesAnotherGenerationOfItsNumberAlone() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "saved")])
            let engine = try makeEngine(store)
            engine.restoreGate = { header, app in
                // Another writer: on another thread, since a save nested in the restoration is
                // refused (as another process's is not).
                let saved = onAnotherThread {
                    try ArchiveStore.erase(at: path)
                    return try makeEngine(try ArchiveStore(path: path)).preserve([Probe("Root", value: "other")]).save?.generation
                }
                #expect(saved == header.generation)
                return .standard(for: header, app: app)
            }
            let restoring = SlowScreen("Root")
            let result = try engine.restore([restoring])
            #expect(result.report.outcome == .restored && restoring.value == "saved" && !result.isComplete)
            #expect(try !store.hasCrashMarker())
            #expect(try store.generations().map(\.restoreAttempts) == [0])

            // The app dies before the restoration completes (its start wrote no marker, so
            // there is none to make a dead process's): the other state is restored.
            let root = Probe("Root")
            #expect(try makeEngine(try ArchiveStore(path: path)).restore([root]).report.outcome == .restored)
            #expect(root.value == "other")
            for extensionOfRestoration in restoring.extensions { #expect(extensionOfRestoration.complete()) }
        }
    }

    @Test func anEngineSavesInFullAfterItsStoreWasErased() throws {
        try withTemporaryStorePath { path in
            let engine = try makeEngine(try ArchiveStore(path: path))
            let detail = Probe("Detail", value: "first")
            let root = Probe("Root", [Probe("List"), Probe("Settings"), detail])
            #expect(try engine.preserve([root]).save?.kind == .full)
            detail.value = "second"
            #expect(try engine.preserve([root]).save?.kind == .incremental)

            try ArchiveStore.erase(at: path)

            detail.value = "third"
            #expect(try engine.preserve([root]).save?.kind == .full)
            let restored = Probe("Detail")
            _ = try makeEngine(try ArchiveStore(path: path)).restore([Probe("Root", [Probe("List"), Probe("Settings"), restored])])
            #expect(restored.value == "third")
        }
    }

    /// The erased store fills again from another engine (or process) up to the generation
    /// number this engine last saved: the number is the same, the nodes are not the ones this
    /// engine knows. Its next save is a full one, or the other writer's states would stay
    /// where this engine's tree left a node unchanged.
    @Test func anEngineSavesInFullWhenAnotherWriterReachedItsGenerationAfterAnErase() throws {
        try withTemporaryStorePath { path in
            // Root, List and Settings hold `value`; Detail holds `detail`.
            func tree(_ value: String, detail: Probe) -> Probe {
                Probe("Root", value: value, [Probe("List", value: value), Probe("Settings", value: value), detail])
            }
            let engine = try makeEngine(try ArchiveStore(path: path))
            let detail = Probe("Detail", value: "first")
            let mine = tree("mine", detail: detail)
            #expect(try engine.preserve([mine]).save?.kind == .full)
            detail.value = "second"
            let known = try #require(try engine.preserve([mine]).save)
            #expect(known.kind == .incremental)

            try ArchiveStore.erase(at: path)
            let other = try makeEngine(try ArchiveStore(path: path))
            try other.preserve([tree("theirs", detail: Probe("Detail", value: "a"))])
            #expect(try other.preserve([tree("theirs", detail: Probe("Detail", value: "b"))]).save?.generation == known.generation)

            detail.value = "third"
            #expect(try engine.preserve([mine]).save?.kind == .full)
            let (root, list, settings, restored) = (Probe("Root"), Probe("List"), Probe("Settings"), Probe("Detail"))
            root.children = [list, settings, restored]
            _ = try makeEngine(try ArchiveStore(path: path)).restore([root])
            #expect([root.value, list.value, settings.value, restored.value] == ["mine", "mine", "mine", "third"])
        }
    }

    /// Another program's database at the store's path (a wrong path, most likely) is never
    /// erased. A database without tables has nothing to lose, a store whose `application_id`
    /// was damaged still has its tables, and one that lost a table still has its
    /// `application_id`: all are erased.
    @Test(arguments: [
        ("PRAGMA application_id = 42; CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada')", false),
        ("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada')", false),
        // One of a store's table names is not a store.
        ("CREATE TABLE archive (name TEXT); INSERT INTO archive VALUES ('2025 taxes')", false),
        ("PRAGMA application_id = 42", true),
        ("a store; PRAGMA application_id = 0", true),
        ("a store; PRAGMA application_id = 42", true),
        // A store's `application_id` with one of its tables lost is a damaged store.
        ("a store; DROP TABLE schema_migration", true),
    ])
    func anotherProgramsDatabaseIsNeverErased(setup: String, erased: Bool) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/other.sqlite"
            var sql = setup
            if sql.hasPrefix("a store; ") {
                try Self.savedStore(at: path)
                sql.removeFirst("a store; ".count)
            } else {
                #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            }
            try tamper(with: path, sql)
            let before = fileBytes(path)
            if erased {
                try ArchiveStore.erase(at: path)
                #expect(try ArchiveStore(path: path).archiveNames().isEmpty)
            } else {
                let error = try #require(throws: ArchiveStoreError.self) { try ArchiveStore.erase(at: path) }
                guard case .notAStore(let errorPath, let reason) = error else {
                    Issue.record("expected notAStore, got \(error)")
                    return
                }
                #expect(errorPath == path)
                #expect(reason.hasPrefix("it is an SQLite database of another program"))
                #expect(fileBytes(path) == before)
            }
        }
    }

    /// Another program writing its database (in rollback journal mode, which keeps readers
    /// out) for longer than the busy timeout: the erase could not read the schema, took the
    /// file for one SQLite cannot read (nothing to lose), and erased the database once the
    /// program let go of it (here 100 ms later). It is busy instead (or, should the lock go
    /// before the erase reads, refuses the database), and the database is left as it is.
    @Test func anotherProgramsDatabaseBusyForLongerThanTheTimeoutIsNeverErased() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/other.sqlite"
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            try tamper(with: path, "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada')")
            let before = fileBytes(path)
            let writer = UncheckedBox(try Connection(filename: path, flags: SQLITE_OPEN_READWRITE))
            try writer.value.execute("BEGIN EXCLUSIVE")
            let releasing = Thread {
                usleep(300_000)
                writer.value.rollback()
            }
            releasing.start()
            let error = try #require(throws: ArchiveStoreError.self) {
                try ArchiveStore.erase(at: path, busyTimeout: .milliseconds(200))
            }
            while !releasing.isFinished { usleep(1_000) }
            switch error {
            case .database(let database) where database.resultCode == .busy: break
            case .notAStore: break
            default: Issue.record("expected busy, got \(error)")
            }
            #expect(fileBytes(path) == before)
        }
    }

    @Test func nothingAtThePathIsNothingToErase() throws {
        try withTemporaryDirectory { directory in
            try ArchiveStore.erase(at: directory + "/store.sqlite")
            try ArchiveStore.erase(at: directory + "/missing/store.sqlite")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    /// A zero busy timeout erases without waiting (only a negative one is refused, as the
    /// store's own configuration refuses it).
    @Test func aZeroBusyTimeoutErasesANegativeOneIsRefused() throws {
        try withTemporaryStorePath { path in
            try Self.savedStore(at: path)
            #expect(throws: ArchiveStoreError.invalidConfiguration("busyTimeout must not be negative")) {
                try ArchiveStore.erase(at: path, busyTimeout: .milliseconds(-1))
            }
            #expect(try ArchiveStore(path: path).archiveNames() == [.main])
            try ArchiveStore.erase(at: path, busyTimeout: .zero)
            #expect(try ArchiveStore(path: path).archiveNames().isEmpty)
        }
    }

    @Test func aSymbolicLinkOrAFolderIsRefused() throws {
        try withTemporaryDirectory { directory in
            let target = directory + "/real.sqlite"
            try Self.savedStore(at: target)
            let before = fileBytes(target)
            let link = directory + "/link.sqlite"
            #expect(symlink(target, link) == 0)
            #expect(throws: ArchiveStoreError.symbolicLinkAtStorePath(path: link)) { try ArchiveStore.erase(at: link) }
            #expect(fileBytes(target) == before)
            #expect(throws: ArchiveStoreError.notAStore(path: directory, reason: "it is a directory")) {
                try ArchiveStore.erase(at: directory)
            }
        }
    }

    /// Another connection's read in progress does not stop the erase. The erase waits for it
    /// up to the busy timeout, to truncate the write-ahead log; then the log keeps its old
    /// pages until a later checkpoint, as the documentation says.
    @Test func anEraseGoesOnWhileAnotherConnectionReads() throws {
        try withTemporaryStorePath { path in
            try Self.savedStore(at: path)
            let reader = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
            try reader.execute("BEGIN")
            #expect(try reader.pragmaInteger("SELECT count(*) FROM node") == 40)

            // A short timeout: the erase waits all of it for the read to end.
            try ArchiveStore.erase(at: path, busyTimeout: .milliseconds(300))

            // The reader still sees its snapshot; the new store is empty and saves.
            #expect(try reader.pragmaInteger("SELECT count(*) FROM node") == 40)
            #expect(fileBytes(path + "-wal")?.isEmpty == false)
            let store = try ArchiveStore(path: path)
            #expect(try store.archiveNames().isEmpty)
            try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            try reader.execute("COMMIT")
            #expect(try reader.pragmaInteger("SELECT count(*) FROM node") == 3)
        }
    }

    @Test func anEraseWaitsForASaveInProgressAndThenGivesUp() throws {
        try withTemporaryStorePath { path in
            try Self.savedStore(at: path)
            let writer = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
            try writer.execute("BEGIN IMMEDIATE")
            let started = ContinuousClock.now
            let error = try #require(throws: ArchiveStoreError.self) {
                try ArchiveStore.erase(at: path, busyTimeout: .milliseconds(200))
            }
            #expect(ContinuousClock.now - started >= .milliseconds(150))
            guard case .database(let database) = error, database.resultCode == .busy else {
                Issue.record("expected busy, got \(error)")
                return
            }
            try writer.execute("COMMIT")
            #expect(Self.firstError(path) == nil)
            #expect(throws: ArchiveStoreError.invalidConfiguration("busyTimeout must not be negative")) {
                try ArchiveStore.erase(at: path, busyTimeout: .milliseconds(-1))
            }
        }
    }
}
