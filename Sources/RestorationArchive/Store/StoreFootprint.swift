/// How much disk a store takes: its file, the free pages in it, and its write-ahead log.
public struct StoreFootprint: Hashable, Sendable {
    /// The length of the store's file, in bytes.
    public var fileBytes: Int
    /// The store's size as it reads, in bytes: its pages, the write-ahead log's newest
    /// included. A checkpoint copies the log back into the file, which then has this length;
    /// until then the file may be shorter (an app killed with its saves in the log) or longer
    /// (a compaction waiting for the checkpoint that truncates the file).
    public var storeBytes: Int
    /// The bytes of the store's free pages, which deleted rows left and later saves reuse:
    /// part of ``storeBytes``, counted as the store reads them. SQLite never shrinks a file by
    /// itself: a discard that leaves most of the store free compacts it
    /// (``DiscardResult/storeCompacted``).
    public var freeBytes: Int
    /// The length of the write-ahead log (`-wal`), in bytes; 0 when there is none. While the
    /// store is open SQLite keeps the log's length to reuse it, and cuts it back to 4 MiB when
    /// it starts over (`journal_size_limit`); a discard truncates it, and the last
    /// connection's close removes it.
    public var logBytes: Int
}

extension ArchiveStore {
    /// How much disk the store takes: for an app that reports the storage it uses, or a tool
    /// that inspects the store (`restorectl info`).
    ///
    /// A store of an older schema opened read-only is read through a copy migrated in memory,
    /// and so is one whose write-ahead log lost its index, replayed in the copy (see
    /// ``AccessMode/readOnly``): its size as it reads and its free bytes are the copy's.
    ///
    /// - Throws: ``ArchiveStoreError`` when the store cannot be read (its free pages are
    ///   counted by SQLite, through the store's connection).
    public func footprint() throws(ArchiveStoreError) -> StoreFootprint {
        let path = self.path
        let pages = try read { connection in try connection.pageCounts() }
        func length(_ path: String) -> Int { Int(StoreLocation.FileStamp(path: path)?.size ?? 0) }
        return StoreFootprint(
            fileBytes: length(path), storeBytes: Int(pages.bytes), freeBytes: Int(pages.freeBytes),
            logBytes: length(path + "-wal"))
    }
}
