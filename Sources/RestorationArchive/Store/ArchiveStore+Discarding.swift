import Logging

extension ArchiveStore {
    /// How many discarded archives a store remembers: their rows (name, when and why they
    /// were discarded, their generation numbers) and their restore reports.
    ///
    /// An app that gives each scene or window session an archive of its own discards one
    /// whenever a window closes for good, under a name never used again; remembered for
    /// ever, each would leave its row and up to ``retainedRestoreReports`` reports in the
    /// store, which would grow with every window the user ever closed. A discard that leaves
    /// more discarded archives than this forgets those discarded longest ago, in its
    /// transaction: they are no longer listed, their restore reports are deleted, and a later
    /// save under the name starts a new archive at generation 1. A discard never forgets the
    /// archives it discards, even with the clock set back (unless ``discardAll(reason:)``
    /// discards more than this many at once). An archive that holds state is never
    /// forgotten, however old, nor is one whose row is damaged (``check()`` names it, and a
    /// discard or save under its name writes it again).
    public static let retainedDiscardedArchives = 32

    /// Discards an archive: all its generations and nodes are deleted and it is marked
    /// discarded with `reason`, as UIKit does when the user quits an app explicitly (R13) or
    /// a scene's window is closed for good (R14). The next save starts it afresh. The store
    /// remembers the newest ``retainedDiscardedArchives`` discarded archives and forgets
    /// older ones.
    ///
    /// Deleted content is overwritten in the file (`secure_delete`), and the write-ahead log is
    /// then checkpointed and truncated, so no copy of the discarded state remains in the
    /// `-wal` file either. The truncation waits up to the busy timeout for other connections'
    /// reads to end (see ``DiscardResult/writeAheadLogTruncated``). A discard that leaves
    /// most of the store free first compacts it, so that the file gives that space back
    /// (``DiscardResult/storeCompacted``).
    ///
    /// A discard writes every page the archive held to the write-ahead log before it commits
    /// (it deletes the archive's rows and overwrites what they held). On a disk without room
    /// for that it throws ``ResultCode/full`` in ``ArchiveStoreError/database(_:)`` (or an
    /// I/O error, when not even the log's index can grow) and the archive is as it was. An
    /// app that must not restore that state again (an explicit quit) can then erase the store
    /// (``erase(at:busyTimeout:logger:)``), which needs a few pages; on a disk without even
    /// those, the erase is refused too, and the next opening of the store after space returns
    /// finds the old store or an empty one.
    ///
    /// - Parameters:
    ///   - archive: the archive to discard.
    ///   - reason: why, in words for a person (shown by `restorectl info`); kept to its
    ///     first ``maximumReasonLength`` bytes.
    /// - Throws: ``ArchiveStoreError/archiveNotFound(_:)``, ``ArchiveStoreError/readOnly``,
    ///   ``ArchiveStoreError/storeFileMoved(path:)``.
    ///   Damage to the archive, its row included, does not stop it: it deletes what the
    ///   archive holds without reading it, and writes the row again with its checksum.
    @discardableResult
    public func discard(_ archive: ArchiveName = .main, reason: String) throws(ArchiveStoreError) -> DiscardResult {
        let deleted = try write { connection in
            // Damage to the archive's row does not stop a discard, which deletes all it holds.
            guard let found = try ArchiveRows.archiveToReplace(named: archive, in: connection) else {
                throw ArchiveStoreError.archiveNotFound(archive)
            }
            let deleted = try discard(found, reason: reason, connection)
            try forgetArchivesDiscardedLongAgo(keeping: [found.row.id], connection)
            return deleted
        }
        logger?.info("Discarded archive '\(archive)': \(deleted) nodes deleted")
        let (compacted, truncated) = try compactingAndTruncatingTheLog()
        return DiscardResult(nodesDeleted: deleted, writeAheadLogTruncated: truncated, storeCompacted: compacted)
    }

    /// Discards every archive that holds state, in one transaction: what an app does when
    /// the user quits it explicitly (R13), since the next launch should start afresh.
    ///
    /// As with ``discard(_:reason:)``, deleted content is overwritten, the write-ahead log
    /// truncated, and the store compacted when the discard leaves most of it free.
    ///
    /// - Parameter reason: why, in words for a person; kept to its first
    ///   ``maximumReasonLength`` bytes.
    /// - Returns: the archives discarded, with what was deleted from each.
    /// - Throws: ``ArchiveStoreError/readOnly``, ``ArchiveStoreError/storeFileMoved(path:)``,
    ///   or a database error.
    @discardableResult
    public func discardAll(reason: String) throws(ArchiveStoreError) -> [ArchiveName: DiscardResult] {
        let deleted = try write { connection in
            var deleted: [ArchiveName: Int] = [:]
            var discarded: Set<Int64> = []
            // A damaged row is discarded whatever it says: only its damage is certain.
            for found in try ArchiveRows.allArchivesToReplace(in: connection)
            where found.damage != nil || (found.row.discardedAt == nil && found.row.generation.rawValue > 0) {
                deleted[found.row.name] = try discard(found, reason: reason, connection)
                discarded.insert(found.row.id)
            }
            try forgetArchivesDiscardedLongAgo(keeping: discarded, connection)
            return deleted
        }
        logger?.info("Discarded \(deleted.count) archives: \(deleted.values.reduce(0, +)) nodes deleted")
        let (compacted, truncated) = try compactingAndTruncatingTheLog()
        return deleted.mapValues {
            DiscardResult(nodesDeleted: $0, writeAheadLogTruncated: truncated, storeCompacted: compacted)
        }
    }

