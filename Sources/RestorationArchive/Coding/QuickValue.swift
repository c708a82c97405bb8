/// A value as ``init(reading:at:end:)`` reads it: the typed reads of ``StateDecoder``
/// take their common case (the type asked for is the type stored) from it, with no closure,
/// error or allocation in between.
struct QuickValue {
    /// The value at `offset` in `bytes`, whose content ends at `end`: its tag, and for scalars
    /// their payload, for strings and bytes where they are. ``other`` for any other value or
    /// anything out of bounds, which the caller then reads in full.
    @inline(__always)
    init(reading bytes: UnsafeBufferPointer<UInt8>, at offset: Int, end: Int) {
        guard offset >= 0, offset < end, end <= bytes.count else {
            self = .other
            return
        }
        let tag = bytes[offset]
        var body = offset &+ 1
        switch tag {
        case BlobFormat.Tag.null.rawValue, BlobFormat.Tag.false.rawValue, BlobFormat.Tag.true.rawValue:
            self.init(tag: tag, payload: 0, start: body)
        case BlobFormat.Tag.int.rawValue, BlobFormat.Tag.uint.rawValue:
            guard let value = BlobScanner.quickVarint(bytes, end: end, at: &body) else {
                self = .other
                return
            }
            self.init(tag: tag, payload: value, start: body)
        case BlobFormat.Tag.float.rawValue:
            guard 4 <= end &- body else {
                self = .other
                return
            }
            let bits = UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: body, as: UInt32.self)
            self.init(tag: tag, payload: UInt64(UInt32(littleEndian: bits)), start: body)
        case BlobFormat.Tag.double.rawValue, BlobFormat.Tag.date.rawValue:
            guard 8 <= end &- body else {
                self = .other
                return
            }
            let bits = UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: body, as: UInt64.self)
            self.init(tag: tag, payload: UInt64(littleEndian: bits), start: body)
        case BlobFormat.Tag.string.rawValue, BlobFormat.Tag.bytes.rawValue:
            guard let length = BlobScanner.quickVarint(bytes, end: end, at: &body), length <= UInt64(end &- body) else {
                self = .other
                return
            }
            self.init(tag: tag, payload: length, start: body)
        default:
            self = .other
        }
    }

    private init(tag: UInt8, payload: UInt64, start: Int) {
        self.tag = tag
        self.payload = payload
        self.start = start
    }

    /// The value's tag byte, or ``missing`` or ``other``.
    let tag: UInt8
    /// Integers: the varint as stored (zigzag for signed ones); floats, doubles and dates: the
    /// bit pattern; strings and bytes: their length.
    let payload: UInt64
    /// Strings and bytes: where their bytes start.
    let start: Int

    /// The container has no value for the key.
    static var missing: QuickValue { QuickValue(tag: 0xFF, payload: 0, start: 0) }
    /// A value the quick read leaves to the full one (a URL, a reference, an array, a container).
    static var other: QuickValue { QuickValue(tag: 0xFE, payload: 0, start: 0) }

    /// Whether the container has no value for the key.
    var isMissing: Bool { tag == Self.missing.tag }

    /// Whether the value's tag is `tag`.
    @inline(__always)
    func `is`(_ tag: BlobFormat.Tag) -> Bool { self.tag == tag.rawValue }

    /// Where a string's or bytes' bytes are.
    var range: Range<Int> { start..<start &+ Int(truncatingIfNeeded: payload) }
}
