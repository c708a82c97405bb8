#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import Synchronization

/// The archives whose restoration is in progress in this process, by store file and name: a
/// marker with this process's id is a restoration still running only if it is listed here
/// (otherwise it was left by an earlier process that had the same id, as in a container where
/// the app is always process 1).
private let restorationsInProgress = Locked(RestorationList())

/// The restorations in progress in this process, and how many times the list changed.
///
/// Lists searched in order, not dictionaries: they hold a few entries (a restoration per
/// archive being restored, a count per store file), and the first use of a `Dictionary` or
/// `Set` keyed by a type of ours costs the process a scan of every protocol conformance
/// (about 390,000 instructions on Linux, at every app's first launch: BENCHMARKS.md, "Cold
/// launches").
private struct RestorationList {
    private var records = KeyedList<RestorationInProgress, RestorationRecord>()
    /// Counts every change, per store file. A read transaction begun before a change may
    /// read the marker of a restoration that the list, looked at after the change, no longer
    /// names: one that ended after the transaction began. (Per file: the restorations of
    /// other stores' files tell nothing.)
    private var changes = FileChangeCounts()

    func changes(of file: StoreFileIdentity) -> UInt64 { changes[file] }

    subscript(key: RestorationInProgress) -> RestorationRecord? {
        get { records[key] }
        set {
            records[key] = newValue
            changes.count(key.file)
        }
    }
}

/// One restoration in ``restorationsInProgress``.
private struct RestorationRecord {
    /// Tells this restoration from an earlier one of the same key: one that never completed
    /// and whose extension is released later, or one of a file since replaced by another
    /// with its inode.
    let token: UInt64
    var state = RestorationState.running
}

/// Where one restoration in ``restorationsInProgress`` is.
private enum RestorationState {
    /// Its work may still run: a save carries its crash marker on.
    case running
    /// An extension was released without being completed: the restoration can never
    /// complete, but its work is gone, so nothing of it can crash the app any more.
    case abandoned
    /// It completed, but its end could not be recorded (the store busy past its timeout, the
    /// disk full): its marker is still there, and the archive's next save or restoration in
    /// this process records the end instead of taking the marker for a death.
    case ended(RestorationEnd)
    /// Not listed, for a read transaction that began before the list last changed: the
    /// marker it reads may be that of a restoration that ended since, unseen. It is taken as
    /// in progress, as it was when the transaction began, never for a death.
    case endedUnseen
}

/// What recording a restoration's end writes.
private struct RestorationEnd {
    let generation: Generation
    /// Tells the restored generation from another of its number (after an erase).
    let nodeDigest: Int64
    let report: RestoreReport
    /// The report as stored; `nil` when it cannot be encoded (the end is recorded without it).
    let blob: [UInt8]?
}

private let nextRestorationToken = Atomic<UInt64>(1)

/// A restoration, as ``restorationsInProgress`` lists it.
private struct RestorationInProgress: Hashable {
    let file: StoreFileIdentity
    let archive: ArchiveName
}

extension ArchiveStore {
    /// What a launch may restore, once the crash policy has dealt with what an earlier
    /// launch left.
    struct PreparedRestoration: Sendable {
        /// The generation to restore, read in the same transaction as the decision; `nil`
        /// when there is none.
        var snapshot: RestorationSnapshot?
        /// Why there is none although the archive has generations (invalidated, or being
        /// restored by another live process); `nil` when there is simply nothing saved.
        var refusal: String?
        /// Generations this launch invalidated because their restoration died.
        var invalidated: [Generation]
        /// Damage met reading the generation to restore after a marker was dealt with: thrown
        /// once the marker's removal is committed, which it must not undo (the marker would
        /// stay, and every launch after would meet the damage again instead of a save's new
        /// generation).
        var damage: ArchiveStoreError? = nil
    }

    /// What a crash marker says.
    struct Marker {
        var generation: Generation
        var processID: Int64
        /// When its restoration began, in milliseconds since 1970.
        var startedAt: Int64
        /// When the process started, as the system counts it; `nil` in a marker without it.
        var processStart: ProcessStart?
        /// A marker whose columns cannot be read: a restoration that died, of the archive's
        /// newest generation; its other values are 0.
        var isUnreadable = false
        /// The archive id its row is stored under when that is not its archive's (damage
        /// changed the row's key; its checksum names its archive); `nil` when it is, or when
        /// the marker is not written yet. What removes the marker removes that row.
        var storedUnder: Int64? = nil

        /// The marker of `archive` whose columns cannot be read (``isUnreadable``): a
        /// restoration that died, of its newest generation.
        static func unreadable(of archive: ArchiveRows.ArchiveRow, storedUnder key: Int64? = nil) -> Marker {
            Marker(
                generation: archive.generation, processID: 0, startedAt: 0, processStart: nil, isUnreadable: true,
                storedUnder: key)
        }

        /// Whether the process that wrote it runs.
        var processIsRunning: Bool {
            !isUnreadable && ProcessIdentity.isRunning(processID, recordedAt: startedAt, start: processStart)
        }

