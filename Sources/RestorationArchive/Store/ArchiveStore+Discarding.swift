import Logging

extension ArchiveStore {
    /// Discards an archive: all its generations and nodes are deleted and it is marked
    /// discarded with `reason`, as UIKit does when the user quits an app explicitly (R13) or
    /// a scene's window is closed for good (R14). The next save starts it afresh.
    ///
    /// Deleted content is overwritten in the file (`secure_delete`), and the write-ahead log is
    /// then checkpointed and truncated, so no copy of the discarded state remains in the
    /// `-wal` file either (see ``DiscardResult/writeAheadLogTruncated``).
    ///
    /// - Parameters:
    ///   - archive: the archive to discard.
    ///   - reason: why, in words for a person (shown by `restorectl info`).
    /// - Throws: ``ArchiveStoreError/archiveNotFound(_:)``, ``ArchiveStoreError/readOnly``.
    @discardableResult
    public func discard(_ archive: ArchiveName = .main, reason: String) throws(ArchiveStoreError) -> DiscardResult {
        let deleted = try write { connection in
            guard let row = try ArchiveRows.archive(named: archive, in: connection) else {
                throw ArchiveStoreError.archiveNotFound(archive)
            }
            let nodes = try connection.statement("DELETE FROM node WHERE archive_id = ?")
            try nodes.bind(row.id, at: 1)
            try nodes.run()
            let count = connection.changes
            let generations = try connection.statement("DELETE FROM generation WHERE archive_id = ?")
            try generations.bind(row.id, at: 1)
            try generations.run()
            let mark = try connection.statement(
                "UPDATE archive SET discarded_at = ?, discard_reason = ? WHERE id = ?")
            try mark.bind(Clock.nowMilliseconds(), at: 1)
            try mark.bind(reason, at: 2)
            try mark.bind(row.id, at: 3)
            try mark.run()
            return count
        }
        let truncated = try withConnection { connection in
            try Self.checkpointAndTruncate(connection)
        }
        logger?.info("Discarded archive '\(archive)': \(deleted) nodes deleted")
        return DiscardResult(nodesDeleted: deleted, writeAheadLogTruncated: truncated)
    }

    /// `PRAGMA wal_checkpoint(TRUNCATE)`: copies the log into the file and empties it.
    /// Returns `false` when a reader kept it from completing.
    static func checkpointAndTruncate(_ connection: Connection) throws -> Bool {
        let statement = try connection.statement("PRAGMA wal_checkpoint(TRUNCATE)")
        defer { statement.reset() }
        guard try statement.step() else { return false }
        // Columns: busy (0 when it completed), frames in the log, frames checkpointed.
        return try statement.int64(0) == 0
    }
}