    /// How many bytes of free pages a discard must leave, at least half of the store's pages,
    /// for the store to be compacted (``DiscardResult/storeCompacted``). Below that, writing
    /// the store again costs more than the space is worth, and the next saves reuse it.
    public static let compactedFreeBytes = 1 << 20

    /// What a discard does once its transaction is committed: compacts the store when the
    /// discard left most of it free (``DiscardResult/storeCompacted``), then checkpoints the
    /// log and truncates it, which shrinks the file. Returns whether each was done.
    ///
    /// Both are best effort: the discard they follow is committed, and must not be reported
    /// as failed. A compaction that fails (another connection writing past the busy timeout,
    /// a disk too full for the log to take the store's pages again, damage that stops SQLite
    /// reading a page) is logged and leaves the store as it was; so is a checkpoint that
    /// fails (``truncatingTheLog(after:path:_:logger:)``), which leaves the log as it was.
    private func compactingAndTruncatingTheLog() throws(ArchiveStoreError) -> (compacted: Bool, truncated: Bool) {
        try withConnection { connection in
            var compacted = false
            do {
                let before = try connection.pageCounts()
                if before.freeBytes >= Self.compactedFreeBytes, before.free * 2 >= before.pages {
                    compacted = try connection.compact()
                    if compacted {
                        let after = try connection.pageCounts()
                        logger?.info(
                            "Compacted the store at '\(path)' after the discard: \(before.bytes) bytes, \(before.freeBytes) of them free, to \(after.bytes)")
                    }
                }
            } catch {
                logger?.warning(
                    "The store at '\(path)' was not compacted after the discard: \(Self.translated(error, path: path))")
            }
            return (compacted, Self.truncatingTheLog(after: "the discard", path: path, connection, logger: logger))
        }
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
        let count = try deleteContents(of: row, connection)
        let kept = UTF8Text.prose(reason, upTo: Self.maximumReasonLength)
        var discarded = row
        discarded.discardedAt = Clock.nowMilliseconds()
        discarded.discardReason = kept
        try ArchiveRows.update(discarded, in: connection)
        try appendStoreEvent(.discarded(row.name, reason: kept), connection)
        return count
    }

    /// Forgets the discarded archives beyond the newest ``retainedDiscardedArchives``: deletes
    /// their rows and their restore reports, and, should damage have left any, their
    /// generations, nodes and crash markers, so that no row names an archive the store no
    /// longer has. The newest are those this transaction discarded (`justDiscarded`, ids),
    /// whatever the clock said, then the others by when they were discarded, then by row (for
    /// one millisecond). Only rows that match their checksums are forgotten: damage that made
    /// a live archive's row look discarded must not delete it.
    private func forgetArchivesDiscardedLongAgo(keeping justDiscarded: Set<Int64>, _ connection: Connection) throws {
        let forgotten = try ArchiveRows.allStoredArchives(in: connection)
            .compactMap { stored in
                stored.damage == nil ? stored.row.discardedAt.map { (at: $0, row: stored.row) } : nil
            }
            .sorted { first, second in
                let (firstIsNew, secondIsNew) = (justDiscarded.contains(first.row.id), justDiscarded.contains(second.row.id))
                return firstIsNew != secondIsNew ? firstIsNew : (first.at, first.row.id) > (second.at, second.row.id)
            }
            .dropFirst(Self.retainedDiscardedArchives)
        guard !forgotten.isEmpty else { return }
        for archive in forgotten {
            _ = try deleteContents(of: archive.row, connection)
            try Self.deleteRows(ofArchive: archive.row.id, "DELETE FROM restore_report WHERE archive_id = ?", connection)
            try Self.deleteRows(ofArchive: archive.row.id, "DELETE FROM archive WHERE id = ?", connection)
        }
        logger?.info(
            "Forgot \(forgotten.count) archive\(forgotten.count == 1 ? "" : "s") discarded before the newest \(Self.retainedDiscardedArchives): their rows and restore reports are deleted")
    }

    /// Deletes what an archive holds: its nodes, its generations and its crash marker (a
    /// restoration of discarded state that died no longer matters), wherever damage moved it.
    /// Returns the number of node rows deleted.
    private func deleteContents(of archive: ArchiveRows.ArchiveRow, _ connection: Connection) throws -> Int {
        try Self.deleteRows(ofArchive: archive.id, "DELETE FROM node WHERE archive_id = ?", connection)
        let nodesDeleted = connection.changes
        try Self.deleteRows(ofArchive: archive.id, "DELETE FROM generation WHERE archive_id = ?", connection)
        let markers = try Self.markers(of: archive, connection)
        try Self.moveBack(markers, connection)
        if let marker = markers.marker { try Self.removeMarker(storedUnder: marker.storedUnder ?? archive.id, connection) }
        return nodesDeleted
    }

    /// Runs a deletion whose one parameter is an archive's id.
    private static func deleteRows(ofArchive id: Int64, _ deletion: String, _ connection: Connection) throws {
        let statement = try connection.statement(deletion)
        defer { statement.reset() }
        try statement.bind(id, at: 1)
        try statement.run()
    }
}
