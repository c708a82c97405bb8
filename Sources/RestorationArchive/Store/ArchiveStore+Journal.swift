#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// The launches that `ArchiveStore`s of this process record events in, by store file and
/// launch: a launch of this process is still running only while the store that records it
/// exists (otherwise it was played by a store since released, as tests and demos play
/// launches in one process, or left by an earlier process that had the same id). A launch is
/// listed before the transaction that starts it commits, so that no other store can judge it
/// in between.
private let launchesInProgress = Locked(LaunchList())

/// The launches in progress in this process, and how many times the list changed. Lists
/// searched in order, as the restorations in progress are (`RestorationList` says why).
private struct LaunchList {
    private var launches: [LaunchInProgress] = []
    /// Counts every change, per store file. A read transaction begun before a change may
    /// read a launch that the list, looked at after the change, no longer names without
    /// seeing its last events: one that went to the background and ended after the
    /// transaction began. (Per file: the launches of other stores' files tell nothing.)
    private var changes = FileChangeCounts()

    func contains(_ launch: LaunchInProgress) -> Bool { launches.contains { $0 == launch } }

    func changes(of file: StoreFileIdentity) -> UInt64 { changes[file] }

    mutating func insert(_ launch: LaunchInProgress) {
        if !contains(launch) { launches.append(launch) }
        changes.count(launch.file)
    }

    mutating func remove(_ launch: LaunchInProgress) {
        launches.removeAll { $0 == launch }
        changes.count(launch.file)
    }
}

/// A launch, as ``launchesInProgress`` lists it.
private struct LaunchInProgress: Hashable {
    let file: StoreFileIdentity
    let launch: StoreLaunch
}

/// A launch as a store of this process knows it: its number (the journal id of its first
/// entry), and the store it began in. Journal ids, and so launch numbers, start again after
/// ``ArchiveStore/erase(at:busyTimeout:logger:)``: a launch begun before an erase is not the
/// launch of its number after it.
struct StoreLaunch: Hashable, Sendable {
    let number: Int64
    /// The store's incarnation when the launch began (``ArchiveStore/incarnation(_:)``).
    let incarnation: Int64
}

/// The lifecycle journal (R15): the app's lifecycle events and the store's own events
/// (invalidations, discards), newest ``ArchiveStore/retainedJournalEntries`` kept.
extension ArchiveStore {
    /// How many journal entries a store keeps; older ones are deleted as new ones come.
    public static let retainedJournalEntries = 256

    /// Records a lifecycle event, committed at once so that it survives the process being
    /// killed right after.
    ///
    /// ``LifecycleEvent/willFinishLaunching``, or the first event this `ArchiveStore` records,
    /// starts a new launch; but when a restoration started this launch under
    /// ``CrashPolicy/discardAfterForegroundDeath`` before the app recorded any event, the
    /// app's `willFinishLaunching` that follows belongs to it. When a launch starts under
    /// ``CrashPolicy/discardAfterForegroundDeath`` and the previous launch died in the
    /// foreground, the newest generation of every archive is invalidated in the same
    /// transaction, so nothing it saved is restored. The launch lasts as long as this
    /// `ArchiveStore`: while it is open, another store of this process does not take it for
    /// a death.
    ///
    /// Record every event of a launch through one `ArchiveStore` that lives as long as the
    /// app: a store opened for one event and released starts a launch of its own, and ends
    /// it where that event left the app (on screen: a death in the foreground, for the next
    /// launch to judge).
    ///
    /// After ``LifecycleEvent/willResignActive`` or ``LifecycleEvent/didEnterBackground``,
    /// the next save, which may be the last before the app is killed, first copies a long
    /// write-ahead log into the database file, as the first save of an opening does: the
    /// launch after a kill reads the log back before anything else.
    ///
    /// - Returns: the entry written.
    /// - Throws: ``ArchiveStoreError/readOnly`` on a read-only store,
    ///   ``ArchiveStoreError/storeFileMoved(path:)``, or a database error.
    @discardableResult
    public func record(_ event: LifecycleEvent) throws(ArchiveStoreError) -> JournalEntry {
        guard mode == .readWrite else { throw .readOnly }
        let (entry, invalidated) = try withConnection { connection in try record(event, connection) }
        recorded(event, invalidating: invalidated)
        return entry
    }

