internal import CSQLite
public import Logging

/// A store of restoration archives: one SQLite file holding one archive per scene or
/// window (``ArchiveName/main`` by default), each with its recent generations.
///
/// Open it at launch, read the newest generation to restore from, and save a new generation
/// when the app goes to the background:
///
/// ```swift
/// let store = try ArchiveStore(appIdentifier: "com.example.orders")
/// if let snapshot = try store.snapshot(of: .main) {
///     restore(from: snapshot.nodes)
/// }
/// let header = SaveHeader(appVersion: "11.0", appBuild: "1024")
/// try store.save(preservedNodes(), header: header, in: .main)
/// ```
///
/// Saves are atomic: a reader, in this process or another, sees the previous generation or
/// the new one, never a mix. A store is safe to use from any thread or task; calls are
/// serialized on its one connection. Open a second `ArchiveStore` (for instance read-only)
/// to read while another writes.
public final class ArchiveStore: Sendable {
    /// The archive format this library writes into every header (``ArchiveHeader/storeFormat``).
    public static let storeFormat = 1

    /// The schema version this library migrates every store to: the number of migrations it
    /// knows. A store of a newer version is refused
    /// (``ArchiveStoreError/schemaTooNew(storeVersion:libraryVersion:)``).
    public static var schemaVersion: Int { SchemaMigrator().libraryVersion }

    /// The version of the SQLite library this process runs, as it names itself
    /// (`sqlite3_libversion()`, e.g. `"3.40.1"`): what a bug report about a store should
    /// give, since SQLite's own bugs and limits differ between versions.
    public static var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    /// The longest reason the store keeps, in bytes of UTF-8: why an archive was discarded
    /// (``discard(_:reason:)``) and why a restoration was refused or failed (its
    /// ``RestoreReport``). A longer reason is kept cut, to its longest prefix of whole
    /// characters that fits with "…" after it: the discard or the report it explains is
    /// never refused for its length, and a reason an app builds from something unbounded
    /// (an error's description, a value it read) cannot grow the store without bound.
    public static let maximumReasonLength = 1_024

    /// How the store is opened.
    public enum AccessMode: Hashable, Sendable {
        /// Creates the store if needed, migrates its schema, and can save.
        case readWrite
        /// Never writes and never creates a file: for inspection (`restorectl`) while an app
        /// may be running. A missing store is ``ArchiveStoreError/storeNotFound(path:)``.
        ///
        /// While an app has the store open (its `-wal` file exists) reads go through SQLite's
        /// read-only WAL mode and always see committed saves. When no app has it open, the file
        /// is read as immutable, which needs no lock and no side file. Each call then first
        /// checks that the file is as it was (its size and times of change) and that no `-wal`
        /// has appeared; if an app wrote it, the store opens it again, so reads still see every
        /// committed save. A call during which the file or its `-wal` changed (an app wrote
        /// it) is run again on the file as it is then, whether it failed or not, until one
        /// finds nothing changed; after five such calls in a row it throws
        /// ``ResultCode/busy`` in ``ArchiveStoreError/database(_:)``, as for a lock held too
        /// long: try again later.
        ///
        /// A store of an older schema (saved by an earlier version of this library, not yet
        /// opened read-write by the new one) is read through a copy in memory, migrated as the
        /// app's next read-write open will migrate the file; the file is left as it is. The
        /// copy costs memory of the store's size, and is made again when the file or its
        /// `-wal` changes; a store larger than 1 GiB is not copied (``ResultCode/full`` in
        /// ``ArchiveStoreError/database(_:)``, as SQLite answers a database in memory grown
        /// past that). So is a store whose `-wal` lost its index (the `-shm` file, removed
        /// by a cleaning tool or left out of a copy of a killed app's files), which SQLite
        /// reads only through a connection that writes the index: the file and the log's
        /// commits are replayed in the copy, as the app's next read-write open will recover
        /// them, reading the log's frames and the pages its last commit keeps, whatever the
        /// files' lengths. A log that only SQLite's own recovery may judge, or a store that
        /// would be larger than 1 GiB in memory, is refused with
        /// ``ArchiveStoreError/writeAheadLogNeedsRecovery(path:)``.
        ///
        /// Do not open a store read-only in the process that then opens it read-write while
        /// its `-wal` file exists (say, after a crash): SQLite shares the first connection's
        /// read-only mapping of the `-shm` file with the second, whose writes then fail with
        /// SQLite's `SQLITE_READONLY`. Read through the read-write store instead.
        case readOnly
    }

    /// How hard a save works to survive power loss.
    public enum Durability: Hashable, Sendable {
        /// `synchronous=NORMAL` in WAL mode: a process crash never loses a committed save.
        /// A power loss (or the system crashing) never corrupts the file (the checkpoints that
        /// copy the write-ahead log into it sync with `F_FULLFSYNC` where the system has it,
        /// as Apple's do), but may take back more than the last save: the saves, journal
        /// entries and discards committed since the log was last copied into the file, newest
        /// first (the store then reads as it was after an earlier commit, each generation
        /// whole, or as it was when the log was copied). The log is copied when it reaches
        /// 1,000 pages, before the first save of an opening or after a move towards the
        /// background that finds it 128 pages long or longer (so that save itself is still
        /// only in the log), and when the store's last connection closes. In the torture
        /// suite's `power-cut` scenario (saves of 5 to 120 nodes), about 4 launches in 10 after
        /// a power cut lost acknowledged saves, up to 13 generations of an archive. The default.
        case normal
        /// `synchronous=FULL`: every committed save, journal entry and discard also survives
        /// power loss, at the cost of an fsync per commit (with `F_FULLFSYNC` where the
        /// system has it, as Apple's do: their plain fsync leaves the data in the drive's
        /// cache).
        case full
    }

