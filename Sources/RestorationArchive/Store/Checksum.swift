/// A streaming 64-bit checksum for detecting damage to stored rows.
///
/// It catches accidental change (bit flips, zeroed or moved bytes, rows swapped between
/// archives or paths); it is not a defence against an attacker who can write the file.
/// Eight bytes are mixed per step (the round function of xxHash64) and the result is
/// finalised with MurmurHash3's `fmix64`, so every input bit affects every output bit.
///
/// Fields are combined with a length prefix, so `("ab", "c")` and `("a", "bc")` differ.
struct Checksum {
    static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63

    private var state: UInt64
    private var pending: UInt64 = 0
    private var pendingCount = 0
    private var length: UInt64 = 0

    /// - Parameter domain: distinguishes checksums of different kinds of row.
    init(domain: UInt64) {
        state = Self.seed(domain: domain)
    }

    mutating func combine(_ value: Int64) {
        combine(word: UInt64(bitPattern: value))
    }

    mutating func combine(_ value: Int) {
        combine(Int64(value))
    }

    mutating func combine(_ value: String) {
        UTF8Text.withBytes(of: value) { combine(lengthPrefixed: $0) }
    }

    // An optional field is its presence (0 or 1) and then its value, so that `nil` and a
    // value never combine alike.

    mutating func combine(_ value: Int64?) {
        combine(word: value == nil ? 0 : 1)
        if let value { combine(value) }
    }

    mutating func combine(_ value: String?) {
        combine(word: value == nil ? 0 : 1)
        if let value { combine(value) }
    }

    mutating func combine(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { combine(lengthPrefixed: $0) }
    }

    /// Bytes as they are stored, combined as the `String` or `[UInt8]` of the same bytes is.
    mutating func combine(stored bytes: UnsafeRawBufferPointer) {
        combine(lengthPrefixed: bytes)
    }

    /// The same as the `String?` of the same bytes.
    mutating func combine(storedOptional bytes: UnsafeRawBufferPointer?) {
        combine(word: bytes == nil ? 0 : 1)
        if let bytes { combine(lengthPrefixed: bytes) }
    }

    /// The checksum, as SQLite stores it (a signed 64-bit integer).
    func finalize() -> Int64 {
        var hash = state
        if pendingCount > 0 { hash = Self.round(hash, pending) }
        hash ^= length
        return Int64(bitPattern: Self.fmix(hash))
    }

    /// MurmurHash3's `fmix64`: every input bit affects every output bit.
    @inline(__always)
    static func fmix(_ value: UInt64) -> UInt64 {
        var hash = value
        hash ^= hash >> 33
        hash &*= 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        hash &*= 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 33
        return hash
    }

    /// The state a checksum of `domain` starts from.
    static func seed(domain: UInt64) -> UInt64 { domain &* prime1 &+ prime4 }

    private mutating func combine(lengthPrefixed bytes: UnsafeRawBufferPointer) {
        combine(word: UInt64(bytes.count))
        combine(raw: bytes)
    }

    // The stream is mixed a word at a time; `pending` holds the `pendingCount` (0 to 7) bytes
    // of the word begun, in its low bytes, the rest zero. While a word is begun, each word read
    // completes it with its low bytes and begins the next with the rest: fields are rarely a
    // multiple of 8 bytes long, and moving every later byte one at a time into place cost
    // about 2,500 instructions per node row.

    private mutating func combine(word: UInt64) {
        length &+= 8
        guard pendingCount > 0 else {
            state = Self.round(state, word)
            return
        }
        pending = Self.mix(word, after: pending, shift: UInt64(pendingCount &* 8), into: &state)
    }

    private mutating func combine(raw bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        length &+= UInt64(count)
        // In locals: stores through `self` in the loop could alias the bytes read.
        var state = state
        var pending = pending
        var offset = 0
        if pendingCount == 0 {
            while count &- offset >= 8 {
                state = Self.round(state, Self.word(bytes, at: offset))
                offset &+= 8
            }
        } else {
            let shift = UInt64(pendingCount &* 8)  // 8 to 56
            while count &- offset >= 8 {
                pending = Self.mix(Self.word(bytes, at: offset), after: pending, shift: shift, into: &state)
                offset &+= 8
            }
        }
        let tailCount = count &- offset
        if tailCount > 0 {
            let tail = Self.partialWord(bytes, at: offset, count: tailCount)
            pending |= tail &<< UInt64(pendingCount &* 8)
            let filled = pendingCount &+ tailCount
            if filled >= 8 {
                state = Self.round(state, pending)
                // The tail's bytes after the ones that completed the word (pendingCount was 1 to 7).
                pending = tail &>> UInt64((8 &- pendingCount) &* 8)
                pendingCount = filled &- 8
            } else {
                pendingCount = filled
            }
        }
        self.state = state
        self.pending = pending
    }

    /// Mixes into `state` the word that `word`'s low bytes complete after `pending`'s
    /// `shift / 8` bytes (`shift` 8 to 56), and returns `word`'s other bytes, now pending.
    @inline(__always)
    private static func mix(_ word: UInt64, after pending: UInt64, shift: UInt64, into state: inout UInt64) -> UInt64 {
        state = round(state, pending | word &<< shift)
        return word &>> (64 &- shift)
    }

    @inline(__always)
    static func word(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// `count` (1 to 7) bytes from `offset` as the low bytes of a little-endian word, the rest
    /// zero: two overlapping loads (the overlap holds the same bytes, so OR keeps them).
    @inline(__always)
    static func partialWord(_ bytes: UnsafeRawBufferPointer, at offset: Int, count: Int) -> UInt64 {
        if count >= 4 {
            let low = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            let high = UInt64(
                UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset &+ count &- 4, as: UInt32.self)))
            return low | high &<< UInt64((count &- 4) &* 8)
        }
        let middle = count &>> 1
        return UInt64(bytes[offset]) | UInt64(bytes[offset &+ middle]) &<< UInt64(middle &* 8)
            | UInt64(bytes[offset &+ count &- 1]) &<< UInt64((count &- 1) &* 8)
    }

    /// xxHash64's round: `word` mixed into `hash`.
    @inline(__always)
    static func round(_ hash: UInt64, _ word: UInt64) -> UInt64 {
        var k = word &* prime2
        k = (k << 31) | (k >> 33)
        k &*= prime1
        let mixed = hash ^ k
        return ((mixed << 27) | (mixed >> 37)) &* prime1 &+ prime4
    }
}
