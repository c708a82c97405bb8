import CSQLite
import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

/// `LogReplay` replays a write-ahead log into its database file as SQLite's recovery does:
/// each case's database is compared, byte for byte, with the file SQLite's own recovery and
/// checkpoint of the same two files leave.
@Suite("Write-ahead log replay")
struct LogReplayTests {
    /// Databases of every page size, written in random transactions (rows added, changed
    /// and deleted, overflow pages, a `VACUUM` that shrinks the file, checkpoints that copy
    /// the log into the file and make the next commit start it over), their log then kept
    /// whole, cut at a random length, or with a random byte changed: the replay is the
    /// database SQLite recovers from the same files, and reads as sound.
    @Test(arguments: 0..<48)
    func aReplayIsTheDatabaseSQLiteRecovers(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0x5EED_0000 + seed)
        try withTemporaryDirectory { directory in
            let (file, log) = try Self.writtenWithALog(in: directory, using: &random)
            var damaged = log
            switch seed % 3 {
            case 1: damaged.removeSubrange(Int.random(in: 0...damaged.count, using: &random)...)
            case 2: damaged[Int.random(in: damaged.indices, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            default: break
            }
            let replayed = try #require(LogReplay.database(file: file, log: damaged))
            let recovered = try Self.recoveredBySQLite(file: file, log: damaged, in: directory)
            // Where they differ, not the arrays: a failure would print megabytes.
            let differing = replayed.indices.first { $0 < recovered.count && replayed[$0] != recovered[$0] }
            #expect(replayed.count == recovered.count, "seed \(seed): \(replayed.count) bytes, SQLite's \(recovered.count)")
            #expect(differing == nil, "seed \(seed): the first byte that differs")
            let copy = try Self.inMemory(replayed)
            #expect(try copy.pragmaText("PRAGMA integrity_check") == "ok", "seed \(seed)")
        }
    }

    /// A log whose header SQLite takes for none (not a log's magic number, a page size that
    /// is not a power of two, a checksum that does not match), one that holds no commit, and
    /// one whose first frame SQLite takes for its end (other salts than the header's, though
    /// its checksum matches; page 0), leave the file as it is, in rollback mode. The magic
    /// number and the page size are changed with the checksums made again, so that each is
    /// refused for itself; a log whose page size is not a power of two holds a commit of
    /// frames of that size.
    @Test func aLogWithoutACommitLeavesTheFileAsItIs() throws {
        var random = SeededGenerator(seed: 7)
        try withTemporaryDirectory { directory in
            let (file, log) = try Self.writtenWithALog(in: directory, using: &random)
            var alone = file
            (alone[18], alone[19]) = (1, 1)
            #expect(file[18] == 2 && file[19] == 2)
            #expect(LogReplay.database(file: file, log: log).map { $0 != alone } == true, "the log holds a commit")
            let badMagic = Self.resummed(log, changing: 3, to: log[3] ^ 0x10)
            var badPageSize = Array(log.prefix(32))
            badPageSize.putBigEndianWord(768, at: 8)
            var frame = Array(log[32..<32 + 24]) + [UInt8](repeating: 0, count: 768)
            frame.putBigEndianWord(1, at: 0)
            frame.putBigEndianWord(1, at: 4)
            badPageSize = Self.withChecksumsMadeAgain(badPageSize + frame)
            var badSum = log
            badSum[31] ^= 0x01
            for (name, variant) in [
                ("magic", badMagic), ("page size", badPageSize), ("checksum", badSum), ("empty", []),
                ("header only", Array(log.prefix(32))), ("no commit", Self.withoutCommits(log)),
                ("first frame's salt", Self.resummed(log, changing: 32 + 8, to: log[16] ^ 1)),
                ("first frame's page 0", Self.resummed(log, changing: 32 + 3, to: 0)),
            ] {
                let replayed = LogReplay.database(file: file, log: variant)
                #expect(replayed.map { $0 == alone } == true, "\(name)")
            }
        }
    }

    /// A log in the other byte order (its magic number's low bit says which: SQLite on a
    /// big-endian machine adds the words of its checksums big-endian), as in a store copied
    /// from such a machine: SQLite reads either, and the replay is the database it recovers,
    /// the same as from the log as it was written here.
    @Test(arguments: 0..<4)
    func aLogOfTheOtherByteOrderIsReplayedAsSQLiteRecoversIt(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0xBE_0000 + seed)
        try withTemporaryDirectory { directory in
            let (file, log) = try Self.writtenWithALog(in: directory, using: &random)
            let otherOrder = Self.resummed(log, changing: 3, to: log[3] ^ 1)
            let replayed = try #require(LogReplay.database(file: file, log: otherOrder))
            let recovered = try Self.recoveredBySQLite(file: file, log: otherOrder, in: directory)
            let asWritten = try #require(LogReplay.database(file: file, log: log))
            // Where they differ, not the arrays: a failure would print megabytes.
            #expect(replayed.count == recovered.count, "seed \(seed): \(replayed.count) bytes, SQLite's \(recovered.count)")
            #expect(Self.firstDifference(replayed, recovered) == nil, "seed \(seed)")
            #expect(Self.firstDifference(replayed, asWritten) == nil, "seed \(seed): as replayed from the log as written")
        }
    }

