extension ArchiveStore {
    /// How many restore reports each archive keeps; older ones are deleted as new ones arrive.
    public static let retainedRestoreReports = 16

    /// The restore reports of an archive, newest first (at most ``retainedRestoreReports``).
    ///
    /// - Throws: ``ArchiveStoreError/damagedStore(_:)`` for a report that cannot be decoded.
    public func restoreReports(of archive: ArchiveName = .main) throws(ArchiveStoreError) -> [RestoreReport] {
        try read { connection in
            guard let row = try ArchiveRows.archive(named: archive, in: connection) else { return [] }
            let statement = try connection.statement(
                "SELECT report FROM restore_report WHERE archive_id = ? ORDER BY sequence DESC")
            defer { statement.reset() }
            try statement.bind(row.id, at: 1)
            var reports: [RestoreReport] = []
            while try statement.step() {
                guard let report = RestoreReport(storedBlob: try statement.bytes(0)) else {
                    throw ArchiveStoreError.damagedStore("a restore report of archive '\(archive)' cannot be read")
                }
                reports.append(report)
            }
            return reports
        }
    }

    /// Keeps a restore report, deleting the archive's reports beyond the newest
    /// ``retainedRestoreReports``. A report for an archive the store does not have is ignored.
    func recordRestoreReport(_ report: RestoreReport) throws(ArchiveStoreError) {
        let blob = try Self.storedBlob(of: report)
        try write { connection in
            guard let row = try ArchiveRows.archive(named: report.archive, in: connection) else { return }
            try Self.insertReport(blob, of: report, archive: row, connection)
        }
    }

    static func storedBlob(of report: RestoreReport) throws(ArchiveStoreError) -> [UInt8] {
        do {
            return try report.storedBlob()
        } catch {
            throw .reportNotRecorded("it cannot be encoded: \(error)")
        }
    }

    /// Inserts a report's row and deletes the archive's reports beyond the newest retained.
    static func insertReport(_ blob: [UInt8], of report: RestoreReport, archive row: ArchiveRows.ArchiveRow, _ connection: Connection)
        throws
    {
        let insert = try connection.statement(
            """
            INSERT INTO restore_report (archive_id, sequence, generation, reported_at, outcome, report) \
            SELECT ?1, coalesce(max(sequence), 0) + 1, ?2, ?3, ?4, ?5 FROM restore_report WHERE archive_id = ?1 \
            RETURNING sequence
            """)
        try insert.bind(row.id, at: 1)
        if let generation = report.generation { try insert.bind(generation.rawValue, at: 2) } else { try insert.bindNull(at: 2) }
        try insert.bind(Clock.milliseconds(report.date), at: 3)
        try insert.bind(report.outcome.storedName, at: 4)
        try insert.bind(bytes: blob, at: 5)
        guard try insert.step() else { throw ArchiveStoreError.damagedStore("an inserted report has no sequence") }
        let sequence = try insert.int64(0)
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