    /// Settings of a store.
    public struct Configuration: Hashable, Sendable {
        /// How many generations of each archive stay readable (at least 1; 2 by default, so
        /// that a crash policy can fall back to the previous one). Older ones are pruned in
        /// the transaction of the save that makes them too old. The store's file holds the
        /// rows of every retained generation: after full saves, this many copies of an
        /// archive's nodes (incremental saves share the rows they leave unchanged).
        public var retainedGenerations: Int
        /// How long a call waits for another connection's write lock before failing with
        /// ``ResultCode/busy``. SQLite counts it in whole milliseconds, up to about 24.8 days:
        /// a longer one (`.seconds(.max)`, "as long as it takes") waits that long.
        public var busyTimeout: Duration
        /// See ``Durability``.
        public var durability: Durability
        /// What a launch does with a generation whose restoration the app did not survive;
        /// ``CrashPolicy/discard`` by default.
        public var crashPolicy: CrashPolicy
        #if Encryption
        /// The key that seals every node's state on disk, as UIKit encrypts its restoration
        /// archives; `nil` (the default) stores states as they are. Each state is bound to its
        /// node: its archive, path, class name, class version and order, and the generation
        /// that wrote it (a state sealed by an earlier version of this library, which bound
        /// archive, path and generation only, opens bound as it was until a save writes its
        /// node again). Paths, class names, headers and the journal are not encrypted.
        ///
        /// Set it when the store is created: states saved without it are refused
        /// (``ArchiveStoreError/sealRejected(_:_:_:)``) once a key is set, and a store opened
        /// with a key other than its first refuses to open (``ArchiveStoreError/wrongEncryptionKey``).
        public var encryptionKey: StateEncryptionKey?
        #endif

        /// A configuration; each setting defaults to the value its documentation gives.
        public init(
            retainedGenerations: Int = 2, busyTimeout: Duration = .seconds(5), durability: Durability = .normal,
            crashPolicy: CrashPolicy = .discard
        ) {
            self.retainedGenerations = retainedGenerations
            self.busyTimeout = busyTimeout
            self.durability = durability
            self.crashPolicy = crashPolicy
        }
    }

    /// The store file's path.
    public let path: String
    /// How the store was opened.
    public let mode: AccessMode
    /// The store's settings.
    public let configuration: Configuration

    /// Where diagnostics go: opens, migrations, saves, discards (never stored values).
    let logger: Logger?
    /// Seals and opens node states when the store has an encryption key.
    let seal: StateSeal?
    // The connection is not thread-safe; the mutex gives one caller at a time exclusive use.
    private let connection: Locked<OpenConnection>
    /// The launch this store's lifecycle events belong to; `nil` until it records one.
    /// Changed only while the connection is held.
    let currentLaunch = Locked<StoreLaunch?>(nil)
    /// Whether a restoration started ``currentLaunch`` (the app had recorded no event) and the
    /// app has recorded none since: the app's `willFinishLaunching` then belongs to it.
    /// Changed only while the connection is held.
    let launchAwaitsTheApp = Locked(false)
    /// The store file as this process's registries of restorations and launches in progress
    /// know it, from the `stat` taken when the store was opened.
    let file: StoreFileIdentity

    deinit {
        if let launch = currentLaunch.withLock({ $0 }) { Self.launchEnded(launch, of: file) }
    }

    /// Opens (and in read-write mode creates and migrates) the store at `path`.
    ///
    /// In read-write mode, missing folders are created 0700 (each synced into the folder it
    /// was made in, so that a power loss keeps it) and the file 0600, whatever the umask. In
    /// both modes a symbolic link at `path` is refused; links among the folders on the way
    /// are followed.
    ///
    /// - Throws: ``ArchiveStoreError`` — among others ``ArchiveStoreError/storeNotFound(path:)``
    ///   (read-only), ``ArchiveStoreError/notAStore(path:reason:)``,
    ///   ``ArchiveStoreError/symbolicLinkAtStorePath(path:)``,
    ///   ``ArchiveStoreError/schemaTooNew(storeVersion:libraryVersion:)``,
    ///   ``ArchiveStoreError/migrationChanged(identifier:)``,
    ///   ``ArchiveStoreError/invalidLocation(_:)`` (a path that names no file, being empty or
    ///   ending with `/`, `.` or `..`, or one longer than SQLite opens) and
    ///   ``ArchiveStoreError/fileSystem(operation:path:errno:)`` (read-write: a file the
    ///   process may not write, or a folder in which SQLite cannot create the write-ahead log).
    /// - Parameters:
    ///   - path: the store file's path.
    ///   - mode: read-write (the app) or read-only (inspection).
    ///   - configuration: retention, busy timeout and durability.
    ///   - logger: where diagnostics go (paths, generations, counts; never stored values).
    public init(
        path: String, mode: AccessMode = .readWrite, configuration: Configuration = Configuration(),
        logger: Logger? = nil
    ) throws(ArchiveStoreError) {
        guard configuration.retainedGenerations >= 1 else {
            throw .invalidConfiguration("retainedGenerations must be at least 1")
        }
        guard configuration.busyTimeout >= .zero else {
            throw .invalidConfiguration("busyTimeout must not be negative")
        }
        if case .retry(let attempts) = configuration.crashPolicy, attempts < 1 {
            throw .invalidConfiguration("a retry crash policy needs at least 1 attempt")
        }
        try SQLiteVersion.check()
        self.path = path
        self.mode = mode
        self.configuration = configuration
        self.logger = logger
        #if Encryption
        let seal = configuration.encryptionKey.map { StateSeal(key: $0.key) }
        #else
        let seal: StateSeal? = nil
        #endif
        self.seal = seal
        let (opened, file) = try Self.translatingErrors(path: path) {
            try Self.open(path: path, mode: mode, configuration: configuration, logger: logger, seal: seal)
        }
        self.connection = Locked(opened)
        self.file = file
        logger?.debug("Opened the archive store at '\(path)' (\(mode == .readWrite ? "read-write" : "read-only"))")
    }