        /// The checksum of the marker of `archive` (schema v0013): its every column but the
        /// archive's id, by which it finds its archive, whose name it covers instead.
        func checksum(of archive: ArchiveName) -> Int64 {
            var checksum = Checksum(domain: 0x4D52_4B52)  // "MRKR"
            checksum.combine(archive.rawValue)
            checksum.combine(generation.rawValue)
            checksum.combine(startedAt)
            checksum.combine(processID)
            checksum.combine(processStart?.boot)
            checksum.combine(processStart?.ticks)
            return checksum.finalize()
        }
    }

    /// Applies the crash policy to a marker left by a restoration that died, then picks the
    /// generation to restore and reads it, all in one transaction. Writes only when there is
    /// such a marker; a read-only store decides what applying the policy would, and writes
    /// nothing (the marker stays for the app's next launch).
    func prepareRestoration(of archive: ArchiveName) throws(ArchiveStoreError) -> PreparedRestoration {
        let policy = configuration.crashPolicy
        // That policy judges the previous launch when this one starts: make sure it has.
        if policy == .discardAfterForegroundDeath, mode == .readWrite { try startLaunchUnlessUnderway() }
        // Looked up once the transaction sees a marker of this process, not before: a
        // restoration lists itself before it writes its marker, so a marker seen is listed
        // until the transaction that removes it commits. Looked up before, the list could
        // miss a restoration that began in between, on another thread, whose marker the
        // transaction then took for one a dead process left.
        let key = progressKey(archive)
        let seal = self.seal
        // A read-only store decides on a marker a dead restoration left without writing, and
        // judges the previous launch as the app's next read-write launch will.
        let dealing: MarkerDealing = mode == .readOnly ? .decideWithoutWriting : .deferToWriter
        let (path, file) = (self.path, self.file)
        // Its read transaction may read a marker whose restoration ended after the transaction
        // began: the list not naming it then tells nothing, unless the list has not changed
        // since before the transaction began. (A writer's transaction sees every commit.)
        let changesBefore = restorationsInProgress.withLock { $0.changes(of: file) }
        let launchesBefore = dealing == .decideWithoutWriting ? Self.launchListChanges(of: file) : nil
        let progressHere = {
            restorationsInProgress.withLock { list -> RestorationState? in
                let state = list[key]?.state
                if state == nil, dealing == .decideWithoutWriting, list.changes(of: file) != changesBefore { return .endedUnseen }
                return state
            }
        }
        if let prepared = try read({ connection in
            let foregroundDeath =
                dealing == .decideWithoutWriting && policy == .discardAfterForegroundDeath
                ? try Self.previousLaunchDiedInForeground(
                    connection, path: path, file: file, ownLaunch: nil, listChangesBefore: launchesBefore) : nil
            // Writes nothing, and so names no launch.
            return try Self.prepare(
                archive, policy: policy, progressHere: progressHere, launch: nil, dealing: dealing,
                foregroundDeath: foregroundDeath, seal: seal, connection)
        }) {
            return prepared
        }
        let prepared = try write { connection in
            // A restoration of this process that completed without its end recorded is no
            // restoration that died.
            if let row = try ArchiveRows.archive(named: archive, in: connection) {
                try recordEndLeftUnrecorded(of: row, connection)
            }
            // The launch its entries belong to, looked at with the connection held, as a record
            // changes it: looked at before, it could miss the launch another thread's event
            // started meanwhile, and file the invalidations it commits after under none.
            let launch = currentLaunch.withLock { $0 }
            do {
                guard
                    let prepared = try Self.prepare(
                        archive, policy: policy, progressHere: progressHere, launch: launch, dealing: .apply,
                        foregroundDeath: nil, seal: seal, connection)
                else {
                    throw ArchiveStoreError.damagedStore("a crash marker could not be dealt with")
                }
                return prepared
            } catch let failure as MarkerDealtWith {
                return PreparedRestoration(
                    snapshot: nil, refusal: nil, invalidated: failure.invalidated,
                    damage: Self.translated(failure.damage, path: path))
            }
        }
        for generation in prepared.invalidated {
            logger?.warning(
                "The app died while restoring archive '\(archive)' generation \(generation); the crash policy invalidated it")
        }
        if let damage = prepared.damage { throw damage }
        return prepared
    }

    /// Commits the crash marker of a restoration about to decode `generation`, whose node
    /// digest is `nodeDigest`, and counts the attempt. A generation of that number with
    /// another digest is another one (the store was erased and saved again since the launch
    /// read it): it gets no marker, which would have it judged for a restoration of state it
    /// does not hold.
    ///
    /// - Returns: the restoration's token, for ``restorationAbandoned(_:token:)``, or why it
    ///   is refused, writing nothing: another restoration of the archive, in this process or
    ///   another, began since this one was prepared.
    func beginRestoration(
        of archive: ArchiveName, generation: Generation, nodeDigest: Int64
    ) throws(ArchiveStoreError) -> RestorationStart {
        let key = progressKey(archive)
        let token = nextRestorationToken.wrappingAdd(1, ordering: .relaxed).oldValue
        // What the list held for the archive before this restoration took its place: put back
        // if the transaction does not commit.
        var replaced: RestorationRecord? = nil
        do {
            let refusal = try write { connection in
                try writeMarker(
                    of: archive, generation: generation, nodeDigest: nodeDigest, token: token, replacing: &replaced,
                    connection)
            }
            return refusal.map { .refused(reason: $0) } ?? .began(token: token)
        } catch {
            restorationsInProgress.withLock { if $0[key]?.token == token { $0[key] = replaced } }
            throw error
        }
    }