    /// A log SQLite would refuse (a version of the format it does not know) and one whose
    /// commit needs more pages than the file and the log hold, or holds pages of another size
    /// than the database's header says, are not replayed: only SQLite's own recovery judges
    /// them.
    @Test func aLogOnlySQLiteMayJudgeIsNotReplayed() throws {
        var random = SeededGenerator(seed: 11)
        try withTemporaryDirectory { directory in
            let (file, log) = try Self.writtenWithALog(in: directory, using: &random)
            let pageSize = Int(log.bigEndianWord(at: 8))
            #expect(LogReplay.database(file: file, log: log)?.count != nil)
            #expect(LogReplay.database(file: file, log: Self.resummed(log, changing: 7, to: 0x59))?.count == nil, "version")
            // The file's header says another page size; the log's first frame is of page 2.
            var smaller = file
            let half = pageSize / 2
            (smaller[16], smaller[17]) = (UInt8(half >> 8), UInt8(half & 0xFF))
            let logWithoutPageOne = Self.withoutFramesOf(page: 1, log)
            #expect(LogReplay.database(file: smaller, log: logWithoutPageOne)?.count == nil, "page size")
            #expect(LogReplay.database(file: file, log: logWithoutPageOne)?.count != nil)
            // A last commit that says the database has 2^31 pages.
            let last = try #require(Self.frames(of: log).last { log.bigEndianWord(at: $0 + 4) != 0 })
            #expect(LogReplay.database(file: file, log: Self.resummed(log, changing: last + 4, to: 0x80))?.count == nil, "pages")
        }
    }

    /// Files that changed between the replay and its write (an app's checkpoint starting the
    /// log over, or writing the file, after the opening read them): the write says so, and the
    /// opening looks again, rather than fill the database with pages the replay did not
    /// check. A log cut as it is read (shorter than its size said) reads as the log it holds.
    @Test func filesThatChangeUnderAReplayAreNotWrittenAsIfTheyHadNot() throws {
        var random = SeededGenerator(seed: 23)
        try withTemporaryDirectory { directory in
            let (file, log) = try Self.writtenWithALog(in: directory, using: &random)
            let replay = try #require(LogReplay.replay(file: .init(file), log: .init(log)))
            var database = [UInt8](repeating: 0, count: replay.byteCount)
            let (cutFile, cutLog) = (Array(file.prefix(10)), Array(log.prefix(32)))
            database.withUnsafeMutableBytes { buffer in
                #expect(replay.write(into: buffer, file: .init(file), log: .init(log)))
                #expect(!replay.write(into: buffer, file: .init(file), log: .init(cutLog, count: log.count)), "log cut")
                #expect(!replay.write(into: buffer, file: .init(cutFile, count: file.count), log: .init(log)), "file cut")
            }

            let frameSize = 24 + Int(log.bigEndianWord(at: 8))
            let shorter = Array(log.prefix(32 + frameSize * (Self.frames(of: log).count / 2)))
            let readShort = try #require(LogReplay.replay(file: .init(file), log: .init(shorter, count: log.count)))
            var replayed = [UInt8](repeating: 0, count: readShort.byteCount)
            #expect(replayed.withUnsafeMutableBytes { readShort.write(into: $0, file: .init(file), log: .init(shorter)) })
            let cut = try #require(LogReplay.database(file: file, log: shorter))
            #expect(Self.firstDifference(replayed, cut) == nil)
        }
    }

