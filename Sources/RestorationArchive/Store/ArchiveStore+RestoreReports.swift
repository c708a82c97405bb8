import Logging

extension ArchiveStore {
    /// How many restore reports each archive keeps; older ones are deleted as new ones arrive.
    public static let retainedRestoreReports = 16

    /// The restore reports of an archive, newest first (at most ``retainedRestoreReports``).
    /// Damage to the archive's row or generations does not hide them: each report has a
    /// checksum of its own.
    ///
    /// - Parameters:
    ///   - archive: the archive, ``ArchiveName/main`` by default.
    ///   - limit: at most this many, the newest; all that are kept when `nil`. Only the
    ///     reports returned are read, so that damage to an older one does not hide the newest
    ///     (`limit: 1` is the last restoration's).
    /// - Throws: ``ArchiveStoreError/damagedHistory(_:)`` for a report that cannot be read
    ///   (``ArchiveStore/check()`` names it); the archive's next reports replace it in time.
    public func restoreReports(of archive: ArchiveName = .main, limit: Int? = nil) throws(ArchiveStoreError)
        -> [RestoreReport]
    {
        try read { connection in
            guard let row = try ArchiveRows.storedArchive(named: archive, in: connection)?.row else { return [] }
            let statement = try connection.statement(
                "SELECT report FROM restore_report WHERE archive_id = ? ORDER BY sequence DESC LIMIT ?")
            defer { statement.reset() }
            try statement.bind(row.id, at: 1)
            try statement.bind(Int64(clamping: max(0, limit ?? Int.max)), at: 2)
            var reports: [RestoreReport] = []
            while try statement.step() {
                guard let report = (try? statement.bytes(0)).flatMap(RestoreReport.init(storedBlob:)) else {
                    throw ArchiveStoreError.damagedHistory("a restore report of archive '\(archive)' cannot be read")
                }
                reports.append(report)
            }
            return reports
        }
    }

    /// Keeps a restore report, deleting the archive's reports beyond the newest
    /// ``retainedRestoreReports``. A report for an archive the store does not have is ignored;
    /// one for an archive whose row is damaged is kept (it says why its restoration failed).
    func recordRestoreReport(_ report: RestoreReport) throws(ArchiveStoreError) {
        let blob = try Self.storedBlob(of: report)
        try write { connection in
            guard let row = try ArchiveRows.storedArchive(named: report.archive, in: connection)?.row else { return }
            try keepReport(blob, of: report, archive: row, connection)
        }
    }

    /// Keeps a report in the caller's transaction. A damaged report row of the archive (the
    /// newest's sequence unreadable, say) made the insertion fail, and with it the end of every
    /// restoration: the marker stayed and the next launch took the restoration for a crash.
    /// The archive's kept reports are then replaced by this one; they are a record of past
    /// launches, and this is the newest. (No savepoint is needed: SQLite undoes a failed
    /// statement's own changes, and the deletion takes any row the insertion's earlier
    /// statements wrote.)
    func keepReport(
        _ blob: [UInt8], of report: RestoreReport, archive row: ArchiveRows.ArchiveRow, _ connection: Connection
    ) throws {
        do {
            try Self.insertReport(blob, of: report, archive: row, connection)
        } catch {
            let translated = Self.translated(error, path: path)
            guard translated.isDamage else { throw error }
            logger?.warning(
                "The restore reports of archive '\(row.name)' are damaged (\(translated.description)); they are replaced by this one")
            let delete = try connection.statement("DELETE FROM restore_report WHERE archive_id = ?")
            defer { delete.reset() }
            try delete.bind(row.id, at: 1)
            try delete.run()
            try Self.insertReport(blob, of: report, archive: row, connection)
        }
    }

    static func storedBlob(of report: RestoreReport) throws(ArchiveStoreError) -> [UInt8] {
        do {
            return try report.storedBlob()
        } catch .unencodable(_, let reason) {
            // The error's own words would call the report "the state".
            throw .reportNotRecorded(reason)
        } catch {
            throw .reportNotRecorded("it cannot be encoded: \(error)")
        }
    }

    /// Inserts a report's row and deletes the archive's reports beyond the newest retained.
    static func insertReport(_ blob: [UInt8], of report: RestoreReport, archive row: ArchiveRows.ArchiveRow, _ connection: Connection)
        throws
    {
        // Two plain statements: an `INSERT … SELECT max(sequence) … RETURNING` cost 126,000
        // instructions to prepare at each launch, these 98,000.
        let newest = try connection.statement("SELECT max(sequence) FROM restore_report WHERE archive_id = ?")
        try newest.bind(row.id, at: 1)
        // An aggregate always returns its row: NULL when the archive has no report yet.
        guard try newest.step() else { throw ArchiveStoreError.damagedStore("the newest restore report has no row") }
        let newestSequence = try newest.optionalInt64(0) ?? 0
        newest.reset()
        // The schema's `CHECK (sequence > 0)` lets the highest integer through, after which no
        // sequence comes; damage may leave any number.
        guard (0..<Int64.max).contains(newestSequence) else {
            throw ArchiveStoreError.damagedStore("the newest restore report's sequence is \(newestSequence)")
        }
        let sequence = newestSequence + 1
        let insert = try connection.statement(
            """
            INSERT INTO restore_report (archive_id, sequence, generation, reported_at, outcome, report) \
            VALUES (?, ?, ?, ?, ?, ?)
            """)
        try insert.bind(row.id, at: 1)
        try insert.bind(sequence, at: 2)
        if let generation = report.generation { try insert.bind(generation.rawValue, at: 3) } else { try insert.bindNull(at: 3) }
        try insert.bind(Clock.milliseconds(report.date), at: 4)
        try insert.bind(report.outcome.storedName, at: 5)
        try insert.bind(bytes: blob, at: 6)
        try insert.run()
        insert.reset()
        let prune = try connection.statement("DELETE FROM restore_report WHERE archive_id = ? AND sequence <= ?")
        defer { prune.reset() }
        try prune.bind(row.id, at: 1)
        try prune.bind(sequence - Int64(retainedRestoreReports), at: 2)
        try prune.run()
    }
}

extension RestoreReport.Outcome {
    /// The `outcome` column's value.
    var storedName: String {
        switch self {
        case .restored: "restored"
        case .nothingToRestore: "nothing"
        case .refused: "refused"
        case .failed: "failed"
        }
    }
}
