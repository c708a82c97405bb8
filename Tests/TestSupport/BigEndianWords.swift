/// The 32-bit numbers of SQLite's files (the database header, the write-ahead log's header
/// and frame headers), which are big-endian.
extension [UInt8] {
    /// The big-endian 32-bit word at `offset`.
    public func bigEndianWord(at offset: Int) -> UInt32 {
        self[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Writes `value` as a big-endian 32-bit word at `offset`.
    public mutating func putBigEndianWord(_ value: UInt32, at offset: Int) {
        for index in 0..<4 { self[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
    }
}