    /// The store's connection, and what it reads: the store live, or as it was when opened.
    struct OpenConnection {
        let connection: Connection
        let source: StoreLocation.ReadOnlySource
        /// Whether a save tried to copy a long write-ahead log into the database file already,
        /// which one does once per opening and once per move to the background the app records
        /// (`write(shorteningTheLog:_:)`).
        var triedToShortenTheLog = false

        /// Whether the connection reads the store as it was, and the store changed since:
        /// what it reads would be the state of then, or a mix with pages of now.
        func isStale(path: String) -> Bool { source.isStale(path: path) }
    }

    /// Opens a connection as ``init(path:mode:configuration:logger:)`` and a stale read-only
    /// connection do.
    private static func open(
        path: String, mode: AccessMode, configuration: Configuration, logger: Logger?, seal: StateSeal?
    ) throws -> (OpenConnection, StoreFileIdentity) {
        switch mode {
        case .readWrite:
            let (connection, file) = try Self.openForWriting(path: path, configuration: configuration, logger: logger)
            if let seal { try Self.checkKey(seal, connection, writing: true) }
            return (OpenConnection(connection: connection, source: .live), file)
        case .readOnly:
            let (connection, file, source) = try Self.openForReading(
                path: path, configuration: configuration, logger: logger)
            // In a read transaction, which reads again past a log index torn by a writer.
            if let seal { try connection.readTransaction { try Self.checkKey(seal, connection, writing: false) } }
            return (OpenConnection(connection: connection, source: source), file)
        }
    }

    /// Opens (creating if needed) the store at the platform's default location for an app;
    /// see ``defaultPath(appIdentifier:)``.
    public convenience init(
        appIdentifier: String, mode: AccessMode = .readWrite, configuration: Configuration = Configuration(),
        logger: Logger? = nil
    ) throws(ArchiveStoreError) {
        try self.init(
            path: Self.defaultPath(appIdentifier: appIdentifier), mode: mode, configuration: configuration, logger: logger)
    }

    /// The default store path of an app: on Linux `$XDG_STATE_HOME/<appIdentifier>/restoration.sqlite`,
    /// or `~/.local/state/<appIdentifier>/restoration.sqlite` when `XDG_STATE_HOME` is unset;
    /// on Apple platforms `~/Library/Application Support/<appIdentifier>/restoration.sqlite`.
    ///
    /// - Parameter appIdentifier: a file name identifying the app, such as `com.example.orders`.
    /// - Throws: ``ArchiveStoreError/invalidLocation(_:)`` for an identifier that is not a
    ///   file name (empty, `.`, `..`, with `/` or a control character, over 255 bytes), when
    ///   the environment names no absolute folder, and when the folder it names is not UTF-8
    ///   (a `String` cannot name it).
    public static func defaultPath(appIdentifier: String) throws(ArchiveStoreError) -> String {
        try StoreLocation.defaultPath(appIdentifier: appIdentifier)
    }

    // MARK: Opening