    /// Starts a launch (records ``LifecycleEvent/willFinishLaunching``) unless this store,
    /// read-write, records one already, as a restoration does when the app has not started
    /// its launch. The store's launch is looked at with the connection held, as a record
    /// changes it: one that another thread's event started a moment before is this launch,
    /// which a second start would judge as the previous one, dead on screen, invalidating
    /// every archive.
    func startLaunchUnlessUnderway() throws(ArchiveStoreError) {
        let invalidated = try withConnection { connection -> [JournalEntry] in
            guard currentLaunch.withLock({ $0 }) == nil else { return [] }
            return try record(.willFinishLaunching, connection, byRestoration: true).invalidated
        }
        recorded(.willFinishLaunching, invalidating: invalidated)
    }

    /// Records `event` through `connection`, which the caller holds: its entry, and the
    /// entries of the generations a launch it starts invalidated. `byRestoration`: a
    /// restoration starts the launch, the app having recorded no event.
    private func record(_ event: LifecycleEvent, _ connection: Connection, byRestoration: Bool = false) throws
        -> (entry: JournalEntry, invalidated: [JournalEntry])
    {
        let policy = configuration.crashPolicy
        let path = self.path
        let file = self.file
        let launch = currentLaunch.withLock { $0 }
        // The app's willFinishLaunching after a restoration started its launch (R9's order
        // reversed) is that launch's, not a new one's, which would judge it dead on screen.
        let appJoinsTheLaunch = event == .willFinishLaunching && !byRestoration && launchAwaitsTheApp.withLock { $0 }
        let startsLaunch = launch == nil || (event == .willFinishLaunching && !appJoinsTheLaunch)
        var listed: LaunchInProgress? = nil
        let written: (JournalEntry, [JournalEntry], StoreLaunch?)
        do {
            written = try connection.transaction(.immediate) { () throws -> (JournalEntry, [JournalEntry], StoreLaunch?) in
                // Read once for the verdict, the entry and the launch it starts.
                let incarnation = try Self.incarnation(connection)
                // Only that policy judges the previous launch: no other pays for reading it.
                let judging = startsLaunch && policy == .discardAfterForegroundDeath
                let verdict =
                    judging
                    ? try Self.previousLaunchDiedInForeground(
                        connection, path: path, file: file, ownLaunch: launch, incarnation: incarnation)
                    : nil
                let entry = try Self.append(
                    .lifecycle(event, event.applicationState), launch: startsLaunch ? nil : launch,
                    incarnation: incarnation, logger: logger, connection)
                let entryLaunch = entry.launch.map { StoreLaunch(number: $0, incarnation: incarnation) }
                if let started = entryLaunch, started != launch {
                    let key = LaunchInProgress(file: file, launch: started)
                    launchesInProgress.withLock { $0.insert(key) }
                    listed = key
                }
                var invalidated: [JournalEntry] = []
                if let verdict {
                    invalidated = try Self.invalidateAll(reason: verdict, launch: entryLaunch, connection)
                }
                return (entry, invalidated, entryLaunch)
            }
        } catch {
            if let listed { launchesInProgress.withLock { $0.remove(listed) } }
            throw error
        }
        // Set once the launch's first entry is committed, with the connection still held
        // (again when the entry had to start a launch anew: see `append`). The launch this
        // store recorded before has ended.
        if written.2 != launch {
            currentLaunch.withLock { $0 = written.2 }
            if let launch { Self.launchEnded(launch, of: file) }
        }
        launchAwaitsTheApp.withLock { $0 = byRestoration }
        return (written.0, written.1)
    }

