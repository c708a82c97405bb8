import CSQLite
import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

@Suite("SQLite access layer")
struct SQLiteLayerTests {
    private func open(_ directory: String) throws -> Connection {
        try Connection(filename: directory + "/raw.sqlite", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
    }

    /// The store's tables are `STRICT` (SQLite 3.37.0): an older system SQLite failed a new
    /// store's migration with a syntax error, and took an existing store's schema for a
    /// malformed one, which an app erases as damage. It is refused first, saying which
    /// version is needed and which one runs; the one here passes.
    @Test func anSQLiteOlderThanTheStoreNeedsIsRefusedSayingWhich() throws {
        try SQLiteVersion.check()
        #expect(SQLiteVersion.running >= SQLiteVersion.minimum)
        let error = try #require(throws: ArchiveStoreError.self) {
            try SQLiteVersion.check(running: 3_034_001, text: "3.34.1")
        }
        #expect(
            error.description
                == "Invalid configuration: this process links SQLite 3.34.1, and archive stores need 3.37.0 or newer "
                + "(their tables are STRICT).")
        #expect(!error.isUnusableStore, "never erased for it")
        try SQLiteVersion.check(running: 3_037_000, text: "3.37.0")
    }

    /// Every connection's checkpoints sync with `F_FULLFSYNC` where the system has it: on
    /// Apple's systems a plain fsync leaves the writes in the drive's cache, in any order, and
    /// the file's pages could reach the disk before the log they were copied from.
    @Test func everyConnectionsCheckpointsAskForTheFullestSync() throws {
        try withTemporaryDirectory { directory in
            let setting = try open(directory).pragmaInteger("PRAGMA checkpoint_fullfsync")
            #expect(setting == 1)
        }
    }

    @Test func errorsCarryCodesMessageAndSQLButNeverBoundValues() throws {
        try withTemporaryDirectory { directory in
            let connection = try open(directory)
            try connection.execute("CREATE TABLE t (x TEXT NOT NULL UNIQUE)")
            let insert = try connection.statement("INSERT INTO t (x) VALUES (?)")
            try insert.bind("secret-user-text", at: 1)
            try insert.run()
            let again = try connection.statement("INSERT INTO t (x) VALUES (?)")
            try again.bind("secret-user-text", at: 1)
            let error = try #require(throws: DatabaseError.self) { try again.run() }
            #expect(error.resultCode == .constraint)
            #expect(error.extendedResultCode.rawValue == 2067)  // SQLITE_CONSTRAINT_UNIQUE
            #expect(error.sql == "INSERT INTO t (x) VALUES (?)")
            #expect(error.message.contains("UNIQUE"))
            #expect(!error.description.contains("secret-user-text"))
        }
    }

    /// An error the system gave SQLite is named after SQLite's words: a store on a full disk
    /// failed to open with only "disk I/O error" (the log's index could not grow), which
    /// reads as a broken disk. Errors of SQLite's own are its words alone.
    @Test func anErrorTheSystemGaveSQLiteIsNamedAfterItsMessage() throws {
        try withTemporaryDirectory { directory in
            let error = try #require(throws: DatabaseError.self) {
                try Connection(filename: directory + "/missing/raw.sqlite", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            }
            #expect(error.resultCode == .cantOpen)
            #expect(error.message == "unable to open database file (No such file or directory)")
            // A symbolic link refused without following it is SQLite's decision, not the
            // system's: the error number left from an earlier call (a file SQLite looked for
            // and did not find) named a reason that was not this one.
            #expect(FileManager.default.createFile(atPath: directory + "/target.sqlite", contents: nil))
            #expect(symlink(directory + "/target.sqlite", directory + "/link.sqlite") == 0)
            let link = try #require(throws: DatabaseError.self) {
                try Connection(filename: directory + "/link.sqlite", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW)
            }
            #expect(link.extendedResultCode == .cantOpenSymlink)
            #expect(link.message == "unable to open database file")

            let connection = try open(directory)
            try connection.execute("CREATE TABLE t (x TEXT NOT NULL UNIQUE)")
            try connection.execute("INSERT INTO t (x) VALUES ('a')")
            let constraint = try #require(throws: DatabaseError.self) {
                try connection.execute("INSERT INTO t (x) VALUES ('a')")
            }
            #expect(constraint.message == "UNIQUE constraint failed: t.x")
        }
    }

    @Test func statementsAreCachedBySQLText() throws {
        try withTemporaryDirectory { directory in
            let connection = try open(directory)
            let first = try connection.statement("SELECT 1")
            let second = try connection.statement("SELECT 1")
            let other = try connection.statement("SELECT 2")
            #expect(first === second)
            #expect(first !== other)
        }
    }

    /// The cache hashes only a text's length and its first and last 16 bytes: texts that
    /// share all of those still get statements of their own, and a text built at run time
    /// finds the statement of an equal literal.
    @Test func statementsWithTheSameEndsAndLengthAreNotConfused() throws {
        try withTemporaryDirectory { directory in
            let connection = try open(directory)
            let one = try connection.statement("SELECT 1111111111111111, 1 AS x,  2222222222222222")
            let two = try connection.statement("SELECT 1111111111111111, 2 AS x,  2222222222222222")
            #expect(one !== two)
            #expect(try one.step() && two.step())
            #expect(try one.int64(1) == 1)
            #expect(try two.int64(1) == 2)
            let built = "SELECT 1111111111111111, \(1) AS x,  2222222222222222"
            #expect(try connection.statement(built) === one)
        }
    }

    @Test func transactionRollsBackWhenBodyThrows() throws {
        struct Failure: Error {}
        try withTemporaryDirectory { directory in
            let connection = try open(directory)
            try connection.execute("CREATE TABLE t (x INTEGER)")
            // The body's type is spelled out: inferred as returning `Never` inside `#expect`,
            // Swift 6.3.1 miscompiled this closure into the later `transaction` call's body.
            let failingBody: () throws -> Void = {
                try connection.execute("INSERT INTO t VALUES (1)")
                throw Failure()
            }
            #expect(throws: Failure.self) { try connection.transaction(.immediate, failingBody) }
            #expect(!connection.isInTransaction)
            #expect(try connection.pragmaInteger("SELECT count(*) FROM t") == 0)
            try connection.transaction(.immediate) { try connection.execute("INSERT INTO t VALUES (2)") }
            #expect(try connection.pragmaInteger("SELECT count(*) FROM t") == 1)
        }
    }

    @Test func typedBindingAndColumnsRoundTrip() throws {
        try withTemporaryDirectory { directory in
            let connection = try open(directory)
            try connection.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n TEXT)")
            let insert = try connection.statement("INSERT INTO t VALUES (?, ?, ?, ?, ?)")
            try insert.bind(Int64.min, at: 1)
            try insert.bind(-0.5, at: 2)
            try insert.bind("ünïcødé \0 nul", at: 3)
            try insert.bind(bytes: [], at: 4)
            try insert.bind(nil as String?, at: 5)
            try insert.run()
            let select = try connection.statement("SELECT i, r, s, b, n FROM t")
            #expect(try select.step())
            #expect(try select.int64(0) == Int64.min)
            #expect(try select.double(1) == -0.5)
            #expect(try select.string(2) == "ünïcødé \0 nul")
            #expect(try select.bytes(3) == [])
            #expect(try select.optionalString(4) == nil)
            // A column of another storage class is an error, not a silent conversion.
            #expect(throws: ColumnError.unexpectedType(column: "s", expected: "integer")) { try select.int64(2) }
        }
    }

    @Test func invalidUTF8TextIsATypedErrorNeverRepaired() throws {
        try withTemporaryDirectory { directory in
            let connection = try open(directory)
            let select = try connection.statement("SELECT CAST(x'41ff42' AS TEXT) AS broken")
            #expect(try select.step())
            #expect(throws: ColumnError.invalidUTF8(column: "broken")) { try select.string(0) }
        }
    }

    @Test func busyTimeoutGivesATypedBusyError() throws {
        try withTemporaryDirectory { directory in
            let holder = try open(directory)
            try holder.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (x)")
            let waiter = try open(directory)
            try waiter.setBusyTimeout(milliseconds: 50)
            try holder.execute("BEGIN IMMEDIATE")
            defer { holder.rollback() }
            let error = try #require(throws: DatabaseError.self) {
                try waiter.transaction(.immediate) {}
            }
            #expect(error.resultCode == .busy)
        }
    }

    /// Another connection that read the old schema reads the new one after an erase, even
    /// when the new schema has as many changes as the old (the schema version alone would
    /// match again) and its tables in other pages.
    @Test func anotherConnectionReadsTheSchemaAgainAfterAnErase() throws {
        try withTemporaryDirectory { directory in
            let eraser = try open(directory)
            try eraser.execute("PRAGMA journal_mode = WAL; CREATE TABLE a (x); CREATE TABLE b (y); CREATE TABLE c (z)")
            try eraser.execute("INSERT INTO a VALUES ('old a'); INSERT INTO b VALUES ('old b')")
            let other = try open(directory)
            #expect(try other.pragmaText("SELECT x FROM a") == "old a")

            try eraser.eraseEverything()
            #expect(try eraser.pragmaInteger("SELECT count(*) FROM sqlite_schema") == 0)
            // Two changes after the reset's version 1: the old schema's version 3 again.
            try eraser.execute("CREATE TABLE b (y); CREATE TABLE a (x)")
            try eraser.execute("INSERT INTO a VALUES ('new a'); INSERT INTO b VALUES ('new b')")

            #expect(try other.pragmaText("SELECT x FROM a") == "new a")
            #expect(try other.pragmaText("SELECT y FROM b") == "new b")
        }
    }

    /// The log index's header, read from its file, names the frames SQLite's own checkpoint
    /// counts: the log's up to its last commit, and those copied into the database file, and
    /// its page size, 65,536 bytes included (written as 1). A header whose two copies differ
    /// (a writer changing it), not initialised, or not a regular file's, names nothing.
    @Test func theLogIndexHeaderNamesTheFramesSQLiteCounts() throws {
        try withTemporaryDirectory { directory in
            let connection = try open(directory)
            let index = directory + "/raw.sqlite-shm"
            try connection.execute("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0")
            try connection.execute("CREATE TABLE t (x); INSERT INTO t VALUES (zeroblob(10000))")
            let uncopied = try #require(LogIndexHeader(indexAt: index))
            let checkpoint = try connection.statement("PRAGMA wal_checkpoint(PASSIVE)")
            #expect(try checkpoint.step())
            let (logFrames, copiedFrames) = (try checkpoint.int64(1), try checkpoint.int64(2))
            checkpoint.reset()
            #expect(logFrames >= 4)
            let log = try #require(fileBytes(directory + "/raw.sqlite-wal"))
            let salts = log.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self) }
            #expect(
                uncopied
                    == LogIndexHeader(
                        lastCommittedFrame: UInt32(logFrames), framesCopied: 0, pageSize: 4096, logSalts: salts))
            #expect(uncopied.framesNotCopied == UInt32(logFrames))
            #expect(uncopied.logSize == Int64(log.count), "the log holds the frames its index names, and no more")
            let copied = try #require(LogIndexHeader(indexAt: index))
            #expect(
                copied
                    == LogIndexHeader(
                        lastCommittedFrame: UInt32(logFrames), framesCopied: UInt32(copiedFrames), pageSize: 4096,
                        logSalts: salts))
            #expect(copied.framesNotCopied == 0)

            let bytes = try #require(fileBytes(index)).prefix(LogIndexHeader.bytesRead)
            #expect(LogIndexHeader(bytes: Array(bytes)) == copied)
            // The second copy's mxFrame: the first, whose checksum holds, is not read alone.
            var torn = Array(bytes)
            torn[48 + 16] ^= 1
            #expect(LogIndexHeader(bytes: torn) == nil)
            var uninitialised = Array(bytes)
            uninitialised[12] = 0
            uninitialised[48 + 12] = 0
            #expect(LogIndexHeader(bytes: uninitialised) == nil)
            // Both copies changed alike (damage, not a writer): the checksum no longer matches.
            var damaged = Array(bytes)
            damaged[16] ^= 1
            damaged[48 + 16] ^= 1
            #expect(LogIndexHeader(bytes: damaged) == nil)
            #expect(LogIndexHeader(indexAt: directory) == nil)
            #expect(LogIndexHeader(indexAt: directory + "/none-shm") == nil)
            // A file shorter than the two copies and the checkpoint count (a torn or cut index).
            let short = directory + "/short-shm"
            #expect(FileManager.default.createFile(atPath: short, contents: Data(bytes.prefix(LogIndexHeader.bytesRead - 1))))
            #expect(LogIndexHeader(indexAt: short) == nil)
            #expect(LogIndexHeader(bytes: Array(bytes.prefix(LogIndexHeader.bytesRead - 1))) == nil)

            let large = try Connection(
                filename: directory + "/large.sqlite", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            try large.execute("PRAGMA page_size = 65536; PRAGMA journal_mode = WAL")
            try large.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
            let largeIndex = try #require(LogIndexHeader(indexAt: directory + "/large.sqlite-shm"))
            #expect(largeIndex.pageSize == 65_536)
            #expect(largeIndex.logSize == Int64(try #require(fileBytes(directory + "/large.sqlite-wal")).count))
        }
    }

    /// Frames copied past the last committed one, as a read of the index's file racing a log
    /// that starts over may see (the header's new count, the old copied count after it): no
    /// frame is left to copy, rather than a count that wraps around.
    @Test func framesCopiedPastTheLastCommitLeaveNoneToCopy() {
        let index = LogIndexHeader(lastCommittedFrame: 2, framesCopied: 40, pageSize: 4096, logSalts: 0)
        #expect(index.framesNotCopied == 0)
        #expect(LogIndexHeader(lastCommittedFrame: 40, framesCopied: 2, pageSize: 4096, logSalts: 0).framesNotCopied == 38)
    }

    /// A checkpoint copies the log into the file only while this process holds the log's
    /// write lock (SQLite's "WAL-reset bug" before 3.51.3: `Connection+Checkpoints.swift`).
    /// While another connection holds it, the passive checkpoint copies nothing, at once, and
    /// the truncating one nothing after the busy timeout, where SQLite's TRUNCATE went on as
    /// a passive checkpoint. Once the lock is free, both run.
    @Test func aCheckpointCopiesNothingWhileAnotherConnectionHoldsTheWriteLock() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/raw.sqlite"
            let connection = try open(directory)
            #expect(try connection.enableWriteAheadLogging() == "wal")
            try connection.execute("CREATE TABLE t (x); INSERT INTO t VALUES (zeroblob(100000))")
            try connection.setBusyTimeout(milliseconds: 20)
            let writer = try open(directory)
            try writer.execute("BEGIN IMMEDIATE")
            // Past the coarse clock's tick, so that a write now changes the time.
            usleep(30_000)
            let before = fileSizeAndChangeTime(path)
            #expect(try connection.checkpointPassively() == false)
            #expect(try connection.checkpointTruncating() == false)
            #expect(fileSizeAndChangeTime(path) == before, "the log was copied while another connection wrote")
            writer.rollback()
            #expect(try connection.checkpointPassively())
            #expect(fileSizeAndChangeTime(path) != before)
            try connection.execute("INSERT INTO t VALUES (1)")
            #expect(try connection.checkpointTruncating())
            #expect(fileSizeAndChangeTime(path + "-wal").first == 0)
            #expect(try connection.pragmaInteger("SELECT count(*) FROM t") == 2)
        }
    }

    /// A file put at the path after the write-lock holder was opened: the holder still holds
    /// the lock of the connection's own file, but the checkpoints copy nothing, since the path
    /// no longer names that file (the next launch reads the one there now).
    @Test func aCheckpointCopiesNothingOnceTheFileAtThePathWasReplaced() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/raw.sqlite"
            let moved = directory + "/moved.sqlite"
            let connection = try open(directory)
            #expect(try connection.enableWriteAheadLogging() == "wal")
            try connection.execute("CREATE TABLE t (x)")
            #expect(try connection.checkpointPassively())  // the holder is open from here on
            #expect(connection.writeLockHolder != nil)
            try connection.execute("INSERT INTO t VALUES (zeroblob(100000))")
            #expect(rename(path, moved) == 0)
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            let before = try expectNoCheckpoint(into: moved, connection)
            #expect(fileSizeAndChangeTime(path).first == 0)
            try expectACheckpoint(into: moved, putBackAt: path, since: before, connection)
        }
    }

    /// A second connection that cannot be opened holds no lock: the checkpoints copy nothing
    /// and say so, and neither throws (a discard reports its log not truncated, rather than
    /// failing after its write committed). Here the store's path became a symbolic link to
    /// its file, which the holder, opened without following links, refuses; once the path
    /// names the file again, both run.
    @Test func aCheckpointWhoseLockHolderCannotBeOpenedCopiesNothing() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/raw.sqlite"
            let moved = directory + "/moved.sqlite"
            let connection = try open(directory)
            #expect(try connection.enableWriteAheadLogging() == "wal")
            try connection.execute("CREATE TABLE t (x); INSERT INTO t VALUES (zeroblob(100000))")
            #expect(rename(path, moved) == 0)
            #expect(symlink(moved, path) == 0)
            let before = try expectNoCheckpoint(into: moved, connection)
            try expectACheckpoint(into: moved, putBackAt: path, since: before, connection)
        }
    }

    /// Neither checkpoint copies the log into `moved`, the file `connection` has open, which
    /// its path no longer names; both say so rather than throw. Returns `moved`'s size and
    /// time of change, taken past the coarse clock's tick.
    private func expectNoCheckpoint(into moved: String, _ connection: Connection) throws -> [Int] {
        usleep(30_000)
        let before = fileSizeAndChangeTime(moved)
        #expect(try connection.checkpointPassively() == false)
        #expect(try connection.checkpointTruncating() == false)
        #expect(fileSizeAndChangeTime(moved) == before, "the log was copied into a file the path no longer names")
        return before
    }

    /// Once `moved` is at `path` again (what is there now removed), a truncating checkpoint
    /// copies the log into it.
    private func expectACheckpoint(into moved: String, putBackAt path: String, since before: [Int], _ connection: Connection)
        throws
    {
        #expect(unlink(path) == 0)
        #expect(rename(moved, path) == 0)
        #expect(try connection.checkpointTruncating())
        #expect(fileSizeAndChangeTime(path) != before)
    }

    /// SQLite's reset empties a file it cannot even read as a database.
    @Test func eraseEmptiesAFileThatIsNotADatabase() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/raw.sqlite"
            let file = try #require(fopen(path, "wb"))
            let text = Array(repeating: "not a database\n", count: 1000).joined()
            #expect(fputs(text, file) >= 0)
            fclose(file)
            let connection = try open(directory)
            let error = try #require(throws: DatabaseError.self) { try connection.execute("SELECT * FROM sqlite_schema") }
            #expect(error.resultCode == .notADatabase)
            try connection.eraseEverything()
            try connection.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
            #expect(try connection.pragmaInteger("SELECT x FROM t") == 1)
            #expect(try connection.pragmaText("PRAGMA integrity_check") == "ok")
        }
    }
}
