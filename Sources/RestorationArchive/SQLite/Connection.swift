internal import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One SQLite connection with its cache of prepared statements.
///
/// A connection and its statements are not thread-safe: exactly one owner uses it at a time
/// (``ArchiveStore`` keeps it behind a mutex). It is therefore not `Sendable`.
final class Connection {
    let handle: OpaquePointer
    /// The prepared statements, each with its SQL text, in the order they were first asked
    /// for; `statementWords[i]` is `statements[i]`'s text's ``word(of:)``.
    private var statements: [(sql: String, statement: Statement)] = []
    private var statementWords: [UInt64] = []

    /// Opens a connection with `sqlite3_open_v2`.
    ///
    /// - Parameters:
    ///   - filename: a path, or a `file:` URI when `flags` holds `SQLITE_OPEN_URI`.
    ///   - flags: `SQLITE_OPEN_*` flags; `SQLITE_OPEN_EXRESCODE` is always added so that errors
    ///     carry extended result codes.
    init(filename: String, flags: Int32) throws(DatabaseError) {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(filename, &handle, flags | SQLITE_OPEN_EXRESCODE, nil)
        guard code == SQLITE_OK, let handle else {
            let error = DatabaseError(handle: handle, code: code)
            // A failed open may still allocate a handle, which must be closed.
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
        do {
            try check(restoration_disable_double_quoted_strings(handle))
            try check(restoration_enable_defensive(handle))
            // No checkpoint of SQLite's own: each is the library's, with the write lock held
            // (`Connection+Checkpoints.swift`; ``countPagesInLog()`` takes this one's place).
            try check(sqlite3_wal_autocheckpoint(handle, 0))
            // A checkpoint syncs with F_FULLFSYNC where the system has it (Apple's; SQLite's
            // sync is the same either way elsewhere). A plain fsync there leaves the writes in
            // the drive's cache, to reach the disk in any order: the file's pages could land
            // before the log they were copied from, which then starts over, and a power loss
            // would leave the file torn with nothing to finish it from.
            try execute("PRAGMA checkpoint_fullfsync = ON")
        } catch {
            sqlite3_close_v2(handle)
            throw error
        }
    }

    deinit {
        // Closed first, so that this connection's close is the one that may be the last.
        writeLockHolder = nil
        // The last connection's close copies the log into the file: from a log no path names,
        // a kill during the copy would leave the file torn, with no log to finish it from; by
        // an index not the log's any more, it would copy another connection's pages; from a
        // log lacking commits the index names, what is in their place.
        if logMustNotBeCopied { restoration_skip_checkpoint_on_close(handle) }
        // The hook of `countPagesInLog()` holds this object unretained; a statement kept
        // elsewhere keeps the handle open past this point.
        sqlite3_wal_hook(handle, nil, nil)
        statements.removeAll()
        statementWords.removeAll()
        sqlite3_close_v2(handle)
    }

    /// The first `count` bytes of the database file, read through SQLite's own handle of it;
    /// `nil` when the file is shorter or cannot be read.
    ///
    /// A descriptor of the caller's own would read the same bytes, but closing it would
    /// release every POSIX lock this process holds on the file, its SQLite connections' locks
    /// included: they belong to the process and the file, not to a descriptor. SQLite keeps
    /// its own descriptors open while a connection of the process holds a lock.
    func fileBytes(count: Int) -> [UInt8]? {
        var file: UnsafeMutablePointer<sqlite3_file>? = nil
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK, let file,
            let read = file.pointee.pMethods?.pointee.xRead
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let code = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, Int32($0.count), 0) }
        return code == SQLITE_OK ? bytes : nil
    }

    /// Whether the main database's file was removed, renamed or replaced since the
    /// connection opened it: its path names no file, or another one
    /// (`SQLITE_FCNTL_HAS_MOVED`, one `stat` of the path).
    var hasMoved: Bool {
        var moved: Int32 = 0
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK else { return false }
        return moved != 0
    }

    /// What this connection saw of its log and the log's index (`-shm`), for
    /// ``logFilesAreElsewhere``.
    var logFiles = LogFilesWatch()

    /// The salts of the log's header as ``logLacksCommitsItsIndexNames`` last read them, when
    /// they were the index's: the header of the log this connection has open changes only as
    /// the log starts over, which gives the index new salts.
    var logSaltsRead: UInt64?

    /// Whether ``enableWriteAheadLogging()`` turned the database to write-ahead logging (or
    /// found it so): the connection's journal is a write-ahead log, not a rollback journal.
    private(set) var logsAhead = false

    /// The pages in the write-ahead log after this connection's last commit; 0 until it
    /// commits. Counted once ``countPagesInLog()`` is called.
    var pagesInLog = 0

    /// A second connection to this one's database file, opened by its first checkpoint, that
    /// holds the write-ahead log's write lock while this one checkpoints
    /// (``withTheWriteLockHeld(waiting:_:)``).
    var writeLockHolder: Connection?

    /// Sets how long a statement waits for another connection's lock (`sqlite3_busy_timeout`).
    func setBusyTimeout(milliseconds: Int32) throws(DatabaseError) {
        try check(sqlite3_busy_timeout(handle, milliseconds))
        busyTimeout = milliseconds
    }

    /// The busy timeout last set by ``setBusyTimeout(milliseconds:)``, in milliseconds: 0, no
    /// waiting, until then.
    private(set) var busyTimeout: Int32 = 0

    /// Turns the database to write-ahead logging unless it is in it already, and returns the
    /// journal mode it is in then (`"wal"`, unless SQLite refused).
    ///
    /// A database in write-ahead logging is left as it is: the change needs no lock then.
    /// Otherwise (a new, empty file) the change needs the write lock, and while another
    /// connection holds it (another process turning the same new file to write-ahead
    /// logging) SQLite fails at once with `SQLITE_BUSY`: it runs no busy handler for a
    /// connection that holds a read lock as it asks, since waiting could deadlock. The change
    /// is then tried again, 1 ms apart at first and up to 16 ms, until the busy timeout has
    /// passed.
    func enableWriteAheadLogging() throws -> String? {
        if try pragmaText("PRAGMA journal_mode") == "wal" {
            logsAhead = true
            return "wal"
        }
        let deadline = ContinuousClock.now + .milliseconds(busyTimeout)
        var pause: UInt32 = 1_000
        while true {
            do {
                let mode = try pragmaText("PRAGMA journal_mode = WAL")
                logsAhead = mode == "wal"
                return mode
            } catch let error as DatabaseError where error.resultCode == .busy && ContinuousClock.now < deadline {
                usleep(pause)
                pause = min(pause * 2, 16_000)
            }
        }
    }

    /// Runs SQL text that binds nothing (schema, pragmas), one or several statements,
    /// with `sqlite3_exec`. Never use it with values: those go through ``statement(_:)``.
    func execute(_ sql: String) throws(DatabaseError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            let extended = sqlite3_extended_errcode(handle)
            throw DatabaseError(
                extendedCode: extended & 0xFF == code & 0xFF ? extended : code,
                message: message.map { String(cString: $0) }, sql: sql)
        }
    }

    /// A prepared statement for `sql`, cached by its text, reset and with no bindings.
    ///
    /// The cache is a list searched in order by one word of each text (a connection prepares
    /// a few dozen texts): comparing words costs less than the `Dictionary` it replaced, whose
    /// lookups took about 800 instructions, and a `Dictionary` keyed by a type of ours cost
    /// each process a scan of every protocol conformance the first time it was used (about
    /// 390,000 instructions on Linux: BENCHMARKS.md, "Cold launches"). Texts that make the
    /// same word only cost an equality check more.
    func statement(_ sql: String) throws(DatabaseError) -> Statement {
        let word = UTF8Text.withBytes(of: sql, Self.word(of:))
        var index = 0
        while let found = statementWords[index...].firstIndex(of: word) {
            if statements[found].sql == sql {
                let cached = statements[found].statement
                cached.reset()
                return cached
            }
            index = found + 1
        }
        let statement = try Statement(connection: self, sql: sql)
        statements.append((sql, statement))
        statementWords.append(word)
        return statement
    }

    /// One word made of a text's length and its first 16 and last 8 bytes. Hashing the whole
    /// text (often 100–200 bytes) cost about 2,000 instructions per lookup, and hashing those
    /// bytes through `Hasher` about 300, more than binding a statement's values.
    private static func word(of bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var word = UInt64(count) &* 0x9E37_79B9_7F4A_7C15
        guard count >= 16 else {
            for byte in bytes { word = (word ^ UInt64(byte)) &* 0x100_0000_01B3 }
            return word
        }
        word ^= bytes.loadUnaligned(as: UInt64.self) &* 0xC2B2_AE3D_27D4_EB4F
        word ^= bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self) &* 0x85EB_CA77_C2B2_AE63
        return word ^ bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    }

    /// The single text value a pragma (or any one-value query) returns, if any.
    func pragmaText(_ sql: String) throws -> String? {
        let statement = try statement(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return try statement.optionalString(0)
    }

    /// The single integer value a pragma (or any one-value query) returns, if any.
    func pragmaInteger(_ sql: String) throws -> Int64? {
        let statement = try statement(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return try statement.optionalInt64(0)
    }

    /// Whether a transaction is open on this connection.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// How a transaction takes its locks.
    enum TransactionKind: String {
        /// `BEGIN DEFERRED`: a read transaction until the first write; readers use it for a
        /// consistent snapshot.
        case deferred = "BEGIN DEFERRED"
        /// `BEGIN IMMEDIATE`: takes the write lock at once (waiting up to the busy timeout),
        /// so a write transaction never fails half-way with `SQLITE_BUSY`.
        case immediate = "BEGIN IMMEDIATE"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// An immediate transaction (a write) on a database whose file was removed, renamed or
    /// replaced since the connection opened it fails with
    /// ``ResultCode/readOnlyDatabaseMoved`` before it begins (``hasMoved``), and so does one
    /// whose write-ahead log's path no longer names the log it has open, or whose log's index
    /// is not the one it was, once it holds the write lock (``logFilesAreElsewhere``). SQLite
    /// refuses such a write itself with a rollback journal, whose name would no longer match
    /// the file's; in WAL mode it commits the write, without an error, into the files it has
    /// open, which the paths no longer name: a removed file's writes are lost when the
    /// connection closes, a removed log's when the process is killed. One whose log lacks
    /// commits the index names (the log made again by this connection while another had the
    /// store open, ``logLacksCommitsItsIndexNames``) fails with
    /// ``ResultCode/ioErrorShortRead``: SQLite would commit after them, where the next launch
    /// does not read.
    func transaction<Result>(_ kind: TransactionKind, _ body: () throws -> Result) throws -> Result {
        if kind == .immediate, hasMoved {
            throw DatabaseError(
                extendedCode: ResultCode.readOnlyDatabaseMoved.rawValue,
                message: "the database file was removed, renamed or replaced since it was opened")
        }
        try control(kind.rawValue)
        if kind == .immediate, let elsewhere = logFileElsewhere {
            rollback()
            throw DatabaseError(
                extendedCode: ResultCode.readOnlyDatabaseMoved.rawValue,
                message: "the \(elsewhere.role) (\(elsewhere.suffix)) was removed or renamed since it was opened")
        }
        if kind == .immediate {
            do { try checkTheLogHoldsWhatItsIndexNames() } catch {
                rollback()
                throw error
            }
        }
        let result: Result
        do {
            result = try body()
        } catch {
            rollback()
            throw error
        }
        do {
            try control("COMMIT")
        } catch {
            rollback()
            throw error
        }
        return result
    }

    /// Runs `body` in a read transaction (`BEGIN DEFERRED`): everything it reads comes from
    /// one committed state of the database.
    ///
    /// The transaction ends with `ROLLBACK`, which always releases the snapshot: a `COMMIT`
    /// would fail once more on damage the body met and handled (a corrupt page seen by
    /// `PRAGMA integrity_check`, for instance). `body` must not write; what it wrote would be
    /// rolled back.
    ///
    /// `body` may run more than once. A connection that maps the write-ahead log's index
    /// read-only (`readonly_shm`, a read-only store while the app has it open) cannot write
    /// that index, and SQLite fails its read when the index is, for an instant, in a state
    /// only a writer could mend:
    /// - `SQLITE_READONLY_RECOVERY` when the index's header reads torn while the write lock
    ///   is free: also when a writer has just finished updating the header between the two
    ///   looks.
    /// - `SQLITE_READONLY_CANTINIT` when no read mark is at or below the last frame the
    ///   header gave: also when a writer committed between the look at the header and the
    ///   look at the marks, and then moved the only mark in use past it. (A connection that
    ///   can write the index sets a mark of its own.)
    ///
    /// The transaction is then run again, up to ``unmendedIndexAttempts`` times a millisecond
    /// apart: the next attempt reads the header again, and a writer's update is over by then,
    /// while an index that stays so (damaged while another process has it open; with none,
    /// SQLite reads the log without the index) still is, and the error is thrown.
    func readTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        var attempt = 1
        while true {
            do {
                try control(TransactionKind.deferred.rawValue)
                defer {
                    assert(sqlite3_txn_state(handle, "main") != SQLITE_TXN_WRITE, "a read transaction wrote")
                    rollback()
                }
                return try body()
            } catch let error as DatabaseError
                where Self.needsAWriterOfTheIndex(error) && attempt < Self.unmendedIndexAttempts
            {
                attempt += 1
                usleep(1_000)
            }
        }
    }

    /// How many times ``readTransaction(_:)`` runs a read that meets an index only a writer
    /// could mend.
    static let unmendedIndexAttempts = 20

    /// Whether `error` is SQLite's answer to a read-only connection that found the
    /// write-ahead log's index in a state only a connection that can write the index mends
    /// (see ``readTransaction(_:)``).
    static func needsAWriterOfTheIndex(_ error: DatabaseError) -> Bool {
        error.extendedResultCode == .readOnlyRecovery || error.extendedResultCode == .readOnlyCantInit
    }

    /// Rolls back the open transaction, if SQLite has not already done so.
    func rollback() {
        if isInTransaction { _ = try? control("ROLLBACK") }
    }

    /// Runs a statement that begins or ends a transaction, prepared once and cached: through
    /// `sqlite3_exec` each was parsed again every time, about 4,000 instructions, twice per
    /// transaction (a one-node save, a read, a launch's several commits).
    func control(_ sql: String) throws(DatabaseError) {
        try statement(sql).run()
    }

    // MARK: Copying

    /// The largest database this library holds in memory (a log replayed without SQLite, a
    /// copy migrated for a read-only open): 1 GiB, SQLite's own default largest deserialized
    /// database (`SQLITE_MEMDB_DEFAULT_MAXSIZE`). A restoration store is a few megabytes; a
    /// file that says more (damage, a sparse file of terabytes) is refused rather than read
    /// until the process that reads it runs out of memory.
    static let largestInMemory = 1 << 30

    /// A copy of this connection's database in memory, read in the caller's read transaction
    /// (open one first: see ``readTransaction(_:)``), with SQLite's online backup. The copy
    /// holds what that transaction sees, the write-ahead log's commits included; it shares
    /// nothing with the file. A database larger than ``largestInMemory`` is not copied:
    /// `SQLITE_FULL`, as SQLite answers a database in memory that would grow past it.
    func copyInMemory() throws -> Connection {
        let bytes = try pageCounts().bytes
        guard bytes <= Self.largestInMemory else {
            throw DatabaseError(
                extendedCode: SQLITE_FULL,
                message: "the database, \(bytes) bytes, is larger than the \(Self.largestInMemory) bytes this library "
                    + "copies into memory (a read-only open reads a store of an older schema through a copy migrated "
                    + "in memory; a read-write open migrates the file itself)")
        }
        let copy = try Connection(filename: ":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)
        guard let backup = sqlite3_backup_init(copy.handle, "main", handle, "main") else {
            throw DatabaseError(handle: copy.handle, code: sqlite3_errcode(copy.handle))
        }
        // -1: every page in one step, so the copy is of one state of the database.
        let stepped = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE else { throw DatabaseError(extendedCode: stepped, message: nil) }
        try copy.check(finished)
        return copy
    }

    /// A connection to a database in memory of `byteCount` bytes, which `fill` writes (the
    /// bytes of a database file in rollback mode: a database in memory has no write-ahead
    /// log), writable; it shares nothing with any file. `nil` when `fill` returns `false`.
    /// The bytes are SQLite's from the start (`sqlite3_malloc64`), which frees them with the
    /// connection: memory SQLite cannot have is its error (`SQLITE_NOMEM`), and the database
    /// is never held twice. An empty database when `byteCount` is 0 (`fill` is not called).
    static func inMemory(byteCount: Int, filling fill: (UnsafeMutableRawBufferPointer) -> Bool)
        throws(DatabaseError) -> Connection?
    {
        let connection = try Connection(filename: ":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)
        guard byteCount > 0 else { return connection }
        guard let bytes = sqlite3_malloc64(UInt64(byteCount)) else {
            throw DatabaseError(extendedCode: SQLITE_NOMEM, message: nil)
        }
        guard fill(UnsafeMutableRawBufferPointer(start: bytes, count: byteCount)) else {
            sqlite3_free(bytes)
            return nil
        }
        // SQLite frees them with the connection, or at once when it fails.
        let size = Int64(byteCount)
        let flags = UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE)
        try connection.check(
            sqlite3_deserialize(connection.handle, "main", bytes.assumingMemoryBound(to: UInt8.self), size, size, flags))
        return connection
    }

    /// Replaces this connection's database with a copy of `source`'s, in one write
    /// transaction, with SQLite's online backup: another connection reads the old database or
    /// the new one, never one in between, and reads the new schema (the backup moves the
    /// schema version past the one the file had). The file keeps its journal mode. Waits up
    /// to the busy timeout for another connection's write lock.
    ///
    /// Fails when SQLite cannot read this database's first page (damage) or its page size
    /// differs from `source`'s in write-ahead logging.
    func replaceContents(with source: Connection) throws(DatabaseError) {
        guard let backup = sqlite3_backup_init(handle, "main", source.handle, "main") else {
            throw DatabaseError(handle: handle, code: sqlite3_errcode(handle))
        }
        // -1: every page in one step, so the copy is written in one transaction.
        let stepped = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE else { throw DatabaseError(handle: handle, code: stepped) }
        try check(finished)
    }

    // MARK: Erasing

    /// Empties the database, however malformed its pages are, with SQLite's reset: the schema
    /// is read (its errors do not matter), then `VACUUM` with `SQLITE_DBCONFIG_RESET_DATABASE`
    /// set writes an empty database in one transaction, in the same journal mode.
    ///
    /// The reset starts the schema version again at 1, and a connection compares that version
    /// with the one it read the schema at before each transaction. Another connection that
    /// read ours at a version the new schema reaches again would read the new tables through
    /// the old root pages. So the version is then moved past the one the file had.
    func eraseEverything() throws(DatabaseError) {
        _ = try? pragmaInteger("SELECT count(*) FROM sqlite_schema")
        let previous = try? pragmaInteger("PRAGMA schema_version")
        try check(restoration_set_reset_database(handle, 1))
        do {
            try execute("VACUUM")
        } catch {
            _ = restoration_set_reset_database(handle, 0)
            throw error
        }
        try check(restoration_set_reset_database(handle, 0))
        // A file SQLite could not read as a database had no version another connection
        // could have read the schema at; any far from the new schema's does.
        let next =
            previous.flatMap { $0 < Int64(Int32.max) ? $0 + 1 : nil } ?? Int64.random(in: 1 << 16...1 << 30)
        // Defensive mode ignores this pragma without an error.
        try check(restoration_set_defensive(handle, 0))
        defer { _ = restoration_set_defensive(handle, 1) }
        try execute("PRAGMA schema_version = \(next)")
    }

    /// Number of rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The rowid of the row the connection's last successful `INSERT` added
    /// (`sqlite3_last_insert_rowid`): a table's `INTEGER PRIMARY KEY`. Reading it costs
    /// nothing, where an `INSERT … RETURNING` is prepared and run as a query.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Number of rows changed since the connection opened (`sqlite3_total_changes64`).
    var totalChanges: Int { Int(sqlite3_total_changes64(handle)) }

    func check(_ code: Int32) throws(DatabaseError) {
        guard code == SQLITE_OK else { throw DatabaseError(handle: handle, code: code) }
    }
}

@available(*, unavailable, message: "A connection is used by one owner at a time")
extension Connection: Sendable {}