    /// What follows a recorded event: a line for each generation it invalidated, and after a
    /// move out of the foreground, a shorter log at the next save.
    private func recorded(_ event: LifecycleEvent, invalidating invalidated: [JournalEntry]) {
        for entry in invalidated {
            if case .invalidated(let archive, let generation, let reason) = entry.kind {
                logger?.warning("Invalidated archive '\(archive)' generation \(generation): \(reason)")
            }
        }
        if event.leavesTheForeground { shortenTheLogAtTheNextSave() }
    }

    /// The newest journal entries, oldest first.
    ///
    /// - Parameter limit: at most this many entries, the newest; all that are kept when `nil`.
    ///   Only the entries returned are read, so that damage to an older one does not hide the
    ///   newest.
    /// - Throws: ``ArchiveStoreError/damagedHistory(_:)`` for an entry that cannot be read or
    ///   does not match its checksum (``ArchiveStore/check()`` names it by its sequence), or
    ///   whose sequence is out of order, or past the journal's counter for the newest (damage
    ///   changed it). It is deleted once ``ArchiveStore/retainedJournalEntries`` newer entries
    ///   are recorded.
    public func journal(limit: Int? = nil) throws(ArchiveStoreError) -> [JournalEntry] {
        try read { connection in
            let statement = try connection.statement(
                "SELECT \(Self.entryColumns) FROM journal ORDER BY rowid DESC LIMIT ?")
            defer { statement.reset() }
            try statement.bind(Int64(clamping: max(0, limit ?? Int.max)), at: 1)
            var entries: [JournalEntry] = []
            while try statement.step() {
                let entry = try Self.entry(statement)
                // Read in the table's own order, which is its keys' unless damage changed one
                // (a flipped bit read entry 8 as a second entry 12, with entry 8's event): its
                // checksum does not cover its number, which SQLite gives it. The newest, in
                // order whatever higher number damage gave it, is checked against the counter.
                if let newer = entries.last {
                    if entry.sequence >= newer.sequence {
                        throw ArchiveStoreError.damagedHistory(Self.outOfOrder(entry.sequence, before: newer.sequence))
                    }
                } else if let past = try Self.pastTheCounter(entry.sequence, connection) {
                    throw ArchiveStoreError.damagedHistory(past)
                }
                entries.append(entry)
            }
            return entries.reversed()
        }
    }

    /// The words for the journal's newest entry, `newest`, when its number is past the
    /// journal's counter (`AUTOINCREMENT`, the newest number it gave): damage changed it, or
    /// the counter. `nil` when it is not, or the journal has no counter (another program
    /// rebuilt it without one).
    static func pastTheCounter(_ newest: Int64, _ connection: Connection) throws -> String? {
        guard let counter = try connection.pragmaInteger(counter), newest > counter else { return nil }
        return "journal entry \(newest) is past the journal's counter (\(counter)): damage changed its number, or the counter"
    }

    /// The words for journal entry `sequence` read before entry `next` in the table's order,
    /// which is its keys' unless damage changed one.
    static func outOfOrder(_ sequence: Int64, before next: Int64) -> String {
        "journal entry \(sequence) is out of order, before entry \(next): damage changed an entry's number"
    }

    /// The launches the journal remembers, oldest first, each with how it ended.
    ///
    /// - Throws: ``ArchiveStoreError/damagedHistory(_:)`` when a launch's number, its first
    ///   entry still in the journal or the last entry it recorded cannot be read, or the
    ///   newest lifecycle entry names no launch, or the journal's index of launches does not
    ///   find it (damage).
    public func launches() throws(ArchiveStoreError) -> [LaunchSummary] {
        try read { connection in try Self.launches(connection, newest: nil) }
    }

