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
    /// The bytes of a file the replay reads (the database's, the log's), read at an offset
    /// into a buffer: how many bytes were read, fewer than the buffer holds only at the end;
    /// `nil` when they cannot be read.
    struct Bytes {
        let count: Int
        let read: (_ offset: Int, _ buffer: UnsafeMutableRawBufferPointer) -> Int?

        init(count: Int, read: @escaping (_ offset: Int, _ buffer: UnsafeMutableRawBufferPointer) -> Int?) {
            (self.count, self.read) = (count, read)
        }

        /// `count` bytes from `offset`, or `nil` when fewer can be read.
        fileprivate func bytes(at offset: Int, count: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            return bytes.withUnsafeMutableBytes({ read(offset, $0) }) == count ? bytes : nil
        }
    }

    /// A replay: the database's length, and where each of its pages comes from. Made reading
    /// the log a frame at a time, so that a log of any length (a garbage one, a sparse one of
    /// terabytes) costs a read of its valid frames, not of its length; the database is then
    /// written straight into the memory that holds it.
    struct Replay {
        /// The database's length in bytes: the last commit's pages, or the file's length
        /// when the log holds no commit.
        let byteCount: Int
        fileprivate let pageSize: Int
        /// The offset in the log of the newest copy of each page (0 is page 1) the log holds
        /// up to its last commit, in the database.
        fileprivate let newest: [Int: Int]

        /// Writes the database into `buffer`, ``byteCount`` bytes long: `false` when the files
        /// cannot be read as they were when the replay was made (they changed since).
        func write(into buffer: UnsafeMutableRawBufferPointer, file: Bytes, log: Bytes) -> Bool {
            precondition(buffer.count == byteCount)
            // The file's pages the database keeps: all of them, or those the commit keeps.
            let fileBytes = min(file.count, byteCount)
            guard file.read(0, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<fileBytes])) == fileBytes else {
                return false
            }
            buffer[fileBytes...].initializeMemory(as: UInt8.self, repeating: 0)
            for (page, offset) in newest {
                let at = page * pageSize
                guard log.read(offset, UnsafeMutableRawBufferPointer(rebasing: buffer[at..<at + pageSize])) == pageSize
                else { return false }
            }
            for version in 18...19 where byteCount > version && buffer[version] == 2 { buffer[version] = 1 }
            return true
        }
    }

    /// The replay of `log` into `file`. `nil` when the log is one SQLite would not recover
    /// either (a version of the format it does not know, which SQLite fails to open), or one
    /// this replay cannot vouch for: its last commit needs more pages than the file and the
    /// log hold (with the 64 KiB SQLite's checkpoint allows), or its pages are not the size
    /// the database's header says; when the database would be larger than
    /// ``largestDatabase``; or when the files cannot be read.
    static func replay(file: Bytes, log: Bytes) -> Replay? {
        // A log that holds no commit leaves the file alone, as SQLite reads it.
        let fileAlone = file.count <= largestDatabase ? Replay(byteCount: file.count, pageSize: 0, newest: [:]) : nil
        guard let headerBytes = log.bytes(at: 0, count: headerSize), let header = Header(headerBytes) else {
            return fileAlone
        }
        guard header.version == supportedVersion else { return nil }
        let frameSize = frameHeaderSize + header.pageSize
        var sums = header.sums
        // The newest frame of each page up to the last commit, and those after it.
        var (committed, pending) = ([Int: Int](), [Int: Int]())
        // How many frames the last commit ends, and the size in pages it gives the database.
        var lastCommit: (frames: Int, pages: Int)?
        var frame = [UInt8](repeating: 0, count: frameSize)
        var offset = headerSize
        while offset + frameSize <= log.count {
            // Frames of more pages than the largest database replayed holds: refused, which
            // bounds the pages tracked.
            guard (committed.count + pending.count) * header.pageSize <= largestDatabase else { return nil }
            // Read short: the log was cut as it was read (the opening sees it changed).
            guard frame.withUnsafeMutableBytes({ log.read(offset, $0) }) == frameSize else { break }
            let page = word(frame, at: 0, bigEndian: true)
            let pagesAfterCommit = word(frame, at: 4, bigEndian: true)
            guard page != 0, frame[8..<16].elementsEqual(headerBytes[16..<24]) else { break }
            sums = checksum(frame, from: 0, count: 8, bigEndian: header.bigEndianSums, startingAt: sums)
            sums = checksum(
                frame, from: frameHeaderSize, count: header.pageSize, bigEndian: header.bigEndianSums,
                startingAt: sums)
            guard sums.0 == word(frame, at: 16, bigEndian: true), sums.1 == word(frame, at: 20, bigEndian: true)
            else { break }
            pending[Int(page) - 1] = offset + frameHeaderSize
            offset += frameSize
            if pagesAfterCommit != 0 {
                committed.merge(pending) { _, newer in newer }
                pending.removeAll(keepingCapacity: true)
                lastCommit = ((offset - headerSize) / frameSize, Int(pagesAfterCommit))
            }
        }
        guard let lastCommit else { return fileAlone }
        // SQLite's checkpoint refuses, as corrupt, a commit that makes the database larger
        // than the file, the commit's frames and 64 KiB (the page of the 1 GiB lock byte,
        // which SQLite never writes) together: a commit that needs more is not SQLite's, and
        // would make a database as large as it says. Weighed against the file by what the
        // file must hold, not by the sum: a file may say it is as long as an `Int` counts (a
        // sparse one), and the sum then overflows.
        let byteCount = lastCommit.pages * header.pageSize
        guard byteCount <= largestDatabase,
            byteCount - pendingBytePage - lastCommit.frames * header.pageSize <= file.count
        else { return nil }
        let replay = Replay(
            byteCount: byteCount, pageSize: header.pageSize, newest: committed.filter { $0.key < lastCommit.pages })
        // The page size the database's header gives (bytes 16 and 17 of page 1, big-endian;
        // 1 is 65,536).
        let firstPage = replay.newest[0].map { (log, $0) } ?? (file, 0)
        guard let bytes = firstPage.0.bytes(at: firstPage.1 + 16, count: 2) else { return nil }
        let stored = Int(bytes[0]) << 8 | Int(bytes[1])
        guard (stored == 1 ? 65_536 : stored) == header.pageSize else { return nil }
        return replay
    }

    /// The largest database replayed, which is held in memory
    /// (``Connection/largestInMemory``).
    static let largestDatabase = Connection.largestInMemory
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
