internal import CSQLite
public import Logging

extension ArchiveStore {
    /// Erases the store at `path`, whatever state its file is in, and leaves a new, empty
    /// store there: every archive, generation, crash marker, restore report and journal entry
    /// is gone.
    ///
    /// This is how an app starts afresh when its store cannot be used
    /// (``ArchiveStoreError/isUnusableStore``): the file is damaged or no longer a store (cut
    /// short, its header overwritten), its schema is newer than this library's, or it was
    /// sealed with a key the app no longer has. Restoration state is disposable (R13): all the
    /// user loses is where they were.
    ///
    /// ```swift
    /// let path = try ArchiveStore.defaultPath(appIdentifier: "com.example.orders")
    /// let store: ArchiveStore
    /// do throws(ArchiveStoreError) {
    ///     store = try ArchiveStore(path: path)
    /// } catch where error.isUnusableStore {
    ///     try ArchiveStore.erase(at: path)  // never another program's database at a wrong path
    ///     store = try ArchiveStore(path: path)
    /// }
    /// ```
    ///
    /// The file is replaced where it is by an empty store, in one transaction under SQLite's
    /// locks, so its owner and mode stay. If the process dies during the erase, the file holds
    /// the old store or the empty one. An `ArchiveStore` open on the file, in this process or
    /// another, finds the old store or the empty one at each call, never one in between, and
    /// the empty one from the erase's end (an engine's next save is a full one; a launch
    /// recording events goes on as a new launch). A file SQLite cannot read as a database
    /// (damage to its first page) is emptied first, then given the store's schema, which
    /// the next opening completes if the process dies in between. The erase waits up to
    /// `busyTimeout` for a save in progress. It then truncates the write-ahead log, waiting up
    /// to `busyTimeout` again for other connections' reads to end; a read that outlasts it
    /// leaves the log's old pages there until later saves overwrite them, and so does a
    /// truncation that fails (a full disk: `logger` says why), the erase done all the same.
    ///
    /// An SQLite database of another program (a schema SQLite can read, which lists objects
    /// but neither a store's `application_id` nor its tables) is refused and left as it is
    /// (``ArchiveStoreError/notAStore(path:reason:)``). Erasing it would destroy that program's
    /// data, and a wrong path is the likely cause. A file SQLite cannot read as a database is
    /// erased: damage to a store's first page looks like that.
    ///
    /// What SQLite never makes at the paths of the store's write-ahead log, its index and a
    /// rollback journal (`-wal`, `-shm` and `-journal` beside the file), which makes every
    /// open of the store fail (``ArchiveStoreError/notAStore(path:reason:)`` names it), is
    /// removed: a symbolic link (not what it points to), a pipe, a socket or a device node, a
    /// folder if it is empty. A folder with files in it is refused
    /// (``ArchiveStoreError/fileSystem(operation:path:errno:)``).
    ///
    /// A file with other names (hard links), which a read-write open refuses
    /// (``ArchiveStoreError/notAStore(path:reason:)``), is not written: unless it is another
    /// program's database, the name `path` is removed, with the write-ahead log, its index
    /// and a rollback journal beside it, the file is left as it was to its other names, and a
    /// new, empty store is made at `path`. A store open through `path` refuses to write from
    /// then on (``ArchiveStoreError/storeFileMoved(path:)``), as when its file is replaced.
    ///
    /// - Parameters:
    ///   - path: the store file's path. When nothing is there, there is nothing to erase, and
    ///     nothing is created (what SQLite never makes beside it is still removed).
    ///   - busyTimeout: how long to wait for another connection's write lock.
    ///   - logger: where a line saying the store was erased goes, and one before it for each
    ///     file removed beside it, and for a name given a file of its own.
    /// - Throws: ``ArchiveStoreError/notAStore(path:reason:)`` for another program's database, a
    ///   folder or anything but a regular file; ``ArchiveStoreError/symbolicLinkAtStorePath(path:)``;
    ///   ``ArchiveStoreError/invalidLocation(_:)`` for a path that names no file (empty, or
    ///   ending with `/`, `.` or `..`);
    ///   ``ResultCode/busy`` in ``ArchiveStoreError/database(_:)`` when another connection held
    ///   the write lock for longer than `busyTimeout`.
    public static func erase(
        at path: String, busyTimeout: Duration = .seconds(5), logger: Logger? = nil
    ) throws(ArchiveStoreError) {
        guard busyTimeout >= .zero else { throw .invalidConfiguration("busyTimeout must not be negative") }
        try SQLiteVersion.check()
        let (filename, removed, otherNames) = try StoreLocation.prepareForErasing(path: path)
        for item in removed { logger?.warning("Removed \(item), which SQLite never makes beside a store") }
        guard let filename else { return }
        if otherNames > 0 {
            try erasingApart(path: path, filename: filename, busyTimeout: busyTimeout)
            let others = otherNames == 1 ? "other name (a hard link)" : "\(otherNames) other names (hard links)"
            logger?.warning("Gave '\(path)' a file of its own: the file it named is left as it was to its \(others)")
        } else {
            try erasingInPlace(path: path, filename: filename, busyTimeout: busyTimeout, logger: logger)
        }
        logger?.warning("Erased the archive store at '\(path)'")
    }