    static func openForWriting(path: String, configuration: Configuration, logger: Logger?) throws -> (
        Connection, StoreFileIdentity
    ) {
        let (file, filename, beside) = try StoreLocation.prepareForWriting(path: path)
        // SQLite rebuilds an index left without its log from nothing, silently.
        if !beside.contains(.log), beside.contains(.index), let index = LogIndexHeader(indexAt: path + "-shm"),
            index.framesNotCopied > 0
        {
            logger?.warning(
                """
                The write-ahead log of '\(path)' was removed (while a process had the store open, or after one was \
                killed) with \(index.framesNotCopied) frames of commits not yet copied into the file: the saves and \
                events they held are lost
                """)
        }
        // No SQLITE_OPEN_CREATE: the file exists (created 0600 above), and SQLite must never
        // create one with its default mode.
        let connection = try Connection(
            filename: filename,
            flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX)
        try connection.setBusyTimeout(milliseconds: milliseconds(configuration.busyTimeout))
        let migrator = SchemaMigrator()
        // Refuse a store we cannot serve before writing anything to it.
        let status = try inspectedSchema(connection, path: path, migrator: migrator)
        let journalMode = try connection.enableWriteAheadLogging()
        guard journalMode == "wal" else {
            throw ArchiveStoreError.notAStore(
                path: path, reason: "SQLite refused write-ahead logging (journal mode '\(journalMode ?? "none")')")
        }
        // The log and its index as SQLite opened them with the first read.
        connection.lookAtTheLogFiles()
        switch configuration.durability {
        case .normal: try connection.execute("PRAGMA synchronous = NORMAL")
        // Each commit synced with F_FULLFSYNC where the system has it (Apple's): a plain
        // fsync there leaves the commit in the drive's cache, which a power loss empties.
        case .full: try connection.execute("PRAGMA synchronous = FULL; PRAGMA fullfsync = ON")
        }
        try connection.execute("PRAGMA foreign_keys = ON")
        // SQLite keeps the write-ahead log's size to reuse it: a save larger than the log's
        // usual cycle (copied back into the file at 1,000 pages, 4 MiB) left a log that large
        // for as long as the app ran, and after it was killed (74 MB at 100,000 nodes). The
        // first commit after the log starts over cuts it back to 4 MiB.
        try connection.execute("PRAGMA journal_size_limit = \(Self.writeAheadLogSizeLimit)")
        // For saves to keep the log short (`write(shorteningTheLog:_:)`).
        connection.countPagesInLog()
        // Deleted content is overwritten with zeros, so discarded and pruned state does not
        // linger in free pages of the file.
        try connection.execute("PRAGMA secure_delete = ON")
        // An up-to-date store is opened without taking the write lock: a launch never waits
        // for another process's save just to learn that nothing needs migrating.
        if status != .compatible(pending: 0) {
            try migrator.migrate(connection, path: path)
            logger?.info("Migrated the archive store at '\(path)' to schema version \(migrator.libraryVersion)")
        }
        return (connection, file)
    }

    /// The size in bytes the write-ahead log is cut back to (`journal_size_limit`).
    static let writeAheadLogSizeLimit = 4 << 20

    /// Opens the store read-only, without creating or writing any file. A store of an older
    /// schema is read through a copy in memory, migrated as the app's next read-write open
    /// will migrate the file; so is one whose write-ahead log has lost its index (`-shm`),
    /// which only a connection that writes the index can read through SQLite: the file and
    /// its log are read and replayed in the copy, as that connection will recover them
    /// (``LogReplay``).
    ///
    /// An opening that reads the file alone reads it again when the file or its log changed
    /// as it read (an app's checkpoint copying its log into the file), whether it failed or
    /// not, as the calls after it do (`withOpenConnection(_:)`); one that found the log's
    /// index looks again when SQLite does not find it (``IndexWentBeforeTheOpening``).
    ///
    /// Without a log, or with one that holds no frame, the file is read alone: an index left
    /// beside it that names commits the file does not hold says a log was removed or cut
    /// (while a process had the store open, after one was killed, or by a power cut), and the
    /// file alone is the store as it was before them: the open throws
    /// ``ArchiveStoreError/writeAheadLogNeedsRecovery(path:)``. Unless the log changed since it
    /// was looked at: an app writing the store adds a commit's frames to its log before its
    /// index names them, so a log found empty (just emptied by a discard or an erase, or new)
    /// and an index read a moment later that names the next commit are a look that raced a
    /// write, not a lost log, and the store is looked at again. (Such a look was refused:
    /// `restorectl` beside an app discarding and saving in a loop, 58 of 1,621 opens.)
    private static func openForReading(path: String, configuration: Configuration, logger: Logger?) throws -> (
        Connection, StoreFileIdentity, StoreLocation.ReadOnlySource
    ) {
        // SQLite's failure to open the index at the last look that met one, and how many did.
        var (indexFailure, looksThatLostTheIndex): (ArchiveStoreError?, Int) = (nil, 0)
        for _ in 0..<maximumReadsOfAChangingStore {
            let (stamp, filename, beside, names) = try StoreLocation.checkForReading(path: path)
            let opening = StoreLocation.readOnlyOpening(
                file: stamp, sqliteFilename: filename,
                log: beside.contains(.log) ? StoreLocation.FileStamp(path: path + "-wal") : nil,
                indexExists: beside.contains(.index))
            if case .frozen = opening.source, beside.contains(.index),
                let index = LogIndexHeader(indexAt: path + "-shm"), index.framesNotCopied > 0
            {
                if opening.source.isStale(path: path) { continue }
                throw ArchiveStoreError.writeAheadLogNeedsRecovery(path: path)
            }
            do {
                let opened = try openForReading(path: path, stamp: stamp, opening: opening, configuration: configuration)
                guard opening.source.isStale(path: path) else {
                    // A read-write open refuses such a file (`StoreLocation.checkExisting(path:)`).
                    if names > 1 {
                        logger?.warning(
                            """
                            The store's file at '\(path)' has \(names) names (hard links): this read-only open reads what \
                            was saved through this name, not what another name's write-ahead log holds, and a read-write \
                            open refuses the store
                            """)
                    }
                    return opened
                }
            } catch where opening.source.isStale(path: path) {
                // Pages of two states met: the error may be theirs.
            } catch let went as IndexWentBeforeTheOpening {
                // The next look replays the log, reads the file alone, or reads through the
                // index made since.
                (indexFailure, looksThatLostTheIndex) = (went.failure, looksThatLostTheIndex + 1)
            }
        }
        if looksThatLostTheIndex == maximumReadsOfAChangingStore, let indexFailure { throw indexFailure }
        throw changingStore()
    }

