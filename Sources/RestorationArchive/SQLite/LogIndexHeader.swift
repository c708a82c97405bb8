#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a write-ahead log's index (the `-shm` file) says of the log, read from the file
/// without SQLite: the last frame of the log that holds a commit, and how many of its frames
/// were copied into the database file (SQLite's "WAL-index header" and its checkpoint
/// information, `walformat.html` §2.2, in the machine's byte order).
///
/// An opening looks at it when the log is missing: frames the index names but the file does
/// not hold yet were in a log removed while a process had the store open (or after one was
/// killed), and reading the file alone would give the store as it was before them. A
/// read-only open refuses to; a read-write open, after which SQLite rebuilds the index from
/// nothing, logs what was lost. A connection reads it where SQLite maps it, too
/// (`Connection.logLacksCommitsItsIndexNames`), to learn whether its log holds the frames the
/// index names.
struct LogIndexHeader: Equatable {
    /// The number of frames in the log up to its last commit (`mxFrame`).
    let lastCommittedFrame: UInt32
    /// How many of the log's first frames were copied into the database file (`nBackfill`).
    let framesCopied: UInt32
    /// The size in bytes of the database's pages (`szPage`), one to each frame of the log.
    let pageSize: Int
    /// The log's two salts (`aSalt`), as bytes 16 to 23 of the log's header hold them: a log
    /// started over, or made anew, has others.
    let logSalts: UInt64

    /// The frames holding commits that the database file does not hold yet.
    var framesNotCopied: UInt32 { lastCommittedFrame - min(framesCopied, lastCommittedFrame) }

    /// How many bytes a log holding the frames the index names has at least: its 32-byte
    /// header, then each frame's 24-byte header and page.
    var logSize: Int64 { 32 + Int64(lastCommittedFrame) * Int64(24 + pageSize) }

    init(lastCommittedFrame: UInt32, framesCopied: UInt32, pageSize: Int, logSalts: UInt64) {
        self.lastCommittedFrame = lastCommittedFrame
        self.framesCopied = framesCopied
        self.pageSize = pageSize
        self.logSalts = logSalts
    }

    /// The two copies of the header, then `nBackfill`: the bytes read.
    static let bytesRead = 2 * headerSize + 4
    private static let headerSize = 48
    /// `WALINDEX_MAX_VERSION`, the only version SQLite has written.
    private static let version: UInt32 = 3_007_000

    /// The header of the index at `path`; `nil` when there is no file there (or not a regular
    /// one, or it cannot be read), when it is too short, not initialised, of another version,
    /// its two copies differ (a writer was changing it: SQLite reads it again then), or its
    /// checksum does not match it (SQLite takes it for no header then, and rebuilds the index).
    /// Read through a descriptor this process has open on the file, if any
    /// (``StoreFileBytes``): closing one would release SQLite's locks on the index.
    init?(indexAt path: String) {
        guard let bytes = StoreFileBytes.read(at: path, count: Self.bytesRead) else { return nil }
        self.init(bytes: bytes)
    }

    /// The header in `bytes`, the index file's first ``bytesRead`` bytes.
    init?(bytes: [UInt8]) {
        guard let header = bytes.withUnsafeBytes({ LogIndexHeader(raw: $0) }) else { return nil }
        self = header
    }

    /// The header SQLite's index maps at `region`, the first of its 32 KiB regions, read as
    /// SQLite reads it: copied first (another connection may change it meanwhile), then the
    /// two copies must be the same (a writer changing it makes them differ for an instant).
    init?(mappedAt region: UnsafeRawPointer) {
        let header = withUnsafeTemporaryAllocation(byteCount: Self.bytesRead, alignment: 8) { copy in
            copy.copyMemory(from: UnsafeRawBufferPointer(start: region, count: Self.bytesRead))
            return LogIndexHeader(raw: UnsafeRawBufferPointer(copy))
        }
        guard let header else { return nil }
        self = header
    }

    /// The header in `raw`, at least ``bytesRead`` bytes.
    private init?(raw bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= Self.bytesRead,
            bytes[0..<Self.headerSize].elementsEqual(bytes[Self.headerSize..<2 * Self.headerSize])
        else { return nil }
        func word<Word: FixedWidthInteger>(at offset: Int, as: Word.Type = UInt32.self) -> Word {
            bytes.loadUnaligned(fromByteOffset: offset, as: Word.self)
        }
        // iVersion at 0, isInit at 12, mxFrame at 16; nBackfill first after the two copies.
        guard word(at: 0) == Self.version, bytes[12] == 1 else { return nil }
        // aCksum at 40: SQLite's log checksum of the 40 bytes before it, in the machine's
        // byte order (`walChecksumBytes`), two sums over the words taken in pairs.
        var (first, second): (UInt32, UInt32) = (0, 0)
        for offset in stride(from: 0, to: 40, by: 8) {
            first = first &+ word(at: offset) &+ second
            second = second &+ word(at: offset + 4) &+ first
        }
        guard word(at: 40) == first, word(at: 44) == second else { return nil }
        lastCommittedFrame = word(at: 16)
        framesCopied = word(at: 2 * Self.headerSize)
        // szPage at 14: a page of 65,536 bytes is written as 1.
        let size = Int(word(at: 14, as: UInt16.self))
        pageSize = (size & 0xFE00) + ((size & 1) << 16)
        logSalts = word(at: 32, as: UInt64.self)
    }
}