    /// Replaces the contents of the store file where it is by an empty store, in one
    /// transaction (or, when SQLite cannot read its first page, empties it and then gives it
    /// the store's schema); another program's database is refused.
    private static func erasingInPlace(path: String, filename: String, busyTimeout: Duration, logger: Logger?)
        throws(ArchiveStoreError)
    {
        try translatingErrors(path: path) {
            let reset: Bool
            do {
                let connection = try Connection(
                    filename: filename, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX)
                try connection.setBusyTimeout(milliseconds: milliseconds(busyTimeout))
                try refuseAnotherProgramsDatabase(connection, path: path)
                do {
                    let replaced = try? incarnation(connection)
                    try connection.replaceContents(with: emptyStore(path: path, replacing: replaced))
                    reset = false
                } catch let error as DatabaseError where error.resultCode != .busy {
                    // The first page is damaged: SQLite's reset empties any file.
                    try connection.eraseEverything()
                    reset = true
                }
                // The erase is committed: a log not truncated does not undo it.
                _ = truncatingTheLog(after: "the erase", path: path, connection, logger: logger)
            }
            // After a reset, the store's schema, so that a connection open on the file goes on
            // with it. A replaced file has it already; the next opening sets the rest.
            if reset {
                _ = try openForWriting(path: path, configuration: Configuration(busyTimeout: busyTimeout), logger: nil)
            }
        }
    }

    /// Erases a store file with other names (hard links) without writing it: another
    /// program's database is refused, read in the file alone (a read of the log beside the
    /// name would copy it into the file at the close); otherwise the name is removed, with the
    /// files beside it, and a new store made there.
    private static func erasingApart(path: String, filename: String, busyTimeout: Duration) throws(ArchiveStoreError) {
        try translatingErrors(path: path) {
            do {
                let file = try Connection(
                    filename: StoreLocation.fileAloneURI(filename),
                    flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX)
                try refuseAnotherProgramsDatabase(file, path: path)
            }
            try StoreLocation.removeName(path)
            _ = try openForWriting(path: path, configuration: Configuration(busyTimeout: busyTimeout), logger: nil)
        }
    }

    /// A new store in memory, its schema migrated: what an erase leaves in the file. Its
    /// incarnation is above `replaced`, the one of the store it replaces: a launch begun
    /// before the erase must not take the store after it for its own. The clock alone could
    /// give it that incarnation, or one of a store before it: an erase in the millisecond the
    /// store was created, or after the wall clock went back.
    private static func emptyStore(path: String, replacing replaced: Int64?) throws -> Connection {
        let store = try Connection(filename: ":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)
        try SchemaMigrator().migrate(store, path: path)
        // The highest integer is damage, and any other incarnation is not it.
        if let replaced, replaced < Int64.max, try incarnation(store) <= replaced {
            let later = try store.statement("UPDATE schema_migration SET applied_at = max(applied_at, ?)")
            defer { later.reset() }
            try later.bind(replaced + 1, at: 1)
            try later.run()
        }
        return store
    }

    /// Refuses an SQLite database of another program: one whose schema SQLite can read and
    /// lists objects, without a store's `application_id` or its `schema_migration` and
    /// `archive` tables. A store whose `application_id` or schema was damaged still has the
    /// one or the other; a file whose schema SQLite cannot read, or that lists nothing, has
    /// nothing to lose.
    ///
    /// A read that another connection's lock keeps out for longer than the busy timeout (a
    /// program writing its database in rollback journal mode) is thrown, not taken for a
    /// file SQLite cannot read.
    private static func refuseAnotherProgramsDatabase(_ connection: Connection, path: String) throws {
        func read(_ sql: String) throws -> Int64? {
            do {
                return try connection.pragmaInteger(sql)
            } catch let error as DatabaseError where error.resultCode == .busy || error.resultCode == .locked {
                throw error
            } catch {
                return nil
            }
        }
        guard let objects = try read("SELECT count(*) FROM sqlite_schema"), objects > 0 else { return }
        let identifier = try read("PRAGMA application_id")
        if identifier == SchemaMigrator.applicationID { return }
        let tables = try read(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('schema_migration', 'archive')")
        if tables == 2 { return }
        let which = identifier.map { $0 == 0 ? "" : " (application_id \($0))" } ?? ""
        throw ArchiveStoreError.notAStore(
            path: path, reason: "it is an SQLite database of another program\(which), which is never erased")
    }
}