    /// How the launch before this one ended: the newest launch in the journal other than the
    /// one this `ArchiveStore` recorded events in; `nil` when there is none.
    ///
    /// ``LaunchSummary/Ending/inBackground`` and ``LaunchSummary/Ending/terminated`` are normal
    /// ends; ``LaunchSummary/Ending/inForeground`` means that launch died on screen.
    ///
    /// - Throws: ``ArchiveStoreError/damagedHistory(_:)`` when the first or the last entry of
    ///   one of the newest two launches cannot be read, or the newest lifecycle entry names no
    ///   launch, or the journal's index of launches does not find it (damage, which would
    ///   hide a launch's last events). An older entry whose launch number damage made no
    ///   launch's (text, a real, a number past the entry's own) is no launch, and is not one
    ///   of them: ``launches()`` and ``check()`` name it.
    public func previousLaunch() throws(ArchiveStoreError) -> LaunchSummary? {
        try read { connection in
            // Looked at with the connection held, as a record changes it: read before, it could
            // miss the launch an event of another thread starts meanwhile, then read as the one
            // before.
            let current = currentLaunch.withLock { $0 }
            let incarnation = try Self.incarnation(connection)
            return try Self.launches(connection, newest: 2).last {
                StoreLaunch(number: $0.launch, incarnation: incarnation) != current
            }
        }
    }

    // MARK: Internals

    /// How many times this process's list of launches in progress changed.
    static func launchListChanges(of file: StoreFileIdentity) -> UInt64 {
        launchesInProgress.withLock { $0.changes(of: file) }
    }

    /// Ends the launch this store records events in, when it is released: a launch of this
    /// process whose store is gone counts as ended.
    static func launchEnded(_ launch: StoreLaunch, of file: StoreFileIdentity) {
        launchesInProgress.withLock { $0.remove(LaunchInProgress(file: file, launch: launch)) }
    }

    /// Why the newest launch in the journal counts as a death in the foreground, or `nil`
    /// when it does not: it ended in the background, or it still runs (in another process,
    /// or recorded by another `ArchiveStore` of this one). `ownLaunch` is the launch of the
    /// store asking, which a second ``LifecycleEvent/willFinishLaunching`` ends.
    /// A journal whose newest launch cannot be read (damage) counts as one: whether that
    /// launch crashed is not known, and the policy exists to keep a state that crashes the
    /// app from being restored. The damaged entry is not read again once newer launches
    /// follow it, and the journal's pruning deletes it in time; throwing instead would stop
    /// this launch from recording anything, and every launch after it.
    ///
    /// `listChangesBefore`, for a read transaction, is ``launchListChanges(of:)`` before it
    /// began: a launch of this process that the list no longer names is taken as still
    /// running when the list changed since (it may have ended in the background after the
    /// transaction began, its last events unseen). `incarnation` is the store's, when the
    /// caller has read it already.
    static func previousLaunchDiedInForeground(
        _ connection: Connection, path: String, file: StoreFileIdentity, ownLaunch: StoreLaunch?,
        listChangesBefore: UInt64? = nil, incarnation: Int64? = nil
    ) throws -> String? {
        let previous: LaunchSummary?
        do {
            previous = try launches(connection, newest: 1).last
        } catch {
            let translated = translated(error, path: path)
            guard translated.isDamage else { throw error }
            return "the journal's record of the previous launch is damaged, so it may have died in the foreground"
        }
        guard let previous, previous.ending == .inForeground else { return nil }
        if previous.processID != Int64(getpid()) {
            // Another process that runs it still has not died: another instance of the app,
            // on screen now.
            if previous.processIsRunning { return nil }
        } else {
            let launch = StoreLaunch(number: previous.launch, incarnation: try incarnation ?? Self.incarnation(connection))
            let recordedElsewhere =
                launch != ownLaunch
                && launchesInProgress.withLock { list in
                    list.contains(LaunchInProgress(file: file, launch: launch))
                        || listChangesBefore.map { $0 != list.changes(of: file) } ?? false
                }
            // Another `ArchiveStore` of this process, still open, records it (or may have, until
            // after the transaction began).
            if recordedElsewhere { return nil }
        }
        return "the app died in the foreground (its last event was \(previous.lastEvent.rawValue))"
    }