    /// A last commit that makes the database larger than the file and the log's frames hold,
    /// by as much as SQLite's checkpoint allows (64 KiB, for the page of the lock byte at
    /// 1 GiB, which no log holds): replayed as SQLite recovers it, the pages no frame holds
    /// zeros. One page more, and SQLite's checkpoint calls the database corrupt: not replayed.
    @Test(arguments: 0..<4)
    func aCommitAsLargeAsSQLiteAllowsIsReplayedAsSQLiteRecoversIt(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0xB0_0000 + seed)
        try withTemporaryDirectory { directory in
            let (file, log) = try Self.writtenWithALog(in: directory, using: &random)
            let pageSize = Int(log.bigEndianWord(at: 8))
            let frames = Self.frames(of: log)
            let last = try #require(frames.lastIndex { log.bigEndianWord(at: $0 + 4) != 0 })
            let allowed = (file.count + 65_536 + (last + 1) * pageSize) / pageSize
            let (atTheBound, past) = (
                Self.committing(pages: allowed, at: frames[last], log), Self.committing(pages: allowed + 1, at: frames[last], log)
            )
            // Counts and indices, not the arrays: a failure would print megabytes.
            let replayed = LogReplay.database(file: file, log: atTheBound) ?? []
            let recovered = try Self.recoveredBySQLite(file: file, log: atTheBound, in: directory)
            #expect(replayed.count == allowed * pageSize && recovered.count == replayed.count, "seed \(seed)")
            let differing = replayed.indices.first { $0 < recovered.count && replayed[$0] != recovered[$0] }
            #expect(differing == nil, "seed \(seed): the first byte that differs")

            #expect(LogReplay.database(file: file, log: past)?.count == nil, "seed \(seed)")
            // (`#expect(throws:)` here crashes the compiler's SendNonSendable pass, Swift 6.3.1.)
            var refusal: ResultCode?
            do {
                _ = try Self.recoveredBySQLite(file: file, log: past, in: directory)
            } catch let error as DatabaseError {
                refusal = error.resultCode
            }
            #expect(refusal == .corrupt, "seed \(seed): SQLite's checkpoint")
        }
    }

    /// Logs SQLite wrote, then changed frame by frame with their checksums made again, as
    /// no cut or flipped byte changes them: frames removed, copied further on, swapped or
    /// cut off, their page numbers, commit sizes, salts or pages changed. Where SQLite's
    /// recovery reads the files, the replay is its database byte for byte; where SQLite
    /// finds them corrupt, the replay refuses them or gives a database SQLite finds corrupt
    /// in the same read.
    @Test(arguments: 0..<32)
    func framesChangedAsNoCutMakesThemAreReplayedAsSQLiteRecoversThem(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0xABCD_0000 + seed)
        try withTemporaryDirectory { directory in
            let (file, log) = try Self.writtenWithALog(in: directory, using: &random)
            let frameSize = 24 + Int(log.bigEndianWord(at: 8))
            var frames = Self.frames(of: log).map { Array(log[$0..<$0 + frameSize]) }
            let pages = UInt32(file.count / (frameSize - 24) + frames.count + 2)
            var changes: [String] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) where !frames.isEmpty {
                let at = Int.random(in: frames.indices, using: &random)
                switch Int.random(in: 0..<8, using: &random) {
                case 0:
                    frames.remove(at: at)
                    changes.append("frame \(at) removed")
                case 1:
                    let to = Int.random(in: at...frames.count, using: &random)
                    frames.insert(frames[at], at: to)
                    changes.append("frame \(at) copied to \(to)")
                case 2:
                    let other = Int.random(in: frames.indices, using: &random)
                    frames.swapAt(at, other)
                    changes.append("frames \(at) and \(other) swapped")
                case 3:
                    frames.removeSubrange(at...)
                    changes.append("cut at frame \(at)")
                case 4:
                    let value = UInt32.random(in: 1...pages, using: &random)
                    frames[at].putBigEndianWord(value, at: 0)
                    changes.append("frame \(at) of page \(value)")
                case 5:
                    let value = UInt32.random(in: 0...pages, using: &random)
                    frames[at].putBigEndianWord(value, at: 4)
                    changes.append("frame \(at) commits \(value) pages")
                case 6:
                    frames[at][8 + Int.random(in: 0..<8, using: &random)] ^= 1
                    changes.append("frame \(at)'s salt")
                default:
                    frames[at][24 + Int.random(in: 0..<frameSize - 24, using: &random)] ^= 0x55
                    changes.append("frame \(at)'s page changed")
                }
            }
            let changed = Self.withChecksumsMadeAgain(Array(log.prefix(32)) + frames.flatMap { $0 })
            let replayed = LogReplay.database(file: file, log: changed)
            let recovered: [UInt8]
            do {
                recovered = try Self.recoveredBySQLite(file: file, log: changed, in: directory)
            } catch let error as DatabaseError where error.resultCode == .corrupt || error.resultCode == .notADatabase {
                guard let replayed else { return }
                #expect(throws: DatabaseError.self, "seed \(seed), \(changes): SQLite's recovery: \(error)") {
                    _ = try Self.inMemory(replayed).pragmaInteger("SELECT count(*) FROM sqlite_schema")
                }
                return
            }
            // Counts and indices, not the arrays: a failure would print megabytes.
            #expect(replayed?.count == recovered.count, "seed \(seed), \(changes)")
            let differing = replayed.flatMap { replayed in
                replayed.indices.first { $0 < recovered.count && replayed[$0] != recovered[$0] }
            }
            #expect(differing == nil, "seed \(seed), \(changes): the first byte that differs")
        }
    }

    /// Logs no SQLite wrote, whose checksums hold: random page numbers and commit sizes
    /// (0, small, past the file's end, up to 2^32 - 1), random page sizes and files. The replay
    /// never traps, and a database it gives is never larger than the file and the log
    /// together, with the 64 KiB SQLite's checkpoint allows.
    @Test(arguments: 0..<200)
    func arbitraryFramesWhoseChecksumsHoldAreReplayedSafely(seed: UInt64) {
        var random = SeededGenerator(seed: 0xF4A3_0000 + seed)
        let pageSize = 1 << Int.random(in: 9...16, using: &random)
        let file = (0..<Int.random(in: 0...3, using: &random) * pageSize).map { _ in UInt8.random(in: 0...255, using: &random) }
        var log = [UInt8](repeating: 0, count: 32)
        let magic: UInt32 = Bool.random(using: &random) ? 0x377F_0682 : 0x377F_0683
        for (offset, value) in [(0, magic), (4, 3_007_000), (8, UInt32(pageSize)), (16, 0x1234_5678), (20, 0x9ABC_DEF0)] {
            log.putBigEndianWord(value, at: offset)
        }
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            var frame = [UInt8](repeating: 0, count: 24 + pageSize)
            let page: UInt32 = [0, 1, 2, 3, 7, .max].randomElement(using: &random)!
            let commit: UInt32 = [0, 0, 1, 2, 3, 8, 1 << 20, .max].randomElement(using: &random)!
            frame.putBigEndianWord(page, at: 0)
            frame.putBigEndianWord(commit, at: 4)
            frame.replaceSubrange(8..<16, with: log[16..<24])
            for index in 24..<frame.count where Int.random(in: 0..<64, using: &random) == 0 {
                frame[index] = UInt8.random(in: 0...255, using: &random)
            }
            if Bool.random(using: &random) {
                // Page 1 saying the log's page size, as a database's first page does.
                let stored = pageSize == 65_536 ? 1 : pageSize
                (frame[24 + 16], frame[24 + 17]) = (UInt8(stored >> 8), UInt8(stored & 0xFF))
            }
            log += frame
        }
        log = Self.withChecksumsMadeAgain(log)
        if Bool.random(using: &random) { log.removeLast(Int.random(in: 0...log.count - 32, using: &random)) }
        guard let database = LogReplay.database(file: file, log: log) else { return }
        #expect(database.count <= file.count + log.count + 65_536, "seed \(seed)")
    }

    // MARK: Helpers

    /// A database in write-ahead logging at a random page size, written in random
    /// transactions with the log kept (no checkpoint of SQLite's own), the last one a write,
    /// and its file and log as a process killed then would leave them.
    private static func writtenWithALog(in directory: String, using random: inout SeededGenerator) throws -> (
        file: [UInt8], log: [UInt8]
    ) {
        let path = directory + "/written.sqlite"
        let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        try connection.execute("PRAGMA page_size = \([512, 1024, 4096, 65_536].randomElement(using: &random)!)")
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        let steps = Int.random(in: 3...12, using: &random)
        for step in 0..<steps {
            // The last is a write, which the file does not hold.
            switch step == steps - 1 ? 9 : Int.random(in: 0..<10, using: &random) {
            case 0:
                try connection.execute("DELETE FROM t WHERE k % 3 != 0")
                try connection.execute("VACUUM")
            case 1:
                try connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
            default:
                try connection.execute("BEGIN")
                for _ in 0..<Int.random(in: 1...40, using: &random) {
                    let size = Int.random(in: 0...9_000, using: &random)
                    try connection.execute(
                        "INSERT OR REPLACE INTO t (k, v) VALUES (\(Int.random(in: 0..<200, using: &random)), "
                            + "randomblob(\(size)))")
                }
                try connection.execute("DELETE FROM t WHERE k = \(Int.random(in: 0..<200, using: &random))")
                try connection.execute("COMMIT")
            }
        }
        return (try #require(fileBytes(path)), try #require(fileBytes(path + "-wal")))
    }

    /// The database file SQLite's recovery of `file` and `log` (with no index) gives, copied
    /// whole into the file by a checkpoint, its header in rollback mode as the replay's is.
    private static func recoveredBySQLite(file: [UInt8], log: [UInt8], in directory: String) throws -> [UInt8] {
        let path = directory + "/recovered.sqlite"
        for name in [path, path + "-wal", path + "-shm"] { try? FileManager.default.removeItem(atPath: name) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(file)))
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data(log)))
        do {
            let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
            _ = try connection.pragmaInteger("SELECT count(*) FROM sqlite_schema")
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        var recovered = try #require(fileBytes(path))
        for version in 18...19 where recovered[version] == 2 { recovered[version] = 1 }
        return recovered
    }

    /// The first offset at which two databases' bytes differ (the shorter's length when one
    /// is the other's start), `nil` when they are the same: what a failure prints, rather than
    /// megabytes of both.
    private static func firstDifference(_ left: [UInt8], _ right: [UInt8]) -> Int? {
        left.indices.first { $0 >= right.count || left[$0] != right[$0] } ?? (left.count < right.count ? left.count : nil)
    }

    /// `log` with the byte at `offset` of its header or first frame header set to `value`,
    /// and every checksum after it made again, so that the change is all SQLite would see.
    static func resummed(_ log: [UInt8], changing offset: Int, to value: UInt8) -> [UInt8] {
        var log = log
        log[offset] = value
        return withChecksumsMadeAgain(log)
    }

    /// A database in memory that holds `image`.
    private static func inMemory(_ image: [UInt8]) throws -> Connection {
        let connection = try Connection.inMemory(byteCount: image.count) { bytes in
            image.withUnsafeBytes { bytes.copyMemory(from: $0) }
            return true
        }
        return try #require(connection)
    }

    /// `log` with the frame at `offset` ending a commit that gives the database `pages`
    /// pages, its checksums made again.
    private static func committing(pages: Int, at offset: Int, _ log: [UInt8]) -> [UInt8] {
        var log = log
        log.putBigEndianWord(UInt32(truncatingIfNeeded: pages), at: offset + 4)
        return withChecksumsMadeAgain(log)
    }

    /// `log` without the frames that hold `page`, its checksums made again.
    private static func withoutFramesOf(page: UInt32, _ log: [UInt8]) -> [UInt8] {
        let frameSize = 24 + Int(log.bigEndianWord(at: 8))
        var kept = Array(log.prefix(32))
        for frame in frames(of: log) where log.bigEndianWord(at: frame) != page { kept += log[frame..<frame + frameSize] }
        return withChecksumsMadeAgain(kept)
    }

    /// `log` with no frame saying it ends a commit, its checksums made again.
    private static func withoutCommits(_ log: [UInt8]) -> [UInt8] {
        var log = log
        for frame in frames(of: log) { log.replaceSubrange(frame + 4..<frame + 8, with: [0, 0, 0, 0]) }
        return withChecksumsMadeAgain(log)
    }

    /// The offsets of `log`'s whole frames.
    private static func frames(of log: [UInt8]) -> [Int] {
        let frameSize = 24 + Int(log.bigEndianWord(at: 8))
        return Array(stride(from: 32, to: log.count - frameSize + 1, by: frameSize))
    }

    /// `log` with its header's checksum and every frame's made again, in its byte order.
    private static func withChecksumsMadeAgain(_ log: [UInt8]) -> [UInt8] {
        var log = log
        let bigEndian = log.bigEndianWord(at: 0) & 1 == 1
        let pageSize = Int(log.bigEndianWord(at: 8))
        var sums: (UInt32, UInt32) = (0, 0)
        func word(_ offset: Int) -> UInt32 { bigEndian ? log.bigEndianWord(at: offset) : littleWord(log, offset) }
        func add(_ range: Range<Int>) {
            for at in stride(from: range.lowerBound, to: range.upperBound, by: 8) {
                let (x, y) = (word(at), word(at + 4))
                sums.0 = sums.0 &+ x &+ sums.1
                sums.1 = sums.1 &+ y &+ sums.0
            }
        }
        add(0..<24)
        log.putBigEndianWord(sums.0, at: 24)
        log.putBigEndianWord(sums.1, at: 28)
        for frame in frames(of: log) {
            add(frame..<frame + 8)
            add(frame + 24..<frame + 24 + pageSize)
            log.putBigEndianWord(sums.0, at: frame + 16)
            log.putBigEndianWord(sums.1, at: frame + 20)
        }
        return log
    }

    private static func littleWord(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}

extension LogReplay {
    /// The database `file` (the bytes of the database file) and `log` (its `-wal`'s) make, in
    /// rollback mode, as a read-only open replays them into memory; `nil` when
    /// ``replay(file:log:)`` is.
    static func database(file: [UInt8], log: [UInt8]) -> [UInt8]? {
        let (file, log) = (Bytes(file), Bytes(log))
        guard let replay = replay(file: file, log: log) else { return nil }
        var database = [UInt8](repeating: 0, count: replay.byteCount)
        let written = database.withUnsafeMutableBytes { replay.write(into: $0, file: file, log: log) }
        return written ? database : nil
    }
}

extension LogReplay.Bytes {
    /// The bytes of `array`, said to be `count` long (by default, its length): a file cut
    /// after it was opened holds fewer bytes than its size said.
    init(_ array: [UInt8], count: Int? = nil) {
        self.init(count: count ?? array.count) { offset, buffer in
            guard offset < array.count else { return 0 }
            let read = min(buffer.count, array.count - offset)
            array.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + read])) }
            return read
        }
    }
}
