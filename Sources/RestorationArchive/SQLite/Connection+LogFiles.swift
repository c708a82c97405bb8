internal import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Whether a connection's write-ahead log and its index are still the files their paths name.
extension Connection {
    /// Whether the write-ahead log's path names no file, or another one than the log this
    /// connection has open, or the log's index (`-shm`) is not the one it had when it first
    /// looked: the file was removed or renamed (a cleaning tool taking `-wal` or `-shm` for a
    /// temporary file), and perhaps made again by a connection opened since. SQLite goes on
    /// committing into the log it has open, whose commits the next launch never reads once
    /// this process is killed; with an index of its own, another process's connection writes
    /// over this one's commits in the log; and a copy of the log into the database file (a
    /// checkpoint) that a kill interrupts leaves the file torn when no log is left to finish
    /// it from, or copies another connection's pages for this one's. `false` when the
    /// connection has no log open (before its first read) or is not in write-ahead logging.
    ///
    /// The file at the log's path is the log only if its size is the open log's (a `stat` of
    /// the path, and an `fstat` of the open file); the index's is the one this connection
    /// first saw there if its device and inode are (a `stat`: SQLite keeps the index mapped,
    /// and no other process removes it while this one has it open). Asked with the write lock
    /// held (`BEGIN IMMEDIATE`), when no other connection can add to the log or cut it, the
    /// answer is exact; asked without, before a checkpoint this connection makes, a commit of
    /// another connection between two calls may make it `true` for a log that did not move,
    /// which only skips that checkpoint. SQLite's own check (`SQLITE_FCNTL_HAS_MOVED`)
    /// answers for the main database's file only (`false` for the log's, whose file keeps no
    /// lock information). A log made again and still as empty as this one is not seen; this
    /// connection's next commit makes them differ.
    var logFilesAreElsewhere: Bool { logFileElsewhere != nil }

    /// Which of the log's files is elsewhere (``logFilesAreElsewhere``): the log, or else its
    /// index; `nil` when neither is.
    var logFileElsewhere: StoreLocation.FileBeside.Kind? {
        var log: UnsafeMutablePointer<sqlite3_file>?
        guard logsAhead, sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &log) == SQLITE_OK,
            let log, let size = log.pointee.pMethods?.pointee.xFileSize,
            let path = sqlite3_filename_wal(sqlite3_db_filename(handle, "main"))
        else { return nil }
        var status = stat()
        guard stat(path, &status) == 0 else { return errno == ENOENT || errno == ENOTDIR ? .log : nil }
        var openSize: sqlite3_int64 = 0
        // SQLite's unix VFS reports a file of one byte as empty (its work-around for a file
        // system of OS X): a killed app's log torn to one byte is that size at the path too.
        let pathSize = status.st_size == 1 ? 0 : sqlite3_int64(status.st_size)
        if size(log, &openSize) == SQLITE_OK, openSize != pathSize { return .log }
        return logIndex.isElsewhere(logPath: path) ? .index : nil
    }
}

/// A connection's log index (`-shm`) as it first saw it, with its log open: the file's device
/// and inode, and the index's path (the log's, with `-shm` for `-wal`).
struct LogIndexWatch {
    private var path: [CChar]?
    private var file: (device: UInt64, inode: UInt64)?

    /// Whether the file at the index's path is not the one first seen there; `false` the first
    /// time, which records it.
    mutating func isElsewhere(logPath: UnsafePointer<CChar>) -> Bool {
        if path == nil { path = Self.indexPath(logPath: logPath) }
        guard let path else { return false }
        var status = stat()
        guard stat(path, &status) == 0 else { return file != nil && (errno == ENOENT || errno == ENOTDIR) }
        let seen = (device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        guard let file else {
            self.file = seen
            return false
        }
        return seen != file
    }

    /// The log's path, as a C string, with `-shm` for `-wal`; `nil` for a path that does not
    /// end in `-wal`.
    private static func indexPath(logPath: UnsafePointer<CChar>) -> [CChar]? {
        var path = Array(UnsafeBufferPointer(start: logPath, count: strlen(logPath) + 1))
        let suffix = path.count - 5
        guard suffix >= 0, path[suffix...].elementsEqual("-wal\0".utf8.map { CChar(bitPattern: $0) }) else { return nil }
        path.replaceSubrange(suffix + 1..<suffix + 4, with: "shm".utf8.map { CChar(bitPattern: $0) })
        return path
    }
}
