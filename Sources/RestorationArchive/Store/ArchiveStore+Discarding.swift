import Logging

extension ArchiveStore {
    /// Discards an archive: all its generations and nodes are deleted and it is marked
    /// discarded with `reason`, as UIKit does when the user quits an app explicitly (R13) or
    /// a scene's window is closed for good (R14). The next save starts it afresh.
    ///
    /// Deleted content is overwritten in the file (`secure_delete`), and the write-ahead log is
    /// then checkpointed and truncated, so no copy of the discarded state remains in the
    /// `-wal` file either. The truncation waits up to the busy timeout for other connections'
    /// reads to end (see ``DiscardResult/writeAheadLogTruncated``).
    ///
    /// - Parameters:
    ///   - archive: the archive to discard.
    ///   - reason: why, in words for a person (shown by `restorectl info`).
    /// - Throws: ``ArchiveStoreError/archiveNotFound(_:)``, ``ArchiveStoreError/readOnly``.
    ///   Damage to the archive, its row included, does not stop it: it deletes what the
    ///   archive holds without reading it, and writes the row again with its checksum.
    @discardableResult
    public func discard(_ archive: ArchiveName = .main, reason: String) throws(ArchiveStoreError) -> DiscardResult {
        let deleted = try write { connection in
            // Damage to the archive's row does not stop a discard, which deletes all it holds.
            guard let found = try ArchiveRows.archiveToReplace(named: archive, in: connection) else {
                throw ArchiveStoreError.archiveNotFound(archive)
            }
            return try discard(found, reason: reason, connection)
        }
        let truncated = try withConnection { connection in
            try Self.checkpointAndTruncate(connection)
        }
        logger?.info("Discarded archive '\(archive)': \(deleted) nodes deleted")
        return DiscardResult(nodesDeleted: deleted, writeAheadLogTruncated: truncated)
    }

    /// Discards every archive that holds state, in one transaction: what an app does when
    /// the user quits it explicitly (R13), since the next launch should start afresh.
    ///
    /// As with ``discard(_:reason:)``, deleted content is overwritten and the write-ahead
    /// log truncated.
    ///
    /// - Parameter reason: why, in words for a person.
    /// - Returns: the archives discarded, with what was deleted from each.
    /// - Throws: ``ArchiveStoreError/readOnly``, or a database error.
    @discardableResult
    public func discardAll(reason: String) throws(ArchiveStoreError) -> [ArchiveName: DiscardResult] {
        let deleted = try write { connection in
            var deleted: [ArchiveName: Int] = [:]
            // A damaged row is discarded whatever it says: only its damage is certain.
            for found in try ArchiveRows.allArchivesToReplace(in: connection)
            where found.damage != nil || (found.row.discardedAt == nil && found.row.generation.rawValue > 0) {
                deleted[found.row.name] = try discard(found, reason: reason, connection)
            }
            return deleted
        }
        let truncated = try withConnection { connection in
            try Self.checkpointAndTruncate(connection)
        }
        logger?.info("Discarded \(deleted.count) archives: \(deleted.values.reduce(0, +)) nodes deleted")
        return deleted.mapValues { DiscardResult(nodesDeleted: $0, writeAheadLogTruncated: truncated) }
    }

    /// Deletes an archive's generations and nodes, marks it discarded and says so in the
    /// journal. Returns the number of node rows deleted. A damaged row (see
    /// ``ArchiveRows/archiveToReplace(named:in:)``) is written again, whole, with its checksum.
    private func discard(
        _ found: ArchiveRows.StoredArchive, reason: String, _ connection: Connection
    ) throws -> Int {
        let row = found.row
        if let damage = found.damage {
            logger?.warning("Archive '\(row.name)' was damaged (\(damage)); the discard replaces its row")
        }
        let nodes = try connection.statement("DELETE FROM node WHERE archive_id = ?")
        defer { nodes.reset() }
        try nodes.bind(row.id, at: 1)
        try nodes.run()
        let count = connection.changes
        let generations = try connection.statement("DELETE FROM generation WHERE archive_id = ?")
        defer { generations.reset() }
        try generations.bind(row.id, at: 1)
        try generations.run()
        var discarded = row
        discarded.discardedAt = Clock.nowMilliseconds()
        discarded.discardReason = reason
        try ArchiveRows.update(discarded, in: connection)
        // A restoration of discarded state that died no longer matters.
        let marker = try connection.statement("DELETE FROM crash_marker WHERE archive_id = ?")
        defer { marker.reset() }
        try marker.bind(row.id, at: 1)
        try marker.run()
        try appendStoreEvent(.discarded(row.name, reason: reason), connection)
        return count
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
