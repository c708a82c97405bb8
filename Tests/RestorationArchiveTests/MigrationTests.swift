import CSQLite
import Foundation
import StoreMigrations
import Testing
import TestSupport
@testable import RestorationArchive

@Suite("Schema migrations")
struct MigrationTests {
    @Test func everySQLFileInMigrationsIsRegistered() throws {
        let folder = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Migrations").standardized
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".sql") }
            .map { String($0.dropLast(4)) }
            .sorted()
        #expect(!files.isEmpty)
        #expect(StoreMigrations.all.map(\.identifier) == files)
        for migration in StoreMigrations.all {
            let text = try String(contentsOf: folder.appending(path: migration.identifier + ".sql"), encoding: .utf8)
            #expect(migration.sql == text, "\(migration.identifier) embeds a different text than its file")
        }
        // Names start with a letter: SwiftPM's embedInCode mangles a leading digit.
        #expect(files.allSatisfy { $0.first?.isLetter == true })
    }

    @Test func aNewStoreRecordsEveryMigrationWithItsChecksum() throws {
        try withTemporaryStore { store in
            let rows = try store.withConnection { connection in
                let statement = try connection.statement("SELECT identifier, checksum FROM schema_migration ORDER BY sequence")
                var rows: [String] = []
                while try statement.step() { rows.append(try statement.string(0) + " " + (try statement.string(1))) }
                return rows
            }
            #expect(rows == StoreMigrations.all.map { $0.identifier + " " + SchemaMigrator.checksum(of: $0.sql) })
            let version = try store.withConnection { try $0.pragmaInteger("PRAGMA user_version") }
            #expect(version == Int64(StoreMigrations.all.count))
            // What `restorectl --version` prints: the version a new store gets, and the SQLite
            // the store's own connection runs.
            #expect(version == Int64(ArchiveStore.schemaVersion))
            let sqlite = try store.withConnection { connection in
                let statement = try connection.statement("SELECT sqlite_version()")
                defer { statement.reset() }
                _ = try statement.step()
                return try statement.string(0)
            }
            #expect(ArchiveStore.sqliteVersion == sqlite)
        }
    }

    @Test func reopeningAnUpToDateStoreChangesNothing() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            let before = fileBytes(path)
            _ = try ArchiveStore(path: path)
            #expect(fileBytes(path) == before)
        }
    }

    @Test func openingAnUpToDateStoreDoesNotWaitForTheWriteLock() throws {
        try withTemporaryStorePath { path in
            let writer = try ArchiveStore(path: path)
            try writer.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            // Another connection holds the write lock (a save in progress in another process).
            let holder = try Connection(filename: path, flags: 2 /* SQLITE_OPEN_READWRITE */)
            try holder.execute("BEGIN IMMEDIATE")
            defer { holder.rollback() }
            let store = try ArchiveStore(path: path, configuration: .init(busyTimeout: .milliseconds(100)))
            #expect(try store.snapshot()?.nodes.count == 3)
        }
    }

    @Test func aStoreMigratedByNewerCodeIsRefusedAndNothingIsWritten() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            let known = StoreMigrations.all.count
            try tamper(
                with: path,
                """
                INSERT INTO schema_migration (sequence, identifier, checksum, applied_at) \
                VALUES (\(known + 1), 'v9999_from_the_future', '0', 0);
                PRAGMA user_version = \(known + 1);
                """)
            let before = fileBytes(path)
            for mode in [ArchiveStore.AccessMode.readWrite, .readOnly] {
                let error = try #require(throws: ArchiveStoreError.self) { try ArchiveStore(path: path, mode: mode) }
                #expect(error == .schemaTooNew(storeVersion: known + 1, libraryVersion: known))
                #expect(error.description.contains("\(known + 1)") && error.description.contains("\(known)"))
            }
            #expect(fileBytes(path) == before)
            #expect(!fileExists(path + "-wal"))
        }
    }

    @Test func aNewerHistoryWithAnOldUserVersionIsStillRefused() throws {
        try withTemporaryStorePath { path in
            _ = try ArchiveStore(path: path)
            let known = StoreMigrations.all.count
            try tamper(
                with: path,
                "INSERT INTO schema_migration (sequence, identifier, checksum, applied_at) VALUES (\(known + 1), 'v9999', '0', 0)")
            #expect(throws: ArchiveStoreError.schemaTooNew(storeVersion: known + 1, libraryVersion: known)) {
                try ArchiveStore(path: path)
            }
        }
    }

    /// A store whose `user_version` is newer than this library's, by one, is refused even
    /// when its history lists only migrations this library knows.
    @Test func aNewerUserVersionWithAKnownHistoryIsRefused() throws {
        try withTemporaryStorePath { path in
            _ = try ArchiveStore(path: path)
            let known = StoreMigrations.all.count
            try tamper(with: path, "PRAGMA user_version = \(known + 1)")
            #expect(throws: ArchiveStoreError.schemaTooNew(storeVersion: known + 1, libraryVersion: known)) {
                try ArchiveStore(path: path)
            }
        }
    }

    /// An applied migration recorded under another name, with the text of the one this
    /// library has at that place: not the same history.
    @Test func anAppliedMigrationRecordedUnderAnotherNameIsRefused() throws {
        try withTemporaryStorePath { path in
            _ = try ArchiveStore(path: path)
            try tamper(with: path, "UPDATE schema_migration SET identifier = 'v0001_renamed' WHERE sequence = 1")
            #expect(throws: ArchiveStoreError.migrationChanged(identifier: "v0001_renamed")) {
                try ArchiveStore(path: path)
            }
        }
    }

    @Test func anAppliedMigrationWhoseTextChangedIsRefused() throws {
        try withTemporaryStorePath { path in
            _ = try ArchiveStore(path: path)
            try tamper(with: path, "UPDATE schema_migration SET checksum = '0123456789abcdef' WHERE sequence = 1")
            let before = fileBytes(path)
            #expect(throws: ArchiveStoreError.migrationChanged(identifier: StoreMigrations.all[0].identifier)) {
                try ArchiveStore(path: path)
            }
            #expect(fileBytes(path) == before)
        }
    }

    /// SQL of the file's own, which no migration makes: a trigger that never ends (it made
    /// every launch wait forever, each event recorded running it), a view in place of a
    /// table (`restorectl report` and `check` waited forever). Refused as damage in both
    /// modes, before anything runs it, the file left as it is; the erase an app answers
    /// with leaves a store that records and saves.
    @Test(arguments: [
        (
            "CREATE TRIGGER endless AFTER INSERT ON journal BEGIN SELECT count(*) FROM (WITH RECURSIVE c(x) AS "
                + "(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c WHERE x < 0); END",
            "1 trigger and 0 views"
        ),
        (
            "DROP TABLE restore_report; CREATE VIEW restore_report (archive_id, sequence, generation, reported_at, "
                + "outcome, report) AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                + "SELECT 1, x, 1, 0, 'restored', x'00' FROM c WHERE x < 0",
            "0 triggers and 1 view"
        ),
    ])
    func aSchemaWithATriggerOrAViewIsRefusedAsDamage(tampering: String, held: String) throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            try tamper(with: path, tampering)
            let before = fileBytes(path)
            let damaged = ArchiveStoreError.damagedStore(
                "its schema holds \(held), which no migration makes: the file was changed by other than this library")
            #expect(damaged.isUnusableStore)
            #expect(throws: damaged) { try ArchiveStore(path: path) }
            #expect(throws: damaged) { try ArchiveStore(path: path, mode: .readOnly) }
            #expect(fileBytes(path) == before)
            try ArchiveStore.erase(at: path)
            let store = try ArchiveStore(path: path)
            try store.record(.willFinishLaunching)
            try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header)
            #expect(try store.restoreReports(of: .main).isEmpty)
        }
    }

    /// A unique index another program added: every later journal entry of an event already
    /// recorded broke it, with a database error an app does not answer by erasing, so every
    /// launch failed the same way. The library's writes keep every constraint of its schema:
    /// one broken is damage, which an app answers by erasing.
    @Test func aConstraintTheFileAddedIsDamageWhenAWriteBreaksIt() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).record(.willFinishLaunching)
            try tamper(with: path, "CREATE UNIQUE INDEX tampered ON journal (event)")
            let store = try ArchiveStore(path: path)
            let error = try #require(throws: ArchiveStoreError.self) { try store.record(.willFinishLaunching) }
            #expect(error.isUnusableStore)
            #expect(error.description.contains("a write broke a constraint the library's writes keep"))
            #expect(error.description.contains("UNIQUE constraint failed: journal.event"))
            try ArchiveStore.erase(at: path)
            try store.record(.willFinishLaunching)
            try store.record(.willFinishLaunching)
        }
    }

    @Test func aStoreOfSchemaVersion4IsMigratedAndItsArchivesStillRead() throws {
        try withTemporaryStorePath { path in
            let nodes = try SampleArchives.tree(count: 5)
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            do {
                let connection = try Connection(filename: path, flags: 2 /* SQLITE_OPEN_READWRITE */)
                try SchemaMigrator(migrations: Array(StoreMigrations.all.prefix(4))).migrate(connection, path: path)
            }
            // Opened by this library, it gains the later columns and works as a new store.
            let store = try ArchiveStore(path: path)
            try store.save(nodes, header: SampleArchives.header)
            #expect(try store.snapshot()?.nodes == nodes.sorted { $0.path < $1.path })
            #expect(try store.archives().map(\.latestGeneration) == [1])
        }
    }

    /// v0011 rebuilds the journal and the restore reports with their constraints written as
    /// comparisons: every row is kept as it was, the journal's numbering carries on after the
    /// ids it gave before, and a row damage left with a value the new table would refuse is
    /// left out rather than failing the migration (which would leave the store unusable).
    @Test func v11KeepsTheJournalAndTheReportsAndLeavesOutOnlyRowsTheyCannotHold() throws {
        try withTemporaryStorePath { path in
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            // The columns v0011 copies (v0012 adds one).
            let journal = """
                SELECT id, launch, at, process_id, event, app_state, archive, generation, detail, process_boot, \
                process_start FROM journal ORDER BY id
                """
            let reports = "SELECT * FROM restore_report ORDER BY archive_id, sequence"
            // Each row's values as text, as SQLite converts them ("NULL" for NULL).
            func rows(_ sql: String) throws -> [[String]] {
                let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
                let statement = try connection.statement(sql)
                var rows: [[String]] = []
                while try statement.step() {
                    rows.append(
                        (0..<sqlite3_column_count(statement.handle)).map { column in
                            sqlite3_column_text(statement.handle, column).map { String(cString: $0) } ?? "NULL"
                        })
                }
                return rows
            }
            do {
                let connection = try Connection(filename: path, flags: 2 /* SQLITE_OPEN_READWRITE */)
                try SchemaMigrator(migrations: Array(StoreMigrations.all.prefix(10))).migrate(connection, path: path)
                try connection.execute(
                    """
                    INSERT INTO archive (id, name, created_at, generation, checksum) VALUES (1, 'main', 5, 1, 0);
                    INSERT INTO journal (id, launch, at, process_id, event, app_state, process_boot, process_start)
                        VALUES (7, 7, 10, 42, 'willFinishLaunching', 'inactive', 'boot', 9),
                        (8, 7, 11, 42, 'didEnterBackground', 'background', NULL, NULL);
                    INSERT INTO journal (id, launch, at, process_id, event, archive, generation, detail)
                        VALUES (9, 7, 12, 42, 'invalidated', 'main', 1, 'it crashed');
                    UPDATE sqlite_sequence SET seq = 40 WHERE name = 'journal';
                    INSERT INTO restore_report VALUES (1, 1, NULL, 20, 'nothing', x'0102'), (1, 2, 1, 21, 'restored', x'0304');
                    """)
            }
            let kept = (journal: try rows(journal), reports: try rows(reports))
            #expect(kept.journal.count == 3 && kept.reports.count == 2)
            // Damage: a value of another type, a constraint broken, a report of no archive.
            try tamperBypassingStrict(
                with: path, table: "journal", "INSERT INTO journal (id, launch, at, process_id, event, app_state) VALUES (20, 7, 'x', 42, 'didBecomeActive', 'active')")
            try tamper(
                with: path,
                """
                PRAGMA ignore_check_constraints = ON;
                INSERT INTO journal (id, launch, at, process_id, event, app_state) VALUES (21, 7, 13, 42, 'bogus', 'active');
                PRAGMA foreign_keys = OFF;
                INSERT INTO restore_report VALUES (9, 1, NULL, 22, 'nothing', x'05')
                """)
            #expect(try rows(journal).count == 5 && rows(reports).count == 3)

            let store = try ArchiveStore(path: path)
            #expect(try rows("PRAGMA user_version") == [["\(StoreMigrations.all.count)"]])
            #expect(try rows(journal) == kept.journal)
            #expect(try rows(reports) == kept.reports)
            #expect(try rows("SELECT name FROM sqlite_schema WHERE name LIKE '%_v11' OR name = 'journal_by_launch'") == [["journal_by_launch"]])
            #expect(try rows("PRAGMA foreign_key_check").isEmpty && rows("PRAGMA integrity_check") == [["ok"]])
            #expect(try store.journal().map(\.sequence) == [7, 8, 9])
            #expect(try store.record(.willFinishLaunching).sequence == 41)
            // (The archive row and the reports' blobs written here are not the library's: check()
            // names them, and nothing of the journal.)
            let problems = try store.check().map(\.description)
            #expect(problems.count == 3 && !problems.contains { $0.contains("journal") }, "\(problems)")
            // The constraints still refuse what they refused.
            #expect(throws: DatabaseError.self) {
                try tamper(with: path, "INSERT INTO journal (launch, at, process_id, event, app_state) VALUES (NULL, 1, 1, 'bogus', 'active')")
            }
            #expect(throws: DatabaseError.self) {
                try tamper(with: path, "INSERT INTO restore_report VALUES (1, 3, NULL, 23, 'bogus', x'06')")
            }
        }
    }

    /// A store that the library wrote at schema version 6, before full saves kept their rows
    /// apart in epochs (v0007): every retained generation reads back the same nodes, the store
    /// checks clean, and the saves that follow go on from it and prune its rows.
    @Test func aStoreOfSchemaVersion6IsMigratedToEpochsAndReadsTheSame() throws {
        try withTemporaryStorePath { path in
            try SchemaV6Fixture.copy(to: path)
            let store = try ArchiveStore(path: path)
            #expect(
                try store.withConnection { try $0.pragmaInteger("PRAGMA user_version") }
                    == Int64(StoreMigrations.all.count))
            func rowsPerEpoch(_ archive: ArchiveName) throws -> [Int64: Int64] {
                try store.withConnection { connection in
                    let statement = try connection.statement(
                        """
                        SELECT epoch, count(*) FROM node JOIN archive ON id = archive_id WHERE name = ? \
                        GROUP BY epoch
                        """)
                    try statement.bind(archive.rawValue, at: 1)
                    var counts: [Int64: Int64] = [:]
                    while try statement.step() { counts[try statement.int64(0)] = try statement.int64(1) }
                    return counts
                }
            }
            try SchemaV6Fixture.expectRetainedGenerations(in: store)
            #expect(try rowsPerEpoch(.main) == [0: 10] && rowsPerEpoch(SchemaV6Fixture.scene) == [0: 10])
            // v0009 dropped the stored parent: the checksums, which cover the parent the path
            // implies, still hold (`check()` above).
            let columns = try store.withConnection { connection in
                try connection.pragmaText("SELECT group_concat(name, ' ') FROM pragma_table_info('node')")
            }
            #expect(columns == "archive_id epoch path born died class_name class_version sibling_order state checksum")
            // Reopening changes nothing.
            _ = try ArchiveStore(path: path)
            try SchemaV6Fixture.expectRetainedGenerations(in: store)

            // An incremental save goes on in epoch 0; a full save starts its own and keeps the
            // rows that generation 4 reads; the next full save prunes the last of epoch 0.
            var changed = try SchemaV6Fixture.with(try SchemaV6Fixture.main(3)[0], fill: 4)
            try store.saveChanges([changed], basedOn: 3, header: SampleArchives.header)
            var expected = try SchemaV6Fixture.main(3)
            expected[0] = changed
            #expect(try store.snapshot()?.nodes == expected)
            // One row retired by generation 4, and the one generation 3 retired pruned.
            #expect(try rowsPerEpoch(.main) == [0: 10])
            let fresh = try SchemaV6Fixture.tree(count: 3, fill: 5)
            try store.save(fresh, header: SampleArchives.header)
            // Generation 4 is the oldest retained: the row it retired is pruned.
            #expect(try rowsPerEpoch(.main) == [0: 9, 5: 3])
            #expect(try store.snapshot(generation: 4)?.nodes == expected)
            #expect(try store.check() == [])
            changed = try SchemaV6Fixture.with(fresh[0], fill: 6)
            try store.save([changed] + fresh.dropFirst(), header: SampleArchives.header)
            #expect(try rowsPerEpoch(.main) == [5: 3, 6: 3])
            #expect(try store.check() == [])
            // The other archive kept its generations.
            for generation in [1, 2] {
                let read = try store.snapshot(of: SchemaV6Fixture.scene, generation: Generation(Int64(generation)))
                #expect(read?.nodes == (try SchemaV6Fixture.scene(generation)))
            }
        }
    }

    /// A store of an older schema opened read-only (`restorectl` before the app's first
    /// launch with the new library) used to be refused as "not an archive store". It is read
    /// through a migrated copy in memory: the same generations as a read-write open reads,
    /// and the file, its `-wal` included, is left as it was. The copy is made again when the
    /// file or its log changes.
    @Test func aStoreOfAnOlderSchemaIsReadReadOnlyThroughAMigratedCopy() throws {
        try withTemporaryStorePath { path in
            try SchemaV6Fixture.copy(to: path)
            let before = fileBytes(path)
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            try SchemaV6Fixture.expectRetainedGenerations(in: reader)
            #expect(try reader.archiveNames() == [SchemaV6Fixture.closed, .main, SchemaV6Fixture.scene])
            #expect(fileBytes(path) == before && !fileExists(path + "-wal") && !fileExists(path + "-shm"))

            // An app of the old version commits to the log and keeps the store open: the
            // copy is made again, with the log's commits.
            let held = try withSQLiteHolder(of: path, having: "DELETE FROM archive WHERE name = 'closed'") {
                #expect(try reader.archiveNames() == [.main, SchemaV6Fixture.scene])
                try SchemaV6Fixture.expectRetainedGenerations(in: reader)
                #expect(fileBytes(path) == before)
            }
            #expect(held)

            // The app's first launch with this library migrates the file and saves: the
            // reader now reads the file itself.
            let app = try ArchiveStore(path: path)
            let changed = try SchemaV6Fixture.with(try SchemaV6Fixture.main(3)[0], fill: 4)
            try app.saveChanges([changed], basedOn: 3, header: SampleArchives.header)
            #expect(try reader.header()?.generation == 4)
            #expect(try reader.snapshot()?.nodes == (try app.snapshot()?.nodes))
        }
    }

    /// An older store a killed app of the old version left with commits in its write-ahead
    /// log, copied without the log's index (`-shm`): the read-only open replays the log in
    /// memory, then migrates that copy, and reads the log's commits; no file is made or
    /// changed.
    @Test func anOlderStoreWhoseLogLostItsIndexIsReadReplayedAndMigrated() throws {
        try withTemporaryStorePath { path in
            try SchemaV6Fixture.copy(to: path)
            let copy = path + ".copy"
            do {
                let app = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
                try app.execute("DELETE FROM archive WHERE name = 'closed'")
                #expect(framesInWriteAheadLog(path + "-wal") > 0)
                for suffix in ["", "-wal"] {
                    let bytes = try #require(fileBytes(path + suffix))
                    #expect(FileManager.default.createFile(atPath: copy + suffix, contents: Data(bytes)))
                }
            }
            let (file, log) = (fileBytes(copy), fileBytes(copy + "-wal"))
            let reader = try ArchiveStore(path: copy, mode: .readOnly)
            #expect(try reader.archiveNames() == [.main, SchemaV6Fixture.scene])
            try SchemaV6Fixture.expectRetainedGenerations(in: reader)
            #expect(fileBytes(copy) == file && fileBytes(copy + "-wal") == log && !fileExists(copy + "-shm"))
        }
    }

    /// An older store whose file says it is larger than the 1 GiB a copy in memory may hold (a
    /// header whose size field no longer counts, and a file grown sparse to 2 GiB: SQLite then
    /// counts the file's length) is refused read-only, typed, at once: it was copied page by
    /// page into memory, as much memory as the file is long. Its file is left as it was.
    @Test func anOlderStoreTooLargeToCopyIntoMemoryIsRefusedReadOnly() throws {
        try withTemporaryStorePath { path in
            try SchemaV6Fixture.copy(to: path)
            // The header's "version valid for" (bytes 92–95) no longer the change counter's.
            let header = try #require(fopen(path, "r+b"))
            #expect(fseek(header, 92, SEEK_SET) == 0 && fwrite([0xFF, 0xFF, 0xFF, 0xFF], 1, 4, header) == 4)
            fclose(header)
            #expect(truncate(path, 2 << 30) == 0)
            let refusal = #expect(throws: ArchiveStoreError.self) { try ArchiveStore(path: path, mode: .readOnly) }
            guard case .database(let failure) = refusal else {
                Issue.record("\(String(describing: refusal))")
                return
            }
            #expect(failure.resultCode == .full)
            #expect(failure.message.contains("is larger than the 1073741824 bytes this library copies into memory"))
            #expect(fileSize(path) == 2 << 30 && !fileExists(path + "-wal") && !fileExists(path + "-shm"))
        }
    }

    /// An older store whose migration fails (here: a table it rebuilds is gone) fails its
    /// read-only open as the read-write one would, as damage naming what is missing, and the
    /// file is left as it was.
    @Test func anOlderStoreThatCannotBeMigratedIsDamageReadOnlyToo() throws {
        try withTemporaryStorePath { path in
            try SchemaV6Fixture.copy(to: path)
            try tamper(with: path, "DROP TABLE node")
            let before = fileBytes(path)
            let expected = ArchiveStoreError.damagedStore(
                "its schema does not hold what its migrations made (no such table: node)")
            #expect(throws: expected) { try ArchiveStore(path: path, mode: .readOnly) }
            #expect(fileBytes(path) == before && !fileExists(path + "-wal"))
            #expect(throws: expected) { try ArchiveStore(path: path) }
        }
    }

    /// The saves that made the schema-6 fixture, made on a new store, read back the same
    /// generations: the migrated store and a new one agree.
    @Test func theFixturesSavesReadTheSameOnANewStore() throws {
        try withTemporaryStore { store in
            try SchemaV6Fixture.write(into: store)
            for generation in [2, 3] {
                let read = try store.snapshot(generation: Generation(Int64(generation)))
                #expect(read?.nodes == (try SchemaV6Fixture.main(generation)))
            }
            for generation in [1, 2] {
                let read = try store.snapshot(of: SchemaV6Fixture.scene, generation: Generation(Int64(generation)))
                #expect(read?.nodes == (try SchemaV6Fixture.scene(generation)))
            }
            #expect(try store.snapshot(of: SchemaV6Fixture.closed) == nil)
            #expect(try store.check() == [])
        }
    }

    @Test func migratorAppliesOnlyPendingMigrationsEachInItsOwnTransaction() throws {
        try withTemporaryStorePath { path in
            let first = StoreMigration(identifier: "a_first", sql: "CREATE TABLE one (x INTEGER) STRICT")
            let broken = StoreMigration(identifier: "b_broken", sql: "CREATE TABLE two (x INTEGER); SELECT * FROM missing")
            let old = SchemaMigrator(migrations: [first])
            let new = SchemaMigrator(migrations: [first, broken])
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            let connection = try Connection(filename: path, flags: 2 /* SQLITE_OPEN_READWRITE */)
            try old.migrate(connection, path: path)
            #expect(try old.inspect(connection, path: path) == .compatible(pending: 0))
            #expect(try new.inspect(connection, path: path) == .compatible(pending: 1))
            // A failing migration rolls back entirely: its table is not left behind.
            #expect(throws: DatabaseError.self) { try new.migrate(connection, path: path) }
            #expect(try connection.pragmaInteger("SELECT count(*) FROM sqlite_schema WHERE name = 'two'") == 0)
            #expect(try new.inspect(connection, path: path) == .compatible(pending: 1))
            // The older library sees a store migrated past it as too new.
            let fixed = StoreMigration(identifier: "b_fixed", sql: "CREATE TABLE two (x INTEGER) STRICT")
            try SchemaMigrator(migrations: [first, fixed]).migrate(connection, path: path)
            #expect(throws: ArchiveStoreError.schemaTooNew(storeVersion: 2, libraryVersion: 1)) {
                try old.inspect(connection, path: path)
            }
        }
    }
}
