internal import CSQLite

// Giving the file's free pages back to the file system. SQLite keeps the pages that deleted
// rows leave on a free list, for later writes to reuse, and never shrinks the file by itself
// (the library leaves `auto_vacuum` off: with it each page written would also write a page of
// its pointer map).
extension Connection {
    /// The database's size in pages and how many of those are free, with its page size, as
    /// the newest committed state has them (the write-ahead log's pages included).
    struct PageCounts: Equatable {
        var pages: Int64
        var free: Int64
        var pageSize: Int64

        /// The database's size in bytes: the file's once the log is copied back into it.
        var bytes: Int64 { pages * pageSize }
        /// The free pages' bytes.
        var freeBytes: Int64 { free * pageSize }
    }

    /// ``PageCounts`` of the database.
    func pageCounts() throws -> PageCounts {
        PageCounts(
            pages: try pragmaInteger("PRAGMA page_count") ?? 0,
            free: try pragmaInteger("PRAGMA freelist_count") ?? 0,
            pageSize: try pragmaInteger("PRAGMA page_size") ?? 0)
    }

    /// Writes the database again without its free pages (`VACUUM`), in one transaction: a
    /// kill leaves it as it was. Its rows and the file's header values (`user_version`,
    /// `application_id`) stay as they are, and so do the rows' keys: `VACUUM` numbers again
    /// only the rows of a table without a declared key, and every table of the store's has
    /// one. In write-ahead logging the new pages go to the log, and the file shrinks when a
    /// checkpoint copies the whole log back (``checkpointTruncating()``): a reader that holds
    /// the log back delays it, and the file keeps its length until then.
    ///
    /// Returns `false`, writing nothing, when the database's path no longer names this
    /// connection's file (``hasMoved``) or the log's paths its log files, or the log lacks
    /// commits its index names (``logMustNotBeCopied``), as the checkpoints do: what it wrote
    /// would go to files no path names, or after frames the next launch does not read.
    /// `VACUUM` takes the write lock itself, so those are looked at just before, without it;
    /// a file moved in between loses nothing but the compaction, and another connection's
    /// commit in between may skip it.
    @discardableResult
    func compact() throws(DatabaseError) -> Bool {
        guard !hasMoved, !logMustNotBeCopied else { return false }
        try execute("VACUUM")
        return true
    }
}
