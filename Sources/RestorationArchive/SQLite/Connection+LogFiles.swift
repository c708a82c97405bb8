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
    /// The file at the log's path is the log only if it is the file first seen there (its
    /// device and inode, a `stat` of the path: ``lookAtTheLogFiles()`` looks as the store is
    /// opened, just after SQLite opened the log) and its size is the open log's (an `fstat`
    /// of the open file); the index's is the one this connection first saw there if its
    /// device and inode are (SQLite keeps the index mapped, and no other process removes it
    /// while this one has it open, nor the log). Asked with the write lock held (`BEGIN
    /// IMMEDIATE`), when no other connection can add to the log or cut it, the answer is
    /// exact; asked without, before a checkpoint this connection makes, a commit of another
    /// connection between two calls may make it `true` for a log that did not move, which
    /// only skips that checkpoint. SQLite's own check (`SQLITE_FCNTL_HAS_MOVED`) answers for
    /// the main database's file only (`false` for the log's, whose file keeps no lock
    /// information).
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
        // Both files are recorded at the first look, whatever the sizes say then (another
        // connection's commit in between, without the write lock).
        let logReplaced = logFiles.logIsElsewhere(status)
        let indexReplaced = logFiles.indexIsElsewhere(logPath: path)
        var openSize: sqlite3_int64 = 0
        // SQLite's unix VFS reports a file of one byte as empty (its work-around for a file
        // system of OS X): a killed app's log torn to one byte is that size at the path too.
        let pathSize = status.st_size == 1 ? 0 : sqlite3_int64(status.st_size)
        if logReplaced || (size(log, &openSize) == SQLITE_OK && openSize != pathSize) { return .log }
        return indexReplaced ? .index : nil
    }

    /// Records the log and its index at their paths as the files this connection has open,
    /// for ``logFilesAreElsewhere``: an opening asks just after SQLite opened them (its first
    /// read), before a cleaning tool or another connection could have made them again. A
    /// connection that never asks records them at its first write, and a log removed and
    /// made again before then, as empty as the one it has open, goes unseen.
    func lookAtTheLogFiles() {
        _ = logFileElsewhere
    }

    /// Whether the log's index names commits the log does not hold: its index (shared
    /// memory, which every connection to the database shares) names frames past the log's
    /// end, or in a log whose header has other salts, which SQLite reads as a log started
    /// over. The log was removed while another connection had the store open (in this
    /// process or another), and this connection made it again, or it was cut in place (the
    /// same file, emptied or shortened) while a connection had the store open; the index
    /// stays what the connections have mapped until every connection to the store has
    /// closed. A read of a page the index names fails short (`SQLITE_IOERR_SHORT_READ`); a
    /// commit appends its frames after those the index names, in a log without a header,
    /// and the next launch, which rebuilds the index from the log, reads none of them: it
    /// commits, without an error, what is lost once the process is killed.
    ///
    /// The index's header is read where SQLite maps it (`xShmMap`), then the log's size and
    /// header through SQLite's own handle (its header only when the index's salts are not
    /// the ones this connection last found there: ``logSaltsRead``, a read less for each
    /// write), then the index's header again: the answer is kept only when the index did
    /// not change meanwhile (another connection's commit or checkpoint), and is `false`
    /// after three tries that it did. With the write lock held no other connection changes
    /// either. `false` when the connection has no log or index open (one that reads the file
    /// alone, `immutable`, has none), or the index names no frame.
    var logLacksCommitsItsIndexNames: Bool {
        var database: UnsafeMutablePointer<sqlite3_file>?
        var log: UnsafeMutablePointer<sqlite3_file>?
        guard logsAhead || fileSaysItLogsAhead,
            sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &database) == SQLITE_OK, let database,
            let methods = database.pointee.pMethods?.pointee, methods.iVersion >= 2, let map = methods.xShmMap,
            sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &log) == SQLITE_OK, let log,
            let size = log.pointee.pMethods?.pointee.xFileSize, let read = log.pointee.pMethods?.pointee.xRead
        else { return false }
        // The index's first region, as SQLite maps it (32 KiB, `walformat.html` §2); not
        // made when the connection has none (`bExtend` 0).
        var region: UnsafeMutableRawPointer?
        guard map(database, 0, 32_768, 0, &region) == SQLITE_OK, let region else { return false }
        for _ in 0..<3 {
            guard let index = LogIndexHeader(mappedAt: region) else { continue }
            guard index.lastCommittedFrame > 0 else { return false }
            var logSize: sqlite3_int64 = 0
            guard size(log, &logSize) == SQLITE_OK else { return false }
            var salts = logSaltsRead
            // The log's header changes only as the log starts over, which gives the index
            // new salts too: read again only then.
            if logSize >= index.logSize, salts != index.logSalts {
                var header = [UInt8](repeating: 0, count: 24)
                // A log shorter than its header reads short, the rest as zeros.
                let code = header.withUnsafeMutableBytes { read(log, $0.baseAddress, Int32($0.count), 0) }
                guard code == SQLITE_OK || code == ResultCode.ioErrorShortRead.rawValue else { return false }
                salts = header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self) }
            }
            let lacks = logSize < index.logSize || salts != index.logSalts
            if LogIndexHeader(mappedAt: region) == index {
                if !lacks { logSaltsRead = salts }
                return lacks
            }
        }
        return false
    }

    /// Whether the database file's header says it is in write-ahead logging (its read and
    /// write versions, bytes 18 and 19, are 2), read through SQLite's handle: for a
    /// connection that did not turn it on itself (``logsAhead``), a read-only one or an
    /// opening's first read.
    private var fileSaysItLogsAhead: Bool {
        guard let header = fileBytes(count: 20) else { return false }
        return header[18] == 2 && header[19] == 2
    }

    /// Whether the log must not be copied into the database file (a checkpoint, the last
    /// connection's close, a `VACUUM`): its files are not the ones at their paths
    /// (``logFilesAreElsewhere``), or it lacks commits its index names
    /// (``logLacksCommitsItsIndexNames``). A checkpoint reads frames where the index says
    /// they are, without their checksums: from a log with holes there (another process's
    /// writes after them), it copied zeros over the pages, and the store read as malformed.
    var logMustNotBeCopied: Bool { logFilesAreElsewhere || logLacksCommitsItsIndexNames }

    /// Throws when the log lacks commits its index names (``logLacksCommitsItsIndexNames``):
    /// ``ResultCode/ioErrorShortRead``, what a read of them fails with.
    func checkTheLogHoldsWhatItsIndexNames() throws(DatabaseError) {
        guard logLacksCommitsItsIndexNames else { return }
        throw DatabaseError(
            extendedCode: ResultCode.ioErrorShortRead.rawValue,
            message: "the write-ahead log (-wal) lacks commits its index (-shm) names: it was removed or cut while "
                + "the store was open")
    }
}

/// A connection's write-ahead log and its index (`-shm`) as it first saw them at their paths,
/// with the log open: each file's device and inode, and the index's path (the log's, with
/// `-shm` for `-wal`).
struct LogFilesWatch {
    private var indexPath: [CChar]?
    private var log: StoreFileIdentity?
    private var index: StoreFileIdentity?

    /// Whether the file at the log's path, whose `stat` is `status`, is not the one first
    /// seen there; `false` the first time, which records it.
    mutating func logIsElsewhere(_ status: stat) -> Bool {
        let seen = StoreFileIdentity(status)
        guard let log else {
            self.log = seen
            return false
        }
        return seen != log
    }

    /// Whether the file at the index's path is not the one first seen there; `false` the first
    /// time, which records it.
    mutating func indexIsElsewhere(logPath: UnsafePointer<CChar>) -> Bool {
        if indexPath == nil { indexPath = Self.indexPath(logPath: logPath) }
        guard let indexPath else { return false }
        var status = stat()
        guard stat(indexPath, &status) == 0 else { return index != nil && (errno == ENOENT || errno == ENOTDIR) }
        let seen = StoreFileIdentity(status)
        guard let index else {
            self.index = seen
            return false
        }
        return seen != index
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
