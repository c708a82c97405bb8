/// The checksum the store writes into each node row: the same fields as the first node
/// checksum (``ArchiveRows/firstNodeChecksum(start:path:className:classVersion:order:born:state:)``),
/// mixed so that most of a node's bytes, its state's, go through four independent chains.
///
/// The first checksum mixes every byte of a row into one chain of xxHash64 rounds, each
/// waiting for the one before (a multiply's latency per 8 bytes), and moves each word into
/// place after the first field of odd length: about 1,400 instructions a node, a fifth of
/// reading a node row. This one takes about 600. Rows written by earlier versions keep their
/// checksums, which readers still accept (a row is intact when its checksum is either one),
/// so no store needs rewriting.
///
/// Definition (words are little-endian 64-bit; `round` is xxHash64's round, `fmix` MurmurHash3's
/// `fmix64`, the primes xxHash64's, as in ``Checksum``):
/// 1. `h = 0x4E4F_4432 * prime1 + prime4` ("NOD2").
/// 2. The archive's name, the path's text and the class name, each as a field: `h = round(h,
///    length)`, then `h = round(h, word)` for each 8 bytes, the last word zero-padded.
/// 3. `h = round(h, v)` for the class version, the order and the generation that wrote the
///    row (as 64-bit two's complement), then for the state's length.
/// 4. The state's words, the last one zero-padded, word `k` into lane `k mod 4`; lanes start
///    at `h + prime1 + prime2`, `h + prime2`, `h`, `h - prime1`; each word `w` makes its lane
///    `round(lane, w)`. Then `h = round(h, lane)` for the four lanes in order.
/// 5. The checksum is `fmix(h)`, stored as a signed 64-bit integer.
///
/// The parent's path is covered by the path, of which it is a prefix. Lengths come before the
/// bytes they count, so that padding and field boundaries cannot be confused.
enum NodeChecksum {
    /// What every node checksum of an archive starts from: steps 1 and 2 for its name.
    static func start(archive: ArchiveName) -> UInt64 {
        UTF8Text.withBytes(of: archive.rawValue) { field(Checksum.seed(domain: 0x4E4F_4432), $0) }
    }

    /// A node's checksum from the bytes of its fields, as bound or as stored.
    static func checksum(
        start: UInt64, path: UnsafeRawBufferPointer, className: UnsafeRawBufferPointer, classVersion: Int64,
        order: Int64, born: Int64, state: UnsafeRawBufferPointer
    ) -> Int64 {
        var hash = field(start, path)
        hash = field(hash, className)
        hash = Checksum.round(hash, UInt64(bitPattern: classVersion))
        hash = Checksum.round(hash, UInt64(bitPattern: order))
        hash = Checksum.round(hash, UInt64(bitPattern: born))
        hash = Checksum.round(hash, UInt64(state.count))
        return Int64(bitPattern: Checksum.fmix(lanes(hash, state)))
    }

    /// A field: its length, then its words, the last one zero-padded.
    @inline(__always)
    private static func field(_ start: UInt64, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var hash = Checksum.round(start, UInt64(count))
        var offset = 0
        while count &- offset >= 8 {
            hash = Checksum.round(hash, Checksum.word(bytes, at: offset))
            offset &+= 8
        }
        if offset < count { hash = Checksum.round(hash, Checksum.partialWord(bytes, at: offset, count: count &- offset)) }
        return hash
    }

    /// Step 4: the bytes' words through four lanes seeded from `hash`, then the lanes into it.
    @inline(__always)
    private static func lanes(_ hash: UInt64, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var lanes = (
            hash &+ Checksum.prime1 &+ Checksum.prime2, hash &+ Checksum.prime2, hash, hash &- Checksum.prime1
        )
        let count = bytes.count
        var offset = 0
        while count &- offset >= 32 {
            lanes.0 = Checksum.round(lanes.0, Checksum.word(bytes, at: offset))
            lanes.1 = Checksum.round(lanes.1, Checksum.word(bytes, at: offset &+ 8))
            lanes.2 = Checksum.round(lanes.2, Checksum.word(bytes, at: offset &+ 16))
            lanes.3 = Checksum.round(lanes.3, Checksum.word(bytes, at: offset &+ 24))
            offset &+= 32
        }
        // Up to 31 bytes are left: whole words, then a partial one, lanes 0 to 3 in turn.
        var lane = 0
        while offset < count {
            let left = count &- offset
            let word = left >= 8 ? Checksum.word(bytes, at: offset) : Checksum.partialWord(bytes, at: offset, count: left)
            switch lane {
            case 0: lanes.0 = Checksum.round(lanes.0, word)
            case 1: lanes.1 = Checksum.round(lanes.1, word)
            case 2: lanes.2 = Checksum.round(lanes.2, word)
            default: lanes.3 = Checksum.round(lanes.3, word)
            }
            lane &+= 1
            offset &+= 8
        }
        var mixed = Checksum.round(hash, lanes.0)
        mixed = Checksum.round(mixed, lanes.1)
        mixed = Checksum.round(mixed, lanes.2)
        return Checksum.round(mixed, lanes.3)
    }
}