    /// Lists the restoration and writes its marker, in the transaction of `connection`.
    /// Returns why it is refused, changing nothing, when another restoration of the archive
    /// is in progress: two restorations prepared at once (two threads, two processes) both
    /// found no marker.
    ///
    /// The second one to begin replaced the first one's marker (and, in this process, its
    /// entry in the list, which a failure to write the marker then removed): the first ran
    /// unguarded, or its marker was taken for a death. So the marker is looked at, and the
    /// restoration listed, under the write lock.
    private func writeMarker(
        of archive: ArchiveName, generation: Generation, nodeDigest: Int64, token: UInt64,
        replacing replaced: inout RestorationRecord?, _ connection: Connection
    ) throws -> String? {
        let key = progressKey(archive)
        let row = try ArchiveRows.archive(named: archive, in: connection)
        if let row {
            // One that completed without its end recorded is not in progress any more.
            try recordEndLeftUnrecorded(of: row, connection)
        }
        let lookup = try row.map { try Self.markers(of: $0, connection) }
        let found = lookup?.marker
        if let found, found.processID != Int64(getpid()) {
            // The next restoration deals with one whose process died since.
            if found.isUnreadable { return "a restoration whose crash marker cannot be read died as this one began" }
            return found.processIsRunning
                ? Self.inProgress(in: found.processID)
                : "a restoration of another process (\(found.processID)) died as this one began"
        }
        let listed = restorationsInProgress.withLock { restorations in
            let previous = restorations[key]
            // A marker of this process that the list names is a restoration in progress here.
            if found != nil, previous != nil { return false }
            replaced = previous
            restorations[key] = RestorationRecord(token: token)
            return true
        }
        guard listed else { return Self.inProgressHere }
        guard let row else { return nil }
        // The attempt is counted on the generation read, found in the one read of its row;
        // another one of its number gets no marker. A generation no longer there (pruned by
        // saves since the launch read it) still gets the marker, for saves during the
        // restoration to carry on.
        var anotherGeneration = false
        try ArchiveRows.changeState(of: generation, archive: row, in: connection) { state in
            guard state.nodeDigest == nodeDigest else {
                anotherGeneration = true
                return false
            }
            state.restoreAttempts += 1
            return true
        }
        if anotherGeneration { return nil }
        if let lookup { try Self.moveBack(lookup, connection) }
        // Replacing this process's earlier marker wherever damage moved it.
        try Self.write(
            Marker(
                generation: generation, processID: Int64(getpid()), startedAt: Clock.nowMilliseconds(),
                processStart: ProcessStart.current, storedUnder: found?.storedUnder),
            of: row, connection)
        return nil
    }

