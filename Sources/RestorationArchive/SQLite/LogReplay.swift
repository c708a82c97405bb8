/// The database a write-ahead log and the file it logs ahead of make together, replayed
/// without SQLite and without an index (`-shm`), as SQLite's recovery reads a log whose index
/// is gone (`walIndexRecover`; the format is `fileformat2.html` §4): a read-only open cannot
/// rebuild the index, and writes no file, so a killed app's store copied without its `-shm`
/// (as some backups leave it) is read through this replay, in memory.
///
/// The log's frames count up to its last commit whose frames all hold the log's salts and
/// their running checksum; each frame holds a page, and the database is the file's pages
/// with the log's newest copy of each in its place, cut or grown to the size the commit
/// gives. A log whose header is not one (another magic number, a bad page size, a checksum
/// that does not match) holds no commit, and the file is read alone, as SQLite reads it.
enum LogReplay {
    /// The database `file` (the bytes of the database file) and `log` (its `-wal`'s) make, in
    /// rollback mode (bytes 18 and 19 of its header say 1 rather than 2: a database in memory
    /// has no log). `nil` when the log is one SQLite would not recover either (a version of
    /// the format it does not know, which SQLite fails to open), or one this replay cannot
    /// vouch for: its last commit needs more pages than the file and the log hold (with the
    /// 64 KiB SQLite's checkpoint allows), or its pages are not the size the database's header
    /// says.
    static func database(file: [UInt8], log: [UInt8]) -> [UInt8]? {
        guard let header = Header(log) else { return inRollbackMode(file) }
        guard header.version == supportedVersion else { return nil }
        let frameSize = frameHeaderSize + header.pageSize
        var sums = header.sums
        // The end of the last commit's frames, how many frames it ends, and the size in pages
        // it gives the database.
        var committed: (end: Int, frames: Int, pages: Int)?
        var offset = headerSize
        while offset + frameSize <= log.count {
            let page = word(log, at: offset, bigEndian: true)
            let pagesAfterCommit = word(log, at: offset + 4, bigEndian: true)
            guard page != 0, log[offset + 8..<offset + 16].elementsEqual(log[16..<24]) else { break }
            sums = checksum(log, from: offset, count: 8, bigEndian: header.bigEndianSums, startingAt: sums)
            sums = checksum(
                log, from: offset + frameHeaderSize, count: header.pageSize, bigEndian: header.bigEndianSums,
                startingAt: sums)
            guard sums.0 == word(log, at: offset + 16, bigEndian: true),
                sums.1 == word(log, at: offset + 20, bigEndian: true)
            else { break }
            offset += frameSize
            if pagesAfterCommit != 0 {
                committed = (offset, (offset - headerSize) / frameSize, Int(pagesAfterCommit))
            }
        }
        guard let committed else { return inRollbackMode(file) }
        // SQLite's checkpoint refuses, as corrupt, a commit that makes the database larger
        // than the file, the commit's frames and 64 KiB (the page of the 1 GiB lock byte,
        // which SQLite never writes) together: a commit that needs more is not SQLite's, and
        // would make a database as large as it says.
        guard committed.pages * header.pageSize <= file.count + pendingBytePage + committed.frames * header.pageSize
        else { return nil }
        var database = [UInt8](repeating: 0, count: committed.pages * header.pageSize)
        let kept = min(file.count, database.count)
        database.replaceSubrange(0..<kept, with: file[0..<kept])
        // In the log's order, so that each page ends as its newest frame holds it.
        for frame in stride(from: headerSize, to: committed.end, by: frameSize) {
            let page = Int(word(log, at: frame, bigEndian: true))
            guard page <= committed.pages else { continue }
            let (at, from) = ((page - 1) * header.pageSize, frame + frameHeaderSize)
            database.replaceSubrange(at..<at + header.pageSize, with: log[from..<from + header.pageSize])
        }
        // The page size the database's header gives (bytes 16 and 17, big-endian; 1 is 65,536).
        let stored = Int(database[16]) << 8 | Int(database[17])
        guard (stored == 1 ? 65_536 : stored) == header.pageSize else { return nil }
        return inRollbackMode(database)
    }

    /// `database` with its header's read and write versions (bytes 18 and 19) saying
    /// rollback mode where they say write-ahead logging (2).
    private static func inRollbackMode(_ database: [UInt8]) -> [UInt8] {
        var database = database
        for version in 18...19 where database.count > version && database[version] == 2 { database[version] = 1 }
        return database
    }

    /// The only version of the log's format SQLite writes (`WAL_MAX_VERSION`).
    static let supportedVersion: UInt32 = 3_007_000
    /// The most a database's size may pass the file and the log's frames (`walCheckpoint`'s
    /// bound): the largest page size, for the page holding the lock byte at 1 GiB, which the
    /// log never holds.
    private static let pendingBytePage = 65_536
    private static let headerSize = 32
    private static let frameHeaderSize = 24

    /// The log's header (its first 32 bytes, big-endian words): `nil` when SQLite would take
    /// the log for one holding no frame.
    private struct Header {
        let version: UInt32
        let pageSize: Int
        /// Whether the checksums read the log's words big-endian (the magic number's low bit).
        let bigEndianSums: Bool
        /// The header's checksum, the start of the first frame's.
        let sums: (UInt32, UInt32)

        init?(_ log: [UInt8]) {
            guard log.count >= LogReplay.headerSize else { return nil }
            let magic = LogReplay.word(log, at: 0, bigEndian: true)
            guard magic & ~1 == 0x377F_0682 else { return nil }
            let pageSize = Int(LogReplay.word(log, at: 8, bigEndian: true))
            guard (512...65_536).contains(pageSize), pageSize & (pageSize - 1) == 0 else { return nil }
            bigEndianSums = magic & 1 == 1
            sums = LogReplay.checksum(log, from: 0, count: 24, bigEndian: bigEndianSums, startingAt: (0, 0))
            guard sums.0 == LogReplay.word(log, at: 24, bigEndian: true),
                sums.1 == LogReplay.word(log, at: 28, bigEndian: true)
            else { return nil }
            version = LogReplay.word(log, at: 4, bigEndian: true)
            self.pageSize = pageSize
        }
    }

    /// The 32-bit word at `offset` of `bytes`.
    private static func word(_ bytes: [UInt8], at offset: Int, bigEndian: Bool) -> UInt32 {
        let word = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        return bigEndian ? UInt32(bigEndian: word) : UInt32(littleEndian: word)
    }

    /// SQLite's log checksum (`walChecksumBytes`) of the `count` bytes (a multiple of 8) at
    /// `offset`, continuing `sums`: two sums over the words, taken in pairs.
    private static func checksum(
        _ bytes: [UInt8], from offset: Int, count: Int, bigEndian: Bool, startingAt sums: (UInt32, UInt32)
    ) -> (UInt32, UInt32) {
        var (first, second) = sums
        bytes.withUnsafeBytes { raw in
            func word(at offset: Int) -> UInt32 {
                let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                return bigEndian ? UInt32(bigEndian: word) : UInt32(littleEndian: word)
            }
            for at in stride(from: offset, to: offset + count, by: 8) {
                first = first &+ word(at: at) &+ second
                second = second &+ word(at: at + 4) &+ first
            }
        }
        return (first, second)
    }
}
