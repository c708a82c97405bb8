internal import CSQLite

// Copying the write-ahead log into the database file (checkpoints), each while this process
// holds the log's write lock.
//
// SQLite from 3.7.0 to 3.51.2 (this system's 3.40.1 among them) has a race it calls the
// "WAL-reset bug", fixed in 3.51.3: a checkpoint that starts on a log already copied whole
// into the file, while another connection commits and so starts the log over from its first
// frame, can record as copied frames of the new log that never were. Every reader after it
// that finds the log that long reads those pages from the file, without the commits they
// held; a commit built on what it read writes the damage back. The torture suite's
// `two-writers` (two processes saving one store) met it about once in 4,000 trials: each
// process's last saves undone, and an index out of step with its table. A commit starts the
// log over only while it holds the log's write lock, so a checkpoint run while this process
// holds that lock meets none. SQLite's checkpoint modes that take the lock themselves (FULL,
// RESTART, TRUNCATE) go on as PASSIVE when another connection holds it, so the lock is held
// by a second connection of this process (``Connection/writeLockHolder``), in a write
// transaction that writes nothing, while this one checkpoints.
extension Connection {
    /// SQLite's own threshold for copying the write-ahead log into the database file after a
    /// commit (`SQLITE_DEFAULT_WAL_AUTOCHECKPOINT`), which ``countPagesInLog()`` keeps.
    static let automaticCheckpointPages: Int32 = 1000

    /// Counts the pages in the write-ahead log after each commit into ``pagesInLog``
    /// (`sqlite3_wal_hook`). The hook takes the place of SQLite's automatic checkpoint, so it
    /// does what that did, with the write lock held: after a commit that leaves
    /// ``automaticCheckpointPages`` pages or more, ``checkpointPassively()``.
    func countPagesInLog() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_wal_hook(handle, { context, _, _, pages in
            guard let context else { return SQLITE_OK }
            let connection = Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue()
            connection.pagesInLog = Int(pages)
            if pages >= Connection.automaticCheckpointPages { _ = try? connection.checkpointPassively() }
            return SQLITE_OK
        }, context)
    }

    /// Copies the write-ahead log into the database file as far as no reader still needs it,
    /// without waiting for anyone (`SQLITE_CHECKPOINT_PASSIVE`), while this process holds the
    /// log's write lock (``withTheWriteLockHeld(waiting:_:)``). The next commit starts the
    /// log over when all of it was copied and no reader is still reading it. Copies nothing
    /// while another connection holds the write lock (a save under way, in this process or
    /// another), from a log that its path no longer names, whose index is not the one it
    /// was, or that lacks commits its index names (``logMustNotBeCopied``): it returns
    /// `false` then, `true` when it ran.
    @discardableResult
    func checkpointPassively() throws(DatabaseError) -> Bool {
        guard !logMustNotBeCopied else { return false }
        return try withTheWriteLockHeld(waiting: false) { () throws(DatabaseError) in
            try check(sqlite3_wal_checkpoint_v2(handle, "main", SQLITE_CHECKPOINT_PASSIVE, nil, nil))
        }
    }

    /// Copies the write-ahead log into the database file and empties it
    /// (`SQLITE_CHECKPOINT_TRUNCATE`), waiting as long as the busy timeout for another
    /// connection's write and for readers of the log to end. Returns `false` when one
    /// outlasted it: the log was copied as far as no reader needed it, and keeps its pages;
    /// and, copying nothing, when the log's path no longer names it, its index is not the one
    /// it was, or it lacks commits its index names (``logMustNotBeCopied``).
    ///
    /// The checkpoint takes the write lock itself, as it must to empty the log: it is asked
    /// for only once ``withTheWriteLockHeld(waiting:_:)`` has found the lock free, so that
    /// SQLite goes on without it (as PASSIVE, open to its race) only when another connection
    /// takes the lock in between and holds it past the busy timeout.
    ///
    /// A call of SQLite's, not a statement: it reads no schema, so it works on a connection
    /// whose schema cannot be read any more (an erase's, on a file whose header said another
    /// text encoding than the content it was given).
    func checkpointTruncating() throws(DatabaseError) -> Bool {
        guard !logMustNotBeCopied, try withTheWriteLockHeld(waiting: true, {}) else { return false }
        let code = sqlite3_wal_checkpoint_v2(handle, "main", SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        if code == SQLITE_BUSY { return false }
        try check(code)
        pagesInLog = 0
        return true
    }

    /// Runs `body` while ``writeLockHolder``, a second connection of this process to the same
    /// file, holds the write-ahead log's write lock in a transaction that writes nothing: no
    /// other connection commits meanwhile, and none starts the log over. Returns `false`
    /// without running `body` when another connection holds the lock (past the busy timeout
    /// when `waiting`, at once otherwise), when the database's path no longer names this
    /// connection's file (the holder would hold another file's lock), or when the holder
    /// cannot be opened.
    ///
    /// The holder is opened by the first call and kept: about as much as a store's opening
    /// costs once, and a transaction begun and rolled back (no page written, no fsync) each time.
    private func withTheWriteLockHeld(waiting: Bool, _ body: () throws(DatabaseError) -> Void)
        throws(DatabaseError) -> Bool
    {
        guard let filename = sqlite3_db_filename(handle, "main") else { return false }
        let holder: Connection
        if let writeLockHolder {
            holder = writeLockHolder
        } else {
            // One that cannot be opened (no descriptor left, a link now at the path) holds no
            // lock: no checkpoint, as when another connection holds it.
            guard
                let opened = try? Connection(
                    filename: String(cString: filename),
                    flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX)
            else { return false }
            holder = opened
            writeLockHolder = holder
        }
        try holder.setBusyTimeout(milliseconds: waiting ? busyTimeout : 0)
        do throws(DatabaseError) {
            try holder.control("BEGIN IMMEDIATE")
        } catch {
            if error.resultCode == .busy { return false }
            throw error
        }
        defer { holder.rollback() }
        // Both name the file at the path: the lock held is this connection's file's.
        guard !hasMoved, !holder.hasMoved else { return false }
        try body()
        return true
    }
}