    /// Writes the archive's one crash marker, replacing the one it has, if any: one read
    /// where damage moved it is written back under the archive's id.
    static func write(_ marker: Marker, of archive: ArchiveRows.ArchiveRow, _ connection: Connection) throws {
        if let stray = marker.storedUnder, stray != archive.id {
            try removeMarker(storedUnder: stray, connection)
        }
        // The archive's one marker replaced whole: `REPLACE` costs 26,000 instructions to
        // prepare at each launch, the `ON CONFLICT … DO UPDATE` it replaced 63,000.
        let statement = try connection.statement(
            """
            INSERT OR REPLACE INTO crash_marker (archive_id, generation, started_at, process_id, process_boot, \
            process_start, checksum) VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        defer { statement.reset() }
        try statement.bind(archive.id, at: 1)
        try statement.bind(marker.generation.rawValue, at: 2)
        try statement.bind(marker.startedAt, at: 3)
        try statement.bind(marker.processID, at: 4)
        try statement.bind(marker.processStart?.boot, at: 5)
        try statement.bind(marker.processStart?.ticks, at: 6)
        try statement.bind(marker.checksum(of: archive.name), at: 7)
        try statement.run()
    }

    /// How a restoration's start went (``beginRestoration(of:generation:nodeDigest:)``).
    enum RestorationStart {
        /// Its marker is committed; the token is what the store knows it by.
        case began(token: UInt64)
        /// Another restoration of the archive began first.
        case refused(reason: String)
    }

    /// Removes this process's crash marker once a restoration has completed, marks the
    /// generation known good, and keeps the report, in one transaction. A generation of that
    /// number with another `nodeDigest` is another one (the store was erased and saved again
    /// since): it is left alone, and the report goes with the store it was about.
    ///
    /// When this throws, the end is kept in this process: the archive's next save or
    /// restoration here records it, rather than taking the marker for a restoration that died.
    /// A launch after this process ends does take it for one.
    ///
    /// - Throws: ``ArchiveStoreError/reportNotRecorded(_:)`` after recording the end without
    ///   the report, when the report cannot be encoded.
    func finishRestoration(
        of archive: ArchiveName, generation: Generation, nodeDigest: Int64, token: UInt64, report: RestoreReport
    ) throws(ArchiveStoreError) {
        // A report that cannot be encoded does not stop the end from being recorded; its error
        // is thrown after. (Not a `Result`: see `ChildPaths.Assigned`.)
        var blob: [UInt8]?
        var unencodable: ArchiveStoreError?
        do throws(ArchiveStoreError) { blob = try Self.storedBlob(of: report) } catch { unencodable = error }
        let end = RestorationEnd(generation: generation, nodeDigest: nodeDigest, report: report, blob: blob)
        let key = progressKey(archive)
        do {
            try write { connection in
                guard let row = try ArchiveRows.archive(named: archive, in: connection) else { return }
                // Under the write lock: a restoration that began since lists itself before it
                // writes its marker.
                let replaced = restorationsInProgress.withLock { $0[key].map { $0.token != token } ?? false }
                try record(end, of: row, markerIsAnother: replaced, connection)
            }
        } catch {
            restorationsInProgress.withLock { if $0[key]?.token == token { $0[key]?.state = .ended(end) } }
            throw error
        }
        restorationsInProgress.withLock { if $0[key]?.token == token { $0[key] = nil } }
        if let unencodable { throw unencodable }
    }

    /// Records the end of this process's restoration of `archive` that completed when its end
    /// could not be recorded (``finishRestoration(of:generation:nodeDigest:token:report:)``
    /// threw), in the transaction of `connection`: before the archive's save or restoration,
    /// which would otherwise carry that marker on, or take it for a death.
    func recordEndLeftUnrecorded(of archive: ArchiveRows.ArchiveRow, _ connection: Connection) throws {
        let key = progressKey(archive.name)
        guard let listed = restorationsInProgress.withLock({ $0[key] }), case .ended(let end) = listed.state else {
            return
        }
        // A restoration lists itself before it writes its marker: one of this process seen
        // here is the one that ended, until its end is recorded.
        guard let marker = try Self.marker(of: archive, connection), marker.processID == Int64(getpid()) else {
            // Recorded already (a transaction that committed), or the store erased since.
            restorationsInProgress.withLock { if $0[key]?.token == listed.token { $0[key] = nil } }
            return
        }
        try record(end, of: archive, markerIsAnother: false, connection)
        logger?.notice(
            "The end of restoring archive '\(archive.name)' generation \(end.generation), which could not be recorded when it completed, is recorded with this save or restoration")
    }

    /// Writes what a restoration's end changes: this process's marker removed, the restored
    /// generation known good, and its report kept. With `markerIsAnother`, a later
    /// restoration of the archive in this process (begun after an erase) has replaced this
    /// one: the marker, if any, is that one's, and stays.
    private func record(
        _ end: RestorationEnd, of row: ArchiveRows.ArchiveRow, markerIsAnother: Bool, _ connection: Connection
    ) throws {
        if !markerIsAnother {
            let marker = try Self.marker(of: row, connection)
            // A save during the restoration carried the marker, and the attempt, on to the
            // generation it wrote: that one's count starts again too.
            if let marker, marker.processID == Int64(getpid()), marker.generation != end.generation {
                try ArchiveRows.changeState(of: marker.generation, archive: row, in: connection) { state in
                    state.restoreAttempts = 0
                    return true
                }
            }
            let removal = try connection.statement("DELETE FROM crash_marker WHERE archive_id = ? AND process_id = ?")
            defer { removal.reset() }
            try removal.bind(marker?.storedUnder ?? row.id, at: 1)
            try removal.bind(Int64(getpid()), at: 2)
            try removal.run()
        }
        // Not there any more when a save during the restoration pruned it: its report is
        // kept all the same.
        var anotherGeneration = false
        try ArchiveRows.changeState(of: end.generation, archive: row, in: connection) { state in
            guard state.nodeDigest == end.nodeDigest else {
                anotherGeneration = true
                return false
            }
            state.restoredCleanly = true
            state.restoreAttempts = 0
            return true
        }
        if anotherGeneration { return }
        if let blob = end.blob { try keepReport(blob, of: end.report, archive: row, connection) }
    }

    /// Whether an archive has a crash marker: a restoration in progress, or one that died.
    public func hasCrashMarker(_ archive: ArchiveName = .main) throws(ArchiveStoreError) -> Bool {
        try read { connection in
            guard let row = try ArchiveRows.archive(named: archive, in: connection) else { return false }
            return try Self.marker(of: row, connection) != nil
        }
    }

    /// The crash markers of the store's archives: restorations in progress, or ones that
    /// died and that the next launch will deal with, sorted by archive name.
    ///
    /// Each is read as the launch reads it: a marker whose values cannot be read (or do not
    /// match its checksum) is listed as ``CrashMarker/isDamaged``, not thrown (that said the
    /// whole store was damaged, which tells an app to erase it, while its launches deal with
    /// such a marker).
    public func crashMarkers() throws(ArchiveStoreError) -> [CrashMarker] {
        try read { connection in
            try ArchiveRows.allStoredArchives(in: connection).compactMap { stored in
                guard let marker = try Self.marker(of: stored.row, connection) else { return nil }
                return CrashMarker(
                    archive: stored.row.name, generation: marker.generation,
                    startedAt: Clock.date(milliseconds: marker.startedAt), processID: marker.processID,
                    processIsRunning: marker.processIsRunning, isDamaged: marker.isUnreadable)
            }
        }
    }

    // MARK: Saves during a restoration

    /// Whether this process is restoring `archive` from this store's file, with work that may
    /// still run: a save of it now carries the restoration's crash marker on
    /// (``restoration(carriedOnFrom:_:)``).
    private func isRestoringHere(_ archive: ArchiveName) -> Bool {
        restorationsInProgress.withLock { restorations in
            if case .running = restorations[progressKey(archive)]?.state { true } else { false }
        }
    }

    /// Notes that an extension of this process's restoration of `archive` (the one
    /// ``beginRestoration(of:generation:)`` gave `token`) was released without being
    /// completed: the restoration stays in progress (it can never complete), but saves no
    /// longer carry its marker on.
    func restorationAbandoned(_ archive: ArchiveName, token: UInt64) {
        let key = progressKey(archive)
        restorationsInProgress.withLock { restorations in
            if restorations[key]?.token == token, case .running = restorations[key]?.state {
                restorations[key]?.state = .abandoned
            }
        }
    }

    /// This process's restoration of an archive, in progress while a save of it runs: its
    /// crash marker, which the generation the save writes takes on, with the attempts counted
    /// so far (R11).
    struct CarriedRestoration {
        let marker: Marker
        /// At least the attempt in progress, whatever is left of the generation's row.
        let attempts: Int64
    }

    /// What a save of `archive` does about this process's restoration of it, in the save's
    /// transaction, before it prunes anything: while the restoration runs, its marker and the
    /// attempts of the generation it restores, to carry them on (`nil` otherwise); once it
    /// completed without its end recorded, it records that end.
    ///
    /// Looked up under the write lock: a restoration that began on another thread until then
    /// has its marker here, and is listed.
    func restorationCarriedOn(by archive: ArchiveRows.ArchiveRow, _ connection: Connection) throws -> CarriedRestoration? {
        try recordEndLeftUnrecorded(of: archive, connection)
        return isRestoringHere(archive.name) ? try Self.restoration(carriedOnFrom: archive, connection) : nil
    }

    /// This process's restoration of `archive`, for a save during it; `nil` when the archive
    /// has no readable marker of this process (the store was erased since, or the archive
    /// discarded).
    ///
    /// A generation saved while a restoration is in progress holds the state whose
    /// restoration has not completed (a page still loading): if the app dies before it does,
    /// restoring that generation would die the same way. So the save moves the marker to it
    /// (``carryOn(_:to:of:_:)``), with the attempts counted so far (R11), as UIKit deletes
    /// whatever state it has after a crash during restoration.
    static func restoration(carriedOnFrom archive: ArchiveRows.ArchiveRow, _ connection: Connection) throws
        -> CarriedRestoration?
    {
        guard let marker = try marker(of: archive, connection), !marker.isUnreadable, marker.processID == Int64(getpid())
        else { return nil }
        let restored = try? ArchiveRows.generation(marker.generation, of: archive, in: connection)
        return CarriedRestoration(marker: marker, attempts: max(1, restored?.restoreAttempts ?? 1))
    }

    /// Moves this process's crash marker of `archive` (as ``restoration(carriedOnFrom:_:)``
    /// read it, in the same transaction) to `generation`, just written by a save during the
    /// restoration: the marker written whole again, its checksum too.
    static func carryOn(
        _ restoration: CarriedRestoration, to generation: Generation, of archive: ArchiveRows.ArchiveRow,
        _ connection: Connection
    ) throws {
        var marker = restoration.marker
        marker.generation = generation
        try write(marker, of: archive, connection)
    }

    // MARK: Internals

    /// Why a restoration is refused while another one of its archive runs in this process.
    static let inProgressHere = "its restoration in this process is still in progress"

    /// Why a restoration is refused while the process `processID` restores its archive.
    static func inProgress(in processID: Int64) -> String {
        "another process (\(processID)) is restoring it"
    }

    private func progressKey(_ archive: ArchiveName) -> RestorationInProgress {
        RestorationInProgress(file: file, archive: archive)
    }

    /// How ``prepare(_:policy:progressHere:launch:dealing:foregroundDeath:seal:_:)`` deals with a marker
    /// that a restoration which died left.
    private enum MarkerDealing {
        /// It does not: it returns `nil`, for a write transaction to deal with the marker.
        case deferToWriter
        /// It applies the crash policy and removes the marker (in a write transaction).
        case apply
        /// It decides what applying the policy would, and writes nothing (a read-only store):
        /// the generation the policy would invalidate is left out of the choice.
        case decideWithoutWriting
    }

    /// `nil` when a marker must be dealt with and `dealing` defers that to a write transaction.
    /// `launch` is the launch the journal entries it writes belong to (only `.apply` writes).
    ///
    /// `foregroundDeath` is why the previous launch died in the foreground, for a read-only
    /// store under ``CrashPolicy/discardAfterForegroundDeath``: the app's next read-write
    /// launch invalidates the newest generation of every archive.
    private static func prepare(
        _ archive: ArchiveName, policy: CrashPolicy, progressHere: () -> RestorationState?, launch: StoreLaunch?,
        dealing: MarkerDealing, foregroundDeath: String?, seal: StateSeal?, _ connection: Connection
    ) throws -> PreparedRestoration? {
        guard let row = try ArchiveRows.archive(named: archive, in: connection), row.discardedAt == nil,
            row.generation.rawValue > 0
        else { return PreparedRestoration(snapshot: nil, refusal: nil, invalidated: []) }
        if let foregroundDeath {
            let refusal = "\(foregroundDeath): a read-write launch invalidates generation \(row.generation)"
            return try choose(
                row, policy: policy, invalidated: [], unrecorded: (row.generation, refusal), seal: seal, connection)
        }
        var invalidated: [Generation] = []
        if let marker = try marker(of: row, connection) {
            if marker.processID == Int64(getpid()), let progress = progressHere() {
                switch progress {
                case .running, .abandoned, .endedUnseen:
                    return PreparedRestoration(snapshot: nil, refusal: inProgressHere, invalidated: [])
                case .ended:
                    // It completed: a writer records its end first (`recordEndLeftUnrecorded`),
                    // a read-only store restores as after any completed restoration.
                    if dealing == .deferToWriter { return nil }
                    return try choose(row, policy: policy, invalidated: [], seal: seal, connection)
                }
            }
            if marker.processID != Int64(getpid()), marker.processIsRunning {
                return PreparedRestoration(
                    snapshot: nil, refusal: Self.inProgress(in: marker.processID), invalidated: [])
            }
            if dealing == .deferToWriter { return nil }
            // That restoration died: apply the policy, then forget the marker. A generation
            // whose header is damaged is never restored: there is nothing to invalidate, and
            // its damage must not keep the marker (and every launch after) from going on.
            let died: ArchiveRows.GenerationRow?
            do {
                died = try ArchiveRows.generation(marker.generation, of: row, in: connection)
            } catch where ArchiveRows.isDamage(error) {
                died = nil
            }
            let attempts = died?.restoreAttempts ?? 0
            let spent =
                switch policy {
                case .discard, .fallBackToKnownGood, .discardAfterForegroundDeath: true
                case .retry(let allowed): attempts >= Int64(allowed)
                }
            if dealing == .decideWithoutWriting {
                let unrecorded =
                    spent && died != nil
                    ? (
                        marker.generation,
                        "the app died while restoring generation \(marker.generation), which a read-write launch invalidates"
                    ) : nil
                return try choose(row, policy: policy, invalidated: [], unrecorded: unrecorded, seal: seal, connection)
            }
            if spent, died != nil {
                let reason =
                    attempts > 1
                    ? "the app died during each of its last \(attempts) restorations" : "the app died while restoring it"
                if try invalidate(marker.generation, of: row, reason: reason, launch: launch, connection) != nil {
                    invalidated.append(marker.generation)
                }
            }
            try removeMarker(storedUnder: marker.storedUnder ?? row.id, connection)
            do {
                return try choose(row, policy: policy, invalidated: invalidated, seal: seal, connection)
            } catch where ArchiveRows.isDamage(error) {
                throw MarkerDealtWith(invalidated: invalidated, damage: error)
            }
        }
        return try choose(row, policy: policy, invalidated: invalidated, seal: seal, connection)
    }

    /// Damage met after a marker was dealt with, in the transaction that did so.
    private struct MarkerDealtWith: Error {
        let invalidated: [Generation]
        let damage: any Error
    }

    /// The generation to restore, read: the newest, unless it was invalidated (then the newest
    /// known good one under `fallBackToKnownGood`, or none).
    ///
    /// `unrecorded` is a generation the crash policy invalidates, which a read-only store
    /// cannot record, and the refusal that says so: it is chosen as an invalidated one would be.
    private static func choose(
        _ row: ArchiveRows.ArchiveRow, policy: CrashPolicy, invalidated: [Generation],
        unrecorded: (generation: Generation, refusal: String)? = nil, seal: StateSeal?, _ connection: Connection
    ) throws -> PreparedRestoration {
        let generations = try ArchiveRows.generations(of: row, in: connection, forRestoring: true)
        guard let newest = generations.first(where: { $0.generation == row.generation }) else {
            throw ArchiveStoreError.damagedArchive(row.name, row.generation, ArchiveRows.newestHeaderMissing)
        }
        func isRefused(_ generation: ArchiveRows.GenerationRow) -> Bool {
            generation.invalidatedReason != nil || generation.generation == unrecorded?.generation
        }
        if !isRefused(newest) {
            return PreparedRestoration(
                snapshot: try restorationSnapshot(of: row, generation: newest, seal: seal, connection), refusal: nil,
                invalidated: invalidated)
        }
        if policy == .fallBackToKnownGood,
            let good = generations.first(where: { $0.generation < newest.generation && $0.restoredCleanly && !isRefused($0) })
        {
            return PreparedRestoration(
                snapshot: try restorationSnapshot(of: row, generation: good, seal: seal, connection), refusal: nil,
                invalidated: invalidated)
        }
        let refusal =
            if let reason = newest.invalidatedReason {
                "generation \(newest.generation) was invalidated: \(reason)"
            } else {
                unrecorded?.refusal ?? "generation \(newest.generation) is refused"
            }
        return PreparedRestoration(snapshot: nil, refusal: refusal, invalidated: invalidated)
    }

    /// Invalidates a generation that is not invalidated yet and says so in the journal.
    /// Returns the journal's entry, or `nil` when the generation was invalidated already.
    static func invalidate(
        _ generation: Generation, of archive: ArchiveRows.ArchiveRow, reason: String, launch: StoreLaunch?,
        _ connection: Connection
    ) throws -> JournalEntry? {
        let changed = try ArchiveRows.changeState(of: generation, archive: archive, in: connection) { state in
            guard state.invalidatedAt == nil else { return false }
            state.invalidatedAt = Clock.nowMilliseconds()
            state.invalidatedReason = reason
            return true
        }
        guard changed else { return nil }
        return try append(.invalidated(archive.name, generation, reason: reason), launch: launch, connection)
    }

    /// Invalidates the newest generation of every archive (those not invalidated yet), as
    /// ``CrashPolicy/discardAfterForegroundDeath`` does after a death in the foreground.
    static func invalidateAll(reason: String, launch: StoreLaunch?, _ connection: Connection) throws -> [JournalEntry] {
        // An archive whose row is damaged is not restored anyway, and its next full save
        // replaces it: it does not stop the others' invalidation.
        try ArchiveRows.allStoredArchives(in: connection)
            .filter { $0.damage == nil && $0.row.discardedAt == nil && $0.row.generation.rawValue > 0 }
            .compactMap { archive in
                try invalidate(archive.row.generation, of: archive.row, reason: reason, launch: launch, connection)
            }
    }

    /// Deletes the crash marker stored under the archive id `key`.
    static func removeMarker(storedUnder key: Int64, _ connection: Connection) throws {
        let removal = try connection.statement("DELETE FROM crash_marker WHERE archive_id = ?")
        defer { removal.reset() }
        try removal.bind(key, at: 1)
        try removal.run()
    }

    /// Reads the archive's crash marker for ``check()``, which names a marker whose columns
    /// cannot be read (a launch takes it for a restoration that died), and one stored under
    /// another key.
    static func readMarker(of archive: ArchiveRows.ArchiveRow, _ connection: Connection) throws -> Marker? {
        try marker(of: archive, connection, throwingWhenUnreadable: true)
    }

    /// The archive's crash marker: the row stored under the archive's id, or else one that
    /// damage moved to another key, which its checksum names the archive's.
    ///
    /// Every marker of the store is read, one statement with no condition (a store has one
    /// marker an archive being restored, most launches none): looked up by the archive's id
    /// alone, a marker whose key a flipped bit changed was not found, and the restoration that
    /// died under it went unjudged, its state restored again, as often as it crashed the app.
    /// A marker moved so that no checksum names (written before schema v0013, or its values
    /// damaged too) cannot be told another archive's: in a store whose only archive this is,
    /// it is this archive's, whose values cannot be read; otherwise it is left to ``check()``,
    /// which names it.
    ///
    /// A marker whose columns cannot be read (a value of another type: only damage does that)
    /// is a restoration that died, of the archive's newest generation: that it began is
    /// certain, and nothing else is. Thrown, it stopped every restoration of the archive, at
    /// every launch (a save does not replace a marker): the crash policy deals with it instead.
    static func marker(
        of archive: ArchiveRows.ArchiveRow, _ connection: Connection,
        throwingWhenUnreadable: Bool = false
    ) throws -> Marker? {
        try markers(of: archive, connection, throwingWhenUnreadable: throwingWhenUnreadable).marker
    }

    /// What a lookup of an archive's crash marker found.
    struct MarkerLookup {
        /// The archive's marker (``marker(of:_:throwingWhenUnreadable:)``).
        var marker: Marker?
        /// Another archive's marker that damage moved under this archive's id, when that
        /// archive has none under its own: what writes this archive's marker, or deletes it,
        /// moves that one back first (``moveBack(_:_:)``), rather than replace or delete it.
        var displaced: (archive: ArchiveRows.ArchiveRow, marker: Marker)?
    }

    /// ``marker(of:_:throwingWhenUnreadable:)``, and another archive's marker stored under this
    /// archive's id.
    static func markers(
        of archive: ArchiveRows.ArchiveRow, _ connection: Connection, throwingWhenUnreadable: Bool = false
    ) throws -> MarkerLookup {
        let statement = try connection.statement(
            """
            SELECT archive_id, generation, started_at, process_id, process_boot, process_start, checksum \
            FROM crash_marker
            """)
        defer { statement.reset() }
        var found = MarkerLookup()
        var otherKeys: [Int64] = []
        var unattributed: Int64? = nil
        while try statement.step() {
            // The table's key; one that cannot be read (a table rebuilt without it) is no
            // archive's.
            guard let key = try? statement.int64(0) else { continue }
            if key == archive.id {
                do {
                    found.marker = try marker(in: statement, of: archive, requiringChecksum: false)
                    return found
                } catch {
                    if var displaced = anotherArchivesMarker(statement, than: archive, connection) {
                        displaced.marker.storedUnder = key
                        found.displaced = displaced
                        continue
                    }
                    if throwingWhenUnreadable { throw (error as? DamagedMarker) ?? DamagedMarker(reason: "\(error)") }
                    found.marker = .unreadable(of: archive)
                    return found
                }
            }
            otherKeys.append(key)
            guard found.marker == nil else { continue }
            if var marker = try? marker(in: statement, of: archive, requiringChecksum: true) {
                marker.storedUnder = key
                found.marker = marker
            } else if unattributed == nil {
                unattributed = key
            }
        }
        // One whose archive has a marker of its own stays where it is, for the archive whose
        // key it holds to replace.
        if let displaced = found.displaced, otherKeys.contains(displaced.archive.id) { found.displaced = nil }
        // A marker under another key that no checksum names (its values damaged too, or none
        // written before v0013) is some archive's restoration that died: in a store whose only
        // archive is this one, this one's, whose values cannot be read. Left alone, the app
        // restored the state that had just crashed it, and the row stayed for good.
        if found.marker == nil, let unattributed, isOnlyArchive(archive, connection) {
            found.marker = .unreadable(of: archive, storedUnder: unattributed)
        }
        return found
    }

    /// Whether `archive` is the store's only archive, and the store lost none (whose marker
    /// that would be): its only archive row (a row whose name cannot be read is one too), and
    /// no generation of no archive. Looked at only for a marker stored under another key that
    /// no checksum names; a list that cannot be read says no.
    private static func isOnlyArchive(_ archive: ArchiveRows.ArchiveRow, _ connection: Connection) -> Bool {
        guard let (named, unnamed) = try? ArchiveRows.storedArchives(in: connection),
            unnamed.isEmpty, named.map(\.row.id) == [archive.id]
        else { return false }
        return (try? ArchiveRows.expectNoArchiveLost(in: connection)) != nil
    }

    /// Moves another archive's marker that damage moved under an archive's id back to its
    /// archive's id, before the archive's own marker is written or deleted there.
    static func moveBack(_ lookup: MarkerLookup, _ connection: Connection) throws {
        guard let displaced = lookup.displaced else { return }
        try write(displaced.marker, of: displaced.archive, connection)
    }

    /// The archive whose marker is in the row `statement` is on, stored under the id of
    /// `archive` but not matching it, and that marker, when it is another archive's that
    /// damage moved there (its checksum matches that archive). Looked at only for a marker
    /// that does not match its key's archive.
    ///
    /// Archives that cannot be listed (damage) claim none: the marker is then the damaged one
    /// of `archive`, as it was before markers were looked for elsewhere.
    private static func anotherArchivesMarker(
        _ statement: Statement, than archive: ArchiveRows.ArchiveRow, _ connection: Connection
    ) -> (archive: ArchiveRows.ArchiveRow, marker: Marker)? {
        let archives = (try? ArchiveRows.allStoredArchives(in: connection)) ?? []
        for other in archives where other.row.id != archive.id {
            if let marker = try? marker(in: statement, of: other.row, requiringChecksum: true) { return (other.row, marker) }
        }
        return nil
    }

    /// The marker in the row `statement` is on, if it is one of `archive`: with a checksum
    /// (written since schema v0013) that matches the archive; without one, only when not
    /// `requiringChecksum`.
    ///
    /// - Throws: when a column cannot be read, or the checksum does not match.
    private static func marker(in statement: Statement, of archive: ArchiveRows.ArchiveRow, requiringChecksum: Bool)
        throws -> Marker
    {
        let marker = Marker(
            generation: Generation(try statement.int64(1)), processID: try statement.int64(3),
            startedAt: try statement.int64(2), processStart: ProcessStart(statement, columns: 4))
        // Values damage changed read as others: a marker whose checksum (one written since
        // v0013) does not match is one whose values cannot be read. Its recorded start is
        // read as stored for the checksum: text that is not UTF-8 does not match.
        guard let stored = try statement.optionalInt64(6) else {
            if requiringChecksum { throw DamagedMarker(reason: "it has no checksum") }
            return marker
        }
        var written = marker
        written.processStart = ProcessStart(boot: try statement.optionalString(4), ticks: try statement.optionalInt64(5))
        guard written.checksum(of: archive.name) == stored else { throw DamagedMarker(reason: "it does not match its checksum") }
        return marker
    }

    /// Why a crash marker cannot be read: a value of another type, or values that do not
    /// match its checksum (what ``check()`` names; a launch takes such a marker for a
    /// restoration that died).
    struct DamagedMarker: Error {
        let reason: String
    }
}
