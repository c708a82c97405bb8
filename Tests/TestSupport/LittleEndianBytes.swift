/// The fixed-width numbers of the store's own formats (header values, blob frames, checksum
/// streams), which are little-endian.
extension [UInt8] {
    /// The little-endian bytes of `value`, as many as its width.
    public init(littleEndian value: some FixedWidthInteger) {
        self = (0..<value.bitWidth / 8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}