    /// What `migrator` finds of the store's schema at an opening's first read (read-write or
    /// read-only). Another connection that had the store open as its log was removed keeps
    /// the index naming the removed log's commits, and SQLite made the log again for this
    /// one: a store opened so would fail its reads of them (or read zeros where the log has
    /// holes), and commit where the next launch does not read. Such a log found after the
    /// read, or one that explains its error (``blamingALogThatLacksCommits(_:_:path:)``),
    /// throws ``ArchiveStoreError/writeAheadLogNeedsRecovery(path:)``; so does an empty
    /// database read through it. Every error is thrown translated (``translated(_:path:)``).
    private static func inspectedSchema(_ connection: Connection, path: String, migrator: SchemaMigrator) throws
        -> SchemaMigrator.Status
    {
        let status: SchemaMigrator.Status
        do {
            status = try connection.readTransaction { try migrator.inspect(connection, path: path) }
        } catch {
            throw blamingALogThatLacksCommits(error, connection, path: path)
        }
        do {
            try connection.checkTheLogHoldsWhatItsIndexNames()
        } catch {
            throw translated(error, path: path)
        }
        return status
    }

    /// Why a store that reads as an empty SQLite database is not a store. A log beside it
    /// that is not empty holds no commit SQLite reads, or the store's schema would be there:
    /// a log whose first bytes were damaged, one cut before its first commit, or that of a
    /// store being made at that instant. Said, since the user sees a log of many bytes beside
    /// a file that holds nothing.
    private static func emptyDatabaseReason(path: String) -> String {
        let log = StoreLocation.FileStamp(path: path + "-wal")?.size ?? 0
        guard log > 0 else { return "it is an empty SQLite database" }
        return "it is an empty SQLite database, and the write-ahead log beside it (\(log) bytes) "
            + "holds no commit SQLite can read"
    }

    /// ``openForReading(path:configuration:logger:)`` as `opening` reads the store.
    private static func openForReading(
        path: String, stamp: StoreLocation.FileStamp, opening: StoreLocation.ReadOnlyOpening,
        configuration: Configuration
    ) throws -> (Connection, StoreFileIdentity, StoreLocation.ReadOnlySource) {
        let connection: Connection
        switch opening.reader {
        case .uri(let uri):
            connection = try Connection(
                filename: uri, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX)
            try connection.setBusyTimeout(milliseconds: milliseconds(configuration.busyTimeout))
        case .replayedLog:
            connection = try replayedLog(path: path)
        }
        try connection.execute("PRAGMA query_only = ON")
        let status: SchemaMigrator.Status
        do {
            status = try inspectedSchema(connection, path: path, migrator: SchemaMigrator())
        } catch ArchiveStoreError.database(let failure)
            where failure.resultCode == .cantOpen && StoreLocation.writeAheadLogExists(for: path)
        {
            // With readonly_shm, a -wal whose -shm is gone cannot be read: SQLite opens the
            // file, then fails the first read with SQLITE_CANTOPEN. The opening read through
            // SQLite only because it found the -shm.
            throw IndexWentBeforeTheOpening(failure: .database(failure))
        }
        switch status {
        case .empty:
            throw ArchiveStoreError.notAStore(path: path, reason: emptyDatabaseReason(path: path))
        case .compatible(let pending) where pending > 0:
            let (copy, source): (Connection, StoreLocation.ReadOnlySource)
            if case .replayedLog = opening.reader {
                // Already a copy, of the files as the opening stamped them before it read
                // them: a stamp taken now would miss a commit made since that read.
                try connection.execute("PRAGMA query_only = OFF")
                (copy, source) = (connection, opening.source)
            } else {
                // Stamped before the copy: a commit after the stamp is caught by the next look.
                let log = StoreLocation.FileStamp(path: path + "-wal")
                copy = try connection.readTransaction { try connection.copyInMemory() }
                source = .frozen(file: stamp, log: log)
            }
            try copy.execute("PRAGMA foreign_keys = ON")  // as for a read-write open's migration
            try SchemaMigrator().migrate(copy, path: path)
            try copy.execute("PRAGMA query_only = ON")
            return (copy, stamp.file, source)
        case .compatible:
            return (connection, stamp.file, opening.source)
        }
    }

    /// The write-ahead log's index (`-shm`) an opening for reading found was gone when SQLite
    /// opened it: an app's last close removes the index, then the log, and the next open
    /// makes both again (often as files of the same inode numbers). The opening looks again.
    /// (Such an opening threw ``ArchiveStoreError/writeAheadLogNeedsRecovery(path:)``: 14 of
    /// 22,262 opens beside a process opening the store, writing and closing it in a loop.)
    ///
    /// An index that cannot be opened for another reason (the process has no file descriptor
    /// left, `EMFILE`) fails the same way at every look: `failure` is SQLite's error, which an
    /// opening that met only this throws, rather than saying the store changed under each.
    private struct IndexWentBeforeTheOpening: Error {
        let failure: ArchiveStoreError
    }

