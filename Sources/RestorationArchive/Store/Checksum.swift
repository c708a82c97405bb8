/// A streaming 64-bit checksum for detecting damage to stored rows.
///
/// It catches accidental change (bit flips, zeroed or moved bytes, rows swapped between
/// archives or paths); it is not a defence against an attacker who can write the file.
/// Eight bytes are mixed per step (the round function of xxHash64) and the result is
/// finalised with MurmurHash3's `fmix64`, so every input bit affects every output bit.
///
/// Fields are combined with a length prefix, so `("ab", "c")` and `("a", "bc")` differ.
struct Checksum {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63

    private var state: UInt64
    private var pending: UInt64 = 0
    private var pendingCount = 0
    private var length: UInt64 = 0

    /// - Parameter domain: distinguishes checksums of different kinds of row.
    init(domain: UInt64) {
        state = domain &* Self.prime1 &+ Self.prime4
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

    /// The same as the `String?` it would be made into.
    mutating func combine(_ value: Substring?) {
        combine(word: value == nil ? 0 : 1)
        if let value { UTF8Text.withBytes(of: value) { combine(lengthPrefixed: $0) } }
    }

    mutating func combine(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { combine(lengthPrefixed: $0) }
    }

    /// The checksum, as SQLite stores it (a signed 64-bit integer).
    func finalize() -> Int64 {
        var hash = state
        if pendingCount > 0 { hash = Self.round(hash, pending) }
        hash ^= length
        // fmix64
        hash ^= hash >> 33
        hash &*= 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        hash &*= 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 33
        return Int64(bitPattern: hash)
    }

    private mutating func combine(lengthPrefixed bytes: UnsafeRawBufferPointer) {
        combine(word: UInt64(bytes.count))
        combine(raw: bytes)
    }

    private mutating func combine(word: UInt64) {
        withUnsafeBytes(of: word.littleEndian) { combine(raw: $0) }
    }

    private mutating func combine(raw bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var offset = 0
        let count = bytes.count
        // Fill a partial word first.
        while pendingCount > 0 && pendingCount < 8 && offset < count {
            pending |= UInt64(bytes[offset]) << (8 * UInt64(pendingCount))
            pendingCount += 1
            offset += 1
        }
        if pendingCount == 8 {
            state = Self.round(state, pending)
            pending = 0
            pendingCount = 0
        }
        // Whole words straight from memory.
        while count - offset >= 8 {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            state = Self.round(state, word)
            offset += 8
        }
        // Keep the tail for the next call.
        while offset < count {
            pending |= UInt64(bytes[offset]) << (8 * UInt64(pendingCount))
            pendingCount += 1
            offset += 1
        }
    }

    private static func round(_ hash: UInt64, _ word: UInt64) -> UInt64 {
        var k = word &* prime2
        k = (k << 31) | (k >> 33)
        k &*= prime1
        let mixed = hash ^ k
        return ((mixed << 27) | (mixed >> 37)) &* prime1 &+ prime4
    }
}