    /// Writes a store event into the journal, in the caller's transaction, as part of the
    /// launch this store records events in (if any).
    func appendStoreEvent(_ kind: JournalEntry.Kind, _ connection: Connection) throws {
        _ = try Self.append(kind, launch: currentLaunch.withLock { $0 }, logger: logger, connection)
    }

    /// Appends an entry, then deletes the ones too old to keep. `launch` `nil` with a
    /// lifecycle event starts a new launch; so does a launch of the store before an erase
    /// (its number may be another launch's now).
    /// `incarnation` is the store's, when the caller has read it already; `logger` says when
    /// the journal starts afresh (its numbering ran out).
    static func append(
        _ kind: JournalEntry.Kind, launch: StoreLaunch?, incarnation: Int64? = nil, logger: Logger? = nil,
        _ connection: Connection
    ) throws -> JournalEntry {
        let restarted = try startAfreshWhenNumberingRanOut(connection)
        if restarted {
            logger?.warning(
                "The lifecycle journal's numbering had reached the highest integer (damage): its entries are deleted and it starts afresh")
        }
        let number = try launch.flatMap { launch in
            try !restarted && launch.incarnation == (incarnation ?? Self.incarnation(connection)) ? launch.number : nil
        }
        do {
            return try insert(kind, launch: number, connection)
        } catch let error as DatabaseError where number != nil && error.extendedResultCode == .constraintCheck {
            // A number past the journal's ids (`CHECK (launch <= id)`, which SQLite enforces by
            // undoing the statement alone) is of a store before an erase all the same.
            return try insert(kind, launch: nil, connection)
        }
    }

    /// Whether damage left the journal's numbering at the highest integer: its newest id, or
    /// its `AUTOINCREMENT` counter, from which SQLite numbers the next entry.
    static let numberingRanOut = """
        SELECT coalesce((\(counter)), 0) = 9223372036854775807 \
        OR coalesce((SELECT max(id) FROM journal), 0) = 9223372036854775807
        """

    /// The journal's `AUTOINCREMENT` counter: the newest number it gave an entry (none when
    /// the journal gave none since it started afresh, or another program rebuilt it without
    /// one).
    private static let counter = "SELECT CAST(seq AS INTEGER) FROM sqlite_sequence WHERE name = 'journal'"

    /// Deletes the journal's entries and its counter when damage left its numbering at the
    /// highest integer, after which SQLite numbers no entry (`SQLITE_FULL`, "database or disk
    /// is full"): every event recorded and every discard failed, for good. Returns whether it
    /// did. The journal is the store's history, which its pruning deletes anyway; a launch's
    /// verdict on the launch before it is read before this. The entry written next starts a
    /// launch anew; a launch another `ArchiveStore` records keeps its number, which the
    /// journal refuses (`CHECK (launch <= id)`) while the new ids are below it, so that its
    /// next event starts a launch anew too.
    ///
    /// Looked into before each entry (one query on the counter and the newest id), not after
    /// the insertion failed: on `SQLITE_FULL` SQLite may roll back the whole transaction, and
    /// a discard's deletions with it (https://sqlite.org/lang_transaction.html).
    private static func startAfreshWhenNumberingRanOut(_ connection: Connection) throws -> Bool {
        guard try connection.pragmaInteger(numberingRanOut) == 1 else { return false }
        try connection.execute("DELETE FROM journal; DELETE FROM sqlite_sequence WHERE name = 'journal'")
        return true
    }

    /// The store's incarnation: when its first migration was applied, in milliseconds since
    /// 1970. An erase gives the store a new one (``ArchiveStore/erase(at:busyTimeout:logger:)``).
    static func incarnation(_ connection: Connection) throws -> Int64 {
        try connection.pragmaInteger("SELECT applied_at FROM schema_migration ORDER BY sequence LIMIT 1") ?? 0
    }