    /// The store at `path` as its file and write-ahead log make it, read and replayed in a
    /// database in memory (``LogReplay``), for a log whose index is gone: throws
    /// ``ArchiveStoreError/writeAheadLogNeedsRecovery(path:)`` when the files cannot be read
    /// (gone or changed since they were looked at: the opening looks again), the log is one
    /// only SQLite's own recovery may judge, or the store is larger than the replay holds in
    /// memory (``LogReplay/largestDatabase``).
    private static func replayedLog(path: String) throws -> Connection {
        let refused = ArchiveStoreError.writeAheadLogNeedsRecovery(path: path)
        func replayed(_ file: StoreFileBytes.OpenFile, _ log: StoreFileBytes.OpenFile) throws -> Connection {
            let (file, log) = (LogReplay.Bytes(file), LogReplay.Bytes(log))
            guard let replay = LogReplay.replay(file: file, log: log),
                let connection = try Connection.inMemory(byteCount: replay.byteCount, filling: {
                    replay.write(into: $0, file: file, log: log)
                })
            else { throw refused }
            return connection
        }
        let connection = try StoreFileBytes.withFile(at: path) { file in
            try StoreFileBytes.withFile(at: path + "-wal") { log in try replayed(file, log) }
        }
        guard let connection = connection ?? nil else { throw refused }
        return connection
    }

    /// Verifies the key against the store's key check, which the first read-write open with a
    /// key writes.
    private static func checkKey(_ seal: StateSeal, _ connection: Connection, writing: Bool) throws {
        let read = try connection.statement("SELECT key_check FROM state_sealing WHERE id = 1")
        defer { read.reset() }
        var found = try read.step()
        if !found, writing {
            read.reset()
            let check = try seal.keyCheck()
            try connection.transaction(.immediate) {
                // Another process may have written its own check since: the first one stays.
                let insert = try connection.statement("INSERT OR IGNORE INTO state_sealing (id, key_check) VALUES (1, ?)")
                defer { insert.reset() }
                try insert.bind(bytes: check, at: 1)
                try insert.run()
            }
            found = try read.step()
        }
        // A read-only open of a store never opened with a key has nothing to check against.
        guard found else { return }
        guard seal.matchesKeyCheck(try read.bytes(0)) else { throw ArchiveStoreError.wrongEncryptionKey }
    }

