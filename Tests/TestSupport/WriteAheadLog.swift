/// The frames (pages) of the write-ahead log at `path` (`store.sqlite-wal`) that a connection
/// opening the store reads back: after the log's 32-byte header, each frame of 24 bytes and a
/// page whose salt is the header's, up to the first that is not (a log started over keeps its
/// size, and the frames of its earlier rounds carry another salt). These are what SQLite reads,
/// and checks, to rebuild the log's index at the first opening after the app was killed. 0 when
/// there is no log, or only its header.
public func framesInWriteAheadLog(_ path: String) -> Int {
    readBackPartOfWriteAheadLog(path).frames
}

/// The frames of ``framesInWriteAheadLog(_:)``, and the bytes they end at: the log's header
/// and those frames, what SQLite reads back (0 when there is no log). A log that started over
/// keeps the frames of its earlier rounds after them, which SQLite never reads.
public func readBackPartOfWriteAheadLog(_ path: String) -> (frames: Int, bytes: Int) {
    guard let bytes = fileBytes(path), bytes.count >= 32 else { return (0, 0) }
    func word(_ offset: Int) -> UInt32 { bytes.bigEndianWord(at: offset) }
    let pageSize = Int(word(8))
    guard pageSize > 0 else { return (0, 32) }
    let salts = (word(16), word(20))
    var frames = 0
    var offset = 32
    while offset + 24 + pageSize <= bytes.count, (word(offset + 8), word(offset + 12)) == salts {
        frames += 1
        offset += 24 + pageSize
    }
    return (frames, offset)
}