    private static func insert(_ kind: JournalEntry.Kind, launch: Int64?, _ connection: Connection) throws -> JournalEntry {
        let statement = try connection.statement(
            """
            INSERT INTO journal (launch, at, process_id, event, app_state, archive, generation, detail, \
            process_boot, process_start, checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        defer { statement.reset() }
        let start = ProcessStart.current
        var row = JournalEntryRow(
            launch: launch, startsItsLaunch: false, at: Clock.nowMilliseconds(), processID: Int64(getpid()), event: "",
            processBoot: start?.boot, processStart: start?.ticks)
        switch kind {
        case .lifecycle(let event, let state):
            row.event = event.rawValue
            row.applicationState = state.rawValue
            // Its launch number is its id, set below once SQLite has numbered it.
            row.startsItsLaunch = launch == nil
        case .invalidated(let archive, let generation, let reason):
            row.event = "invalidated"
            row.archive = archive.rawValue
            row.generation = generation.rawValue
            row.detail = reason
        case .discarded(let archive, let reason):
            row.event = "discarded"
            row.archive = archive.rawValue
            row.detail = reason
        }
        try statement.bind(row.launch, at: 1)
        try statement.bind(row.at, at: 2)
        try statement.bind(row.processID, at: 3)
        try statement.bind(row.event, at: 4)
        try statement.bind(row.applicationState, at: 5)
        try statement.bind(row.archive, at: 6)
        try statement.bind(row.generation, at: 7)
        try statement.bind(row.detail, at: 8)
        try statement.bind(row.processBoot, at: 9)
        try statement.bind(row.processStart, at: 10)
        try statement.bind(row.checksum, at: 11)
        try statement.run()
        let id = connection.lastInsertedRowID
        statement.reset()
        var entryLaunch = launch
        if row.startsItsLaunch {
            // (`rowid`: see `JournalEntryRow.columns`.)
            let start = try connection.statement("UPDATE journal SET launch = rowid WHERE rowid = ?")
            defer { start.reset() }
            try start.bind(id, at: 1)
            try start.run()
            entryLaunch = id
        }
        let prune = try connection.statement("DELETE FROM journal WHERE rowid <= ?")
        defer { prune.reset() }
        // Damage may have left ids down to the lowest integer (SQLite numbers an entry from the
        // highest id there): the subtraction saturates, and deletes nothing, rather than trap.
        let (oldestDeleted, overflow) = id.subtractingReportingOverflow(Int64(retainedJournalEntries))
        try prune.bind(overflow ? .min : oldestDeleted, at: 1)
        try prune.run()
        return JournalEntry(
            sequence: id, launch: entryLaunch, date: Clock.date(milliseconds: row.at), processID: row.processID, kind: kind)
    }

    static let entryColumns = JournalEntryRow.columns

    /// The entry a row of ``entryColumns`` holds.
    /// - Throws: ``ArchiveStoreError/damagedHistory(_:)`` when it cannot be read: damage to
    ///   one entry is not damage to the store (which tells an app to erase it).
    static func entry(_ statement: Statement) throws -> JournalEntry {
        do {
            let event = try statement.string(4)
            let kind: JournalEntry.Kind
            if let lifecycle = LifecycleEvent(rawValue: event) {
                guard let state = ApplicationState(rawValue: try statement.string(5)) else {
                    throw ArchiveStoreError.damagedHistory("a journal entry has an unknown application state")
                }
                kind = .lifecycle(lifecycle, state)
            } else {
                // The event first: an unknown one is named as such, whatever else its row holds.
                let isInvalidation = event == "invalidated"
                guard isInvalidation || event == "discarded" else {
                    throw ArchiveStoreError.damagedHistory("a journal entry has an unknown event")
                }
                guard let archive = try? ArchiveName(try statement.string(6)) else {
                    throw ArchiveStoreError.damagedHistory("a journal entry names an invalid archive")
                }
                let reason = try statement.optionalString(8) ?? ""
                kind =
                    isInvalidation
                    ? .invalidated(archive, Generation(try statement.int64(7)), reason: reason)
                    : .discarded(archive, reason: reason)
            }
            try verifyChecksum(statement)
            return JournalEntry(
                sequence: try statement.int64(0), launch: try statement.optionalInt64(1),
                date: Clock.date(milliseconds: try statement.int64(2)), processID: try statement.int64(3), kind: kind)
        } catch let error as ColumnError {
            throw ArchiveStoreError.damagedHistory("a journal entry cannot be read (\(error))")
        }
    }

    /// Throws when the entry a row of ``entryColumns`` holds does not match its checksum:
    /// damage that left every column readable, a flipped byte moving the boundaries between
    /// them, read back as another entry. (One written before v0012 has none.)
    private static func verifyChecksum(_ statement: Statement) throws {
        if let checksum = try JournalEntryRow.checksums(in: statement), checksum.stored != checksum.computed {
            throw ArchiveStoreError.damagedHistory("a journal entry does not match its checksum")
        }
    }

    /// The launches with a lifecycle event in the journal, oldest first; only the newest
    /// `newest` when given.
    ///
    /// The launches' numbers are read first, newest first, then each one's last lifecycle
    /// entry and its first still in the journal, all through `journal_by_launch`; the table's
    /// newest lifecycle entry must be the last of its launch there
    /// (``expectIndexFindsNewestLifecycleEntry(_:_:)``). One query with window functions
    /// (`min(at) OVER (PARTITION BY launch)`, `row_number() OVER (…)`) built and cleared a
    /// temporary b-tree for each launch in the journal: about 6.6 M instructions a
    /// `previousLaunch()` on a full journal, more than a launch's restoration of 100 nodes.
    ///
    /// A launch is numbered by the id of its first entry, so no entry's launch number is
    /// past its own id. One that damage made text, a blob, a real or an integer past the
    /// entry's id is no launch's. All the launches (`newest` `nil`) name it, as damage; the
    /// newest few leave it out (``check()`` names the entry): it sorted above every launch,
    /// and under ``CrashPolicy/discardAfterForegroundDeath`` each launch took it for the
    /// previous one and invalidated what the launch before had saved, until the journal's
    /// pruning deleted it. A number damage made NULL sorts below every launch. (The id is
    /// the row's as SQLite numbers it, `rowid`, which the `id` column is in the store's
    /// schema: in a journal another program rebuilt without that key, `id` is NULL in the
    /// rows written since, and launches are numbered by `rowid`.)
    static func launches(_ connection: Connection, newest: Int?) throws -> [LaunchSummary] {
        let numbers = try connection.statement(
            newest == nil
                ? "SELECT DISTINCT launch FROM journal WHERE app_state IS NOT NULL ORDER BY launch DESC LIMIT ?"
                : """
                SELECT DISTINCT launch FROM journal WHERE app_state IS NOT NULL \
                AND (launch IS NULL OR (typeof(launch) = 'integer' AND launch <= rowid)) ORDER BY launch DESC LIMIT ?
                """)
        defer { numbers.reset() }
        try numbers.bind(Int64(clamping: max(0, newest ?? Int.max)), at: 1)
        // Its last lifecycle entry, and its first still in the journal, whose time is the
        // launch's start: read as entries, checksums verified. (It was the earliest time of
        // its entries, which one damaged time moved.) (`IS`: a launch number damage made NULL
        // is read, and named.)
        let last = try connection.statement(
            "SELECT \(entryColumns) FROM journal WHERE launch IS ?1 AND app_state IS NOT NULL ORDER BY rowid DESC LIMIT 1")
        defer { last.reset() }
        let first = try connection.statement(
            "SELECT \(entryColumns) FROM journal WHERE launch IS ?1 AND app_state IS NOT NULL ORDER BY rowid LIMIT 1")
        defer { first.reset() }
        var launches: [LaunchSummary] = []
        while try numbers.step() {
            try last.bind(valueIn: 0, of: numbers, at: 1)
            try first.bind(valueIn: 0, of: numbers, at: 1)
            defer {
                last.reset()
                first.reset()
            }
            // Each number is an entry's, read in the same transaction, and finds it again (`IS`
            // finds NULL, and the column's affinity stores text that reads as a number as that
            // number): none found would be damage all the same, never a launch to leave out.
            guard try last.step(), try first.step() else {
                throw ArchiveStoreError.damagedHistory("a journal entry's launch number cannot be read")
            }
            // Its start is its first entry's time, the entry read as `journal(limit:)` reads it.
            launches.append(try launch(last, first: try entry(first)))
        }
        try expectIndexFindsNewestLifecycleEntry(last, newestLaunch: launches.first?.launch, connection)
        return launches.reversed()
    }

    /// The newest lifecycle entry, its launch number and whether that is a launch's (see
    /// ``launches(_:newest:)``), read from the table itself (backwards from its end: the
    /// newest entries are its last rows, most of them lifecycle entries).
    private static let newestLifecycleEntry = """
        SELECT rowid, launch, typeof(launch) = 'integer' AND launch <= rowid FROM journal NOT INDEXED \
        WHERE app_state IS NOT NULL ORDER BY rowid DESC LIMIT 1
        """

    /// Throws ``ArchiveStoreError/damagedHistory(_:)`` unless the table's newest lifecycle
    /// entry names a launch, that launch is not newer than `newestLaunch` (the newest the
    /// index of launches names, `nil` for none), and the index finds the entry as that
    /// launch's last (`last`: the statement that finds a launch's last lifecycle entry
    /// through the index). Otherwise the launch it ended read as ending before it, or as
    /// none: an index that damage made lose its last entries (a page that counts fewer cells)
    /// hid a launch's last events, or the launch; an index entry whose launch number damage
    /// changed in place named an older launch as the newest; so did a launch number damage
    /// made no launch's. A launch that died on screen read as one that ended in the
    /// background, and the state it died with was restored. (The newest entry's launch may be
    /// older than the newest: two launches recorded at once interleave their entries.)
    private static func expectIndexFindsNewestLifecycleEntry(
        _ last: Statement, newestLaunch: Int64?, _ connection: Connection
    ) throws {
        let newest = try connection.statement(newestLifecycleEntry)
        defer { newest.reset() }
        guard try newest.step() else { return }
        guard try newest.int64(2) == 1 else {
            throw ArchiveStoreError.damagedHistory("the journal's newest lifecycle entry names no launch")
        }
        try last.bind(valueIn: 1, of: newest, at: 1)
        defer { last.reset() }
        guard let newestLaunch, try newest.int64(1) <= newestLaunch, try last.step(), try last.int64(0) == newest.int64(0)
        else {
            throw ArchiveStoreError.damagedHistory("the journal's index of launches does not find its newest lifecycle entry")
        }
    }

    /// A launch's summary from its last lifecycle entry, a row of ``entryColumns``, and its
    /// first still in the journal, whose time is its start.
    private static func launch(_ statement: Statement, first: JournalEntry) throws -> LaunchSummary {
        do {
            guard let event = LifecycleEvent(rawValue: try statement.string(4)),
                let state = ApplicationState(rawValue: try statement.string(5))
            else { throw ArchiveStoreError.damagedHistory("a journal entry has an unknown event or state") }
            try verifyChecksum(statement)
            let ending: LaunchSummary.Ending =
                switch state {
                case .terminated: .terminated
                case .background: .inBackground
                case .inactive, .active: .inForeground
                }
            return LaunchSummary(
                launch: try statement.int64(1), processID: try statement.int64(3),
                startedAt: first.date, lastEvent: event,
                lastEventAt: Clock.date(milliseconds: try statement.int64(2)), ending: ending,
                processStart: ProcessStart(statement, columns: 9))
        } catch let error as ColumnError {
            throw ArchiveStoreError.damagedHistory("a journal entry cannot be read (\(error))")
        }
    }
}