    /// A busy timeout in SQLite's unit: whole milliseconds, from 0 to `Int32.max`.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        // Clamped before multiplying, to more than `Int32.max` milliseconds (24.8 days):
        // `.seconds(Int64.max)` means "as long as it takes".
        let wholeSeconds = min(max(seconds, -3_000_000), 3_000_000)
        return Int32(clamping: wholeSeconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    // MARK: Access

    /// Runs `body` with exclusive use of the connection, translating internal errors into
    /// ``ArchiveStoreError``.
    ///
    /// A read-only store that reads the file as immutable first opens it again if an app
    /// wrote it since (see ``AccessMode/readOnly``), and runs `body` again, once, on a
    /// connection opened again when an app wrote the file while `body` ran: whether `body`
    /// failed (pages of two states met) or not (its result may mix them, unnoticed).
    func withConnection<Result: Sendable>(_ body: (Connection) throws -> Result) throws(ArchiveStoreError) -> Result {
        try withOpenConnection { open in try body(open.connection) }
    }

    /// ``withConnection(_:)``, with the connection's state as the store keeps it.
    ///
    /// A read-only connection that reads the file alone (`ReadOnlySource.frozen`) is opened
    /// again when the file or its log changed since it was opened, and reads again when they
    /// changed while it read: pages of two states may have met (an app's checkpoint copying
    /// its log into the file), and a result that did not fail may mix them too. Until a read
    /// finds nothing changed, up to ``maximumReadsOfAChangingStore`` times; after that, busy.
    private func withOpenConnection<Result: Sendable>(_ body: (inout OpenConnection) throws -> Result)
        throws(ArchiveStoreError) -> Result
    {
        let path = self.path
        return try connection.withLock { (open: inout OpenConnection) throws(ArchiveStoreError) -> Result in
            try Self.translatingErrors(path: path) {
                for _ in 0..<Self.maximumReadsOfAChangingStore {
                    if open.isStale(path: path) { open = try reopened() }
                    do {
                        let result = try body(&open)
                        guard open.isStale(path: path) else { return result }
                    } catch where open.isStale(path: path) {
                        // Pages of two states met: the error may be theirs.
                    } catch {
                        throw Self.blamingALogThatLacksCommits(error, open.connection, path: path)
                    }
                }
                throw Self.changingStore()
            }
        }
    }

    /// How many reads in a row a read-only store makes of a store that changes under each one
    /// before it gives up with ``ResultCode/busy``: its opening's
    /// (`openForReading(path:configuration:logger:)`), and each call's
    /// (`withOpenConnection(_:)`). A call used to read twice and return the second read
    /// unchecked: in 12 s of the torture's `threads`, 3–7 second reads had the file change
    /// under them, and one run in a few threw damage the store did not have ("the header of
    /// its newest generation is missing").
    static let maximumReadsOfAChangingStore = 5

    /// What a read-only store throws when the store changed under each of
    /// ``maximumReadsOfAChangingStore`` reads in a row.
    private static func changingStore() -> DatabaseError {
        DatabaseError(
            extendedCode: SQLITE_BUSY,
            message: "the store changed under \(maximumReadsOfAChangingStore) reads in a row (an app is writing it); try again")
    }

    /// The read-only connection opened again, on the file as it is now.
    private func reopened() throws -> OpenConnection {
        logger?.debug("The archive store at '\(path)' changed since it was opened read-only; opening it again")
        return try Self.open(path: path, mode: mode, configuration: configuration, logger: logger, seal: seal).0
    }

    /// Runs `body` in a write transaction; a read-only store refuses.
    ///
    /// - Parameter shorteningTheLog: for a save. The first save of an opening that finds the
    ///   write-ahead log ``logPagesCheckpointedBeforeASave`` pages long or longer first copies
    ///   it into the database file (a passive checkpoint), so that the save's commit starts
    ///   the log over; so does the first save after the app records a move towards the
    ///   background (``shortenTheLogAtTheNextSave()``). A reader in another connection still
    ///   reading the log (`restorectl`, another process of the app) holds that back, and the
    ///   log stays as long: the saves after do not try again. Another connection's write
    ///   does too (the copy runs only while this process holds the write lock: see
    ///   `Connection+Checkpoints.swift`), and the next save tries again. A launch after the
    ///   app was killed, as apps in the background are, reads the whole log back before its first
    ///   statement (SQLite rebuilds the log's index, which lives in shared memory): about
    ///   2.5 µs and 4 KiB of storage a page here, and SQLite alone lets the log grow to 1,000
    ///   pages. The save an app makes going to the background is most often its last before
    ///   it is killed. The copy costs that save two fsyncs, and the commit that starts the log
    ///   over two more. Other saves (an app that saves every change, a loop) leave the log to
    ///   SQLite's own checkpoint every 1,000 pages, which copies a page changed many times once.
    func write<Result: Sendable>(shorteningTheLog: Bool = false, _ body: (Connection) throws -> Result)
        throws(ArchiveStoreError) -> Result
    {
        guard mode == .readWrite else { throw .readOnly }
        return try withOpenConnection { open in
            if shorteningTheLog, !open.triedToShortenTheLog,
                open.connection.pagesInLog >= Self.logPagesCheckpointedBeforeASave
            {
                // Best effort: a checkpoint that a reader holds back copies what it can, one
                // that another connection's checkpoint keeps busy copies nothing, and one that
                // fails (a full disk: the file may need to grow) leaves the log as it was. The
                // save goes ahead in every case, and reports its own failures. One that did
                // not run, another connection writing, is tried again by the next save.
                open.triedToShortenTheLog = (try? open.connection.checkpointPassively()) != false
            }
            do {
                return try open.connection.transaction(.immediate) { try body(open.connection) }
            } catch let error as DatabaseError
                where [.readOnlyDatabaseMoved, .ioErrorShortRead].contains(error.extendedResultCode)
            {
                // `storeFileMoved` and `writeAheadLogNeedsRecovery` name the store's path;
                // which of its files went, or what the log lacks, is said here.
                logger?.warning("A write to the store at '\(path)' was refused: \(error.message)")
                throw error
            }
        }
    }

    /// Lets the next save copy a long write-ahead log into the database file, as an opening's
    /// first save does (`write(shorteningTheLog:_:)`): the app recorded that it is on its way
    /// to the background, where its next save may be its last before it is killed. An app
    /// brought back to the foreground many times without being killed otherwise left the log
    /// to grow to SQLite's 1,000 pages after its opening's first save.
    func shortenTheLogAtTheNextSave() {
        connection.withLock { $0.triedToShortenTheLog = false }
    }

    /// The write-ahead log's length, in pages, from which an opening's first save copies it
    /// into the database file (`write(shorteningTheLog:_:)`): about what a few launches of an
    /// app with a hundred screens write (their journal entries, crash markers, reports and saves).
    static let logPagesCheckpointedBeforeASave = 128

    /// Runs `body` in a read transaction: everything it reads comes from one committed state.
    func read<Result: Sendable>(_ body: (Connection) throws -> Result) throws(ArchiveStoreError) -> Result {
        try withConnection { connection in
            try connection.readTransaction { try body(connection) }
        }
    }

    /// Truncates the write-ahead log once a write is committed (a discard, an erase), so
    /// that no copy of what it deleted stays in the `-wal` file. Best effort: the write must
    /// not be reported as failed for it. Returns `false` when a reader held the log back, and
    /// when the checkpoint failed (a file that cannot grow on a full disk), which is logged.
    static func truncatingTheLog(after write: String, path: String, _ connection: Connection, logger: Logger?) -> Bool {
        do {
            return try connection.checkpointTruncating()
        } catch {
            logger?.warning(
                "The write-ahead log of the store at '\(path)' was not truncated after \(write): \(translated(error, path: path))")
            return false
        }
    }

    static func translatingErrors<Result>(path: String, _ body: () throws -> Result) throws(ArchiveStoreError)
        -> Result
    {
        do {
            return try body()
        } catch {
            throw translated(error, path: path)
        }
    }

    /// Whether SQLite's message says a statement names a table or column the schema lacks,
    /// that an expression of the schema (a `CHECK`) calls a function that does not exist, or
    /// that a foreign key of the schema names no key of its parent table. ("no such function",
    /// which a statement of the library's own would get from an SQLite lacking it, is not
    /// damage.)
    private static func isSchemaMismatch(_ message: String) -> Bool {
        message.hasPrefix("no such table") || message.hasPrefix("no such column") || message.contains("has no column named")
            || message.hasPrefix("unknown function") || message.hasPrefix("foreign key mismatch")
    }

    /// ``StoreLocation/headerDamage(header:)`` of the file at `path`, and when `orCutShort`,
    /// then ``StoreLocation/cutShort(path:header:)``: its header read through a connection
    /// of its own (see ``Connection/fileBytes(count:)`` for why not through a descriptor: the
    /// store's connection may hold locks on the file). A file shorter than the header checked
    /// is read as far as the versions.
    private static func headerDamage(path: String, orCutShort: Bool = false) -> ArchiveStoreError? {
        guard
            let connection = try? Connection(
                filename: StoreLocation.sqliteFilename(for: path),
                flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX),
            let header = connection.fileBytes(count: 100) ?? connection.fileBytes(count: StoreLocation.checkedHeaderBytes)
                ?? connection.fileBytes(count: 20)
        else { return nil }
        if let damage = StoreLocation.headerDamage(header: header) { return damage }
        guard orCutShort, let cut = StoreLocation.cutShort(path: path, header: header) else { return nil }
        return .damagedStore(cut)
    }

    /// `error`, or, when it says the store is damaged or not a store and `connection`'s log
    /// lacks commits its index names (`Connection.logLacksCommitsItsIndexNames`), what that
    /// says (``ArchiveStoreError/writeAheadLogNeedsRecovery(path:)``): SQLite reads those
    /// frames where the index says they are, and from a log with holes there (another
    /// process's writes after them: an older version of the library's, a program without it)
    /// read zeros, which it took for a malformed file, or for no SQLite database at all, and
    /// an app erases a store it is told is damaged. Asked after the read that failed;
    /// returns the error translated (``translated(_:path:)``), which a damaged header's look
    /// makes costly, once.
    static func blamingALogThatLacksCommits(_ error: any Error, _ connection: Connection, path: String)
        -> ArchiveStoreError
    {
        let translated = translated(error, path: path)
        guard translated.isDamage || translated.isUnusableStore else { return translated }
        do {
            try connection.checkTheLogHoldsWhatItsIndexNames()
            return translated
        } catch {
            return Self.translated(error, path: path)
        }
    }

    /// The ``ArchiveStoreError`` an internal error (SQLite's, a column's) stands for.
    static func translated(_ error: any Error, path: String) -> ArchiveStoreError {
        switch error {
        case let error as ArchiveStoreError:
            return error
        case let error as DatabaseError:
            switch error.extendedResultCode {
            case .cantOpenSymlink: return .symbolicLinkAtStorePath(path: path)
            case .readOnlyDirectory: return StoreLocation.folderNotWritable(for: path)
            case .readOnlyDatabaseMoved: return .storeFileMoved(path: path)
            case .ioErrorShortRead:
                // A log removed or cut under a process that has the store open, whose index
                // still names its frames (SQLite reads a short database file as zeros).
                return .writeAheadLogNeedsRecovery(path: path)
            case .notADatabase:
                return headerDamage(path: path) ?? .notAStore(path: path, reason: "it is not an SQLite database")
            case _ where error.resultCode == .corrupt:
                return headerDamage(path: path, orCutShort: true)
                    ?? .damagedStore("SQLite finds the file malformed (\(error.message))")
            case _ where error.resultCode == .error && isSchemaMismatch(error.message):
                // The library's statements name only what its migrations made, and the
                // migrations' history was verified at opening: the schema's text was damaged.
                return .damagedStore("its schema does not hold what its migrations made (\(error.message))")
            case _ where Connection.needsAWriterOfTheIndex(error):
                // A read-only store whose write-ahead log's index stayed torn, or without a
                // read mark for it, through `Connection.readTransaction`'s attempts: only a
                // writer can mend it.
                return .writeAheadLogNeedsRecovery(path: path)
            case _ where error.resultCode == .readOnly:
                // A store opened read-write that SQLite will not write: its header may say so.
                return headerDamage(path: path) ?? .database(error)
            case .constraintCheck:
                // What the library writes keeps the CHECK constraints its migrations made.
                return .damagedStore("its schema's constraints are not what its migrations made (\(error.message))")
            case _ where error.resultCode == .constraint:
                // And their unique keys, NOT NULLs and foreign keys: a unique index another
                // program added, or rows it changed, made every later write of that kind fail,
                // with an error an app did not answer by erasing.
                return .damagedStore(
                    "a write broke a constraint the library's writes keep: its schema or rows are not what this library "
                        + "wrote (\(error.message))")
            default: return .database(error)
            }
        case let error as ColumnError:
            return .damagedStore(error.description)
        default:
            return .damagedStore("unexpected error \(type(of: error))")
        }
    }
}
