#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A blob's content read through one pointer, which ``BlobReader`` lends for the duration of a
/// read: the field readers, the check pass and the building of ``StateValue`` trees.
///
/// Every read checks its bounds against ``end`` (and lengths and counts against the limits)
/// before it touches or allocates anything, so nothing here can trap on any input. The buffer's
/// subscript is unchecked in release builds: these explicit checks are the ones that count.
/// Offsets advance with `&+=` only after such a check has shown the result is at most
/// ``end`` (and measure the room left with `end &- offset`, never negative): the overflow
/// checks of plain `+=` and `-` could never fire.
struct BlobScanner {
    /// The whole blob, frame included.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The end of the content (the checksum follows).
    let end: Int
    let limits: DecodingLimits
    let maximumDepth: Int
    /// The longest key accepted: the encoder's bound, or the string limit when smaller.
    let maximumKeyLength: Int
    /// Whether the whole content has been checked: reads then skip re-validating UTF-8, URLs
    /// and paths (bounds are still checked everywhere).
    let isChecked: Bool

    // MARK: Checking (no allocation but for non-ASCII strings)

    /// Checks a container's body (count and entries): keys strictly ascending, every value
    /// checked completely. Appends the entries to `entries` when `indexing`.
    func checkMapBody(at offset: inout Int, depth: Int, entries: inout BlobEntryIndex, indexing: Bool)
        throws(StateCodingError) -> Int
    {
        try checkDepth(depth, offset: offset)
        let count = try readCount(at: &offset, minimumElementSize: 2)
        if indexing { entries.reserve(count) }
        var previous = KeyBytes()
        for _ in 0..<count {
            let key = try readKey(at: &offset, after: &previous)
            if indexing { entries.append(BlobEntry(key: key.start, keyLength: key.length)) }
            try skipValue(at: &offset, depth: depth)
        }
        return count
    }

    /// Where a key's bytes are; as a container's previous key, `length` -1 for none yet.
    /// Plain integers: an optional range costs the check pass measurably.
    struct KeyBytes {
        var start = 0
        var length = -1
    }

    /// A container's next key, which must sort strictly after `previous` (one encoding per
    /// container); `previous` becomes it.
    @inline(__always)
    private func readKey(at offset: inout Int, after previous: inout KeyBytes) throws(StateCodingError) -> KeyBytes {
        let start = offset
        let length = try readLength(at: &offset, limit: maximumKeyLength, name: "key length")
        let key = offset
        offset &+= length
        if !isChecked && !isValidUTF8(key, length) { throw .invalidUTF8(offset: key) }
        if previous.length >= 0 && order(previous.start, previous.length, key, length) >= 0 {
            throw .malformed(reason: "container keys are not in strictly ascending order", offset: start)
        }
        previous = KeyBytes(start: key, length: length)
        return previous
    }

    /// Skips a value, checking it completely (or, once checked, only its bounds). URLs,
    /// references, arrays and containers have a function of their own, so that the common
    /// cases stay short.
    func skipValue(at offset: inout Int, depth: Int) throws(StateCodingError) {
        let start = offset
        let tag = try readTag(at: &offset)
        switch tag {
        case .null, .false, .true: break
        case .int, .uint: _ = try readVarint(at: &offset)
        case .float: try skip(4, at: &offset)
        case .double, .date: try skip(8, at: &offset)
        case .uuid: try skip(16, at: &offset)
        case .string: _ = try readStringRange(at: &offset)
        case .bytes: offset &+= try readLength(at: &offset, limit: limits.maximumBytesLength, name: "bytes length")
        case .url, .reference, .array, .map: try skipComposite(tag, at: &offset, start: start, depth: depth)
        }
    }

    /// Skips a URL, a reference, an array or a container (after its tag).
    private func skipComposite(_ tag: BlobFormat.Tag, at offset: inout Int, start: Int, depth: Int)
        throws(StateCodingError)
    {
        switch tag {
        case .url:
            if isChecked { _ = try readStringRange(at: &offset) } else { _ = try readURL(at: &offset, start: start) }
        case .reference:
            if isChecked { _ = try readStringRange(at: &offset) } else { _ = try readReference(at: &offset, start: start) }
        case .array:
            try checkDepth(depth + 1, offset: start)
            let count = try readCount(at: &offset, minimumElementSize: 1)
            for _ in 0..<count { try skipValue(at: &offset, depth: depth + 1) }
        case .map:
            var unused = BlobEntryIndex()
            _ = try checkMapBody(at: &offset, depth: depth + 1, entries: &unused, indexing: false)
        case .null, .false, .true, .int, .uint, .float, .double, .date, .uuid, .string, .bytes:
            break  // skipValue's own cases, never passed here
        }
    }

    /// The entries of a checked container whose body starts at `body`.
    func entries(ofBody body: Int, depth: Int) -> BlobEntryIndex {
        var offset = body
        var entries = BlobEntryIndex()
        // Checked content: this cannot fail; an empty index is the safe answer if it did.
        guard (try? checkMapBody(at: &offset, depth: depth, entries: &entries, indexing: true)) != nil else {
            return BlobEntryIndex()
        }
        return entries
    }

    // MARK: Building values

    func readValue(at offset: inout Int, depth: Int) throws(StateCodingError) -> StateValue {
        let start = offset
        switch try readTag(at: &offset) {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int: return .int(Self.unzigzag(try readVarint(at: &offset)))
        case .uint: return .uint(try readVarint(at: &offset))
        case .float: return .float(Float(bitPattern: try readFixed(UInt32.self, at: &offset)))
        case .double: return .double(Double(bitPattern: try readFixed(UInt64.self, at: &offset)))
        case .date: return .date(try readDate(at: &offset))
        case .uuid: return .uuid(try readUUID(at: &offset))
        case .string: return .string(string(try readStringRange(at: &offset)))
        case .bytes: return .bytes(try readBytes(at: &offset))
        case .url: return .url(try readURL(at: &offset, start: start))
        case .reference: return .reference(try readReference(at: &offset, start: start))
        case .array:
            try checkDepth(depth + 1, offset: start)
            let count = try readCount(at: &offset, minimumElementSize: 1)
            var values: [StateValue] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try readValue(at: &offset, depth: depth + 1)) }
            return .array(values)
        case .map:
            return .container(try readMapBody(at: &offset, depth: depth + 1))
        }
    }

    func readMapBody(at offset: inout Int, depth: Int) throws(StateCodingError) -> [String: StateValue] {
        try checkDepth(depth, offset: offset)
        let count = try readCount(at: &offset, minimumElementSize: 2)
        var values: [String: StateValue] = [:]
        values.reserveCapacity(count)
        var previous = KeyBytes()
        for _ in 0..<count {
            let start = offset
            let key = try readKey(at: &offset, after: &previous)
            // Keys are strictly ascending, so one already there is this one in another Unicode
            // form (composed or decomposed characters): a dictionary holds one of the two values.
            // `StateEncoder` never writes such a pair; the check pass does not look for one (it
            // would cost every launch), and typed reads find each key by its bytes.
            let value = try readValue(at: &offset, depth: depth)
            guard values.updateValue(value, forKey: string(key.start..<key.start + key.length)) == nil else {
                throw .malformed(reason: "two container keys are one string in different Unicode forms", offset: start)
            }
        }
        return values
    }

    // MARK: Fields

    @inline(__always)
    func readTag(at offset: inout Int) throws(StateCodingError) -> BlobFormat.Tag {
        guard offset < end else { throw .truncated(offset: offset) }
        let byte = bytes[offset]
        guard let tag = BlobFormat.Tag(byte) else { throw .invalidTag(byte, offset: offset) }
        offset &+= 1
        return tag
    }

    /// An unsigned LEB128 integer in its shortest form, at most 64 bits.
    @inline(__always)
    func readVarint(at offset: inout Int) throws(StateCodingError) -> UInt64 {
        guard offset < end else { throw .truncated(offset: offset) }
        let first = bytes[offset]
        guard first >= 0x80 else {
            offset &+= 1
            return UInt64(first)
        }
        return try readLongVarint(at: &offset)
    }

    /// A varint of two bytes or more (the first has its high bit set).
    private func readLongVarint(at offset: inout Int) throws(StateCodingError) -> UInt64 {
        let start = offset
        var result = UInt64(bytes[start] & 0x7F)
        var index = start + 1
        // Bytes 2 to 9 carry 7 bits each; a tenth may only carry bit 63.
        for shift in stride(from: UInt64(7), through: 63, by: 7) {
            guard index < end else { throw .truncated(offset: index) }
            let byte = bytes[index]
            index &+= 1
            if shift == 63 && byte > 1 { break }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                if byte == 0 { throw .malformed(reason: "an integer is not in its shortest form", offset: start) }
                offset = index
                return result
            }
        }
        throw .malformed(reason: "an integer overflows 64 bits", offset: start)
    }

    /// A little-endian fixed-width integer (floats, doubles and dates are stored this way).
    @inline(__always)
    func readFixed<Value: FixedWidthInteger & UnsignedInteger>(_: Value.Type, at offset: inout Int)
        throws(StateCodingError) -> Value
    {
        let size = MemoryLayout<Value>.size
        guard size <= end &- offset else { throw .truncated(offset: offset) }
        let value = UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: offset, as: Value.self)
        offset &+= size
        return Value(littleEndian: value)
    }

    @inline(__always)
    func readDate(at offset: inout Int) throws(StateCodingError) -> Date {
        Self.date(bits: try readFixed(UInt64.self, at: &offset))
    }

    /// The date a ``BlobFormat/Tag/date`` payload stands for: the bit pattern of its seconds
    /// since 2001-01-01.
    @inline(__always)
    static func date(bits: UInt64) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
    }

    /// A length-prefixed byte string (after its tag).
    @inline(__always)
    func readBytes(at offset: inout Int) throws(StateCodingError) -> [UInt8] {
        let length = try readLength(at: &offset, limit: limits.maximumBytesLength, name: "bytes length")
        defer { offset &+= length }
        return Array(UnsafeBufferPointer(rebasing: bytes[offset..<offset + length]))
    }

    func readUUID(at offset: inout Int) throws(StateCodingError) -> UUID {
        guard 16 <= end &- offset else { throw .truncated(offset: offset) }
        defer { offset &+= 16 }
        let b = bytes
        let s = offset
        return UUID(
            uuid: (
                b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5], b[s + 6], b[s + 7],
                b[s + 8], b[s + 9], b[s + 10], b[s + 11], b[s + 12], b[s + 13], b[s + 14], b[s + 15]
            ))
    }

    /// A URL, which must be stored exactly as its `absoluteString` (the form the writer uses),
    /// so that one URL has one encoding.
    func readURL(at offset: inout Int, start: Int) throws(StateCodingError) -> URL {
        let text = string(try readStringRange(at: &offset))
        guard let url = URL(string: text), url.absoluteString == text else {
            throw .malformed(reason: "not a valid URL", offset: start)
        }
        return url
    }

    /// A restoration path, which must be stored in its canonical text form (the writer's), so
    /// that one path has one encoding.
    func readReference(at offset: inout Int, start: Int) throws(StateCodingError) -> RestorationPath {
        let text = string(try readStringRange(at: &offset))
        guard let path = RestorationPath(canonicalText: text) else {
            throw .malformed(reason: "not a valid restoration path", offset: start)
        }
        return path
    }

    /// A length-prefixed UTF-8 string's byte range, checked.
    @inline(__always)
    func readStringRange(at offset: inout Int, limit: Int? = nil, name: StaticString = "string length")
        throws(StateCodingError) -> Range<Int>
    {
        let length = try readLength(at: &offset, limit: limit ?? limits.maximumStringLength, name: name)
        let start = offset
        offset &+= length
        guard isChecked || isValidUTF8(start, length) else { throw .invalidUTF8(offset: start) }
        return start..<offset
    }

    /// A length that fits the limit and the bytes left.
    @inline(__always)
    func readLength(at offset: inout Int, limit: Int, name: StaticString) throws(StateCodingError) -> Int {
        let start = offset
        let length = try readVarint(at: &offset)
        guard length <= UInt64(clamping: limit) else { throw .limitExceeded(limit: "\(name) (\(limit))", offset: start) }
        guard length <= UInt64(end &- offset) else { throw .truncated(offset: start) }
        return Int(length)
    }

    /// An element count that fits the limit and could fit in the bytes left.
    @inline(__always)
    func readCount(at offset: inout Int, minimumElementSize: Int) throws(StateCodingError) -> Int {
        let start = offset
        let count = try readVarint(at: &offset)
        guard count <= UInt64(clamping: limits.maximumElementCount) else {
            throw .limitExceeded(limit: "element count (\(limits.maximumElementCount))", offset: start)
        }
        guard count <= UInt64((end &- offset) / minimumElementSize) else { throw .truncated(offset: start) }
        return Int(count)
    }

    @inline(__always)
    func skip(_ count: Int, at offset: inout Int) throws(StateCodingError) {
        guard count <= end &- offset else { throw .truncated(offset: offset) }
        offset &+= count
    }

    @inline(__always)
    func checkDepth(_ depth: Int, offset: Int) throws(StateCodingError) {
        guard depth <= maximumDepth else { throw .limitExceeded(limit: "nesting depth (\(maximumDepth))", offset: offset) }
    }

    // MARK: Bytes

    /// The string in a checked range: one whose UTF-8 the check pass, or the read that found
    /// the range, has validated, so it is not validated again (``UTF8Text/string(checked:isKnownASCII:)``).
    func string(_ range: Range<Int>) -> String {
        UTF8Text.string(checked: UnsafeBufferPointer(rebasing: bytes[range]))
    }

    @inline(__always)
    private func isValidUTF8(_ start: Int, _ length: Int) -> Bool {
        UTF8Text.isValid(UnsafeBufferPointer(rebasing: bytes[start..<start + length]))
    }

    /// The byte-wise (memcmp) order of two ranges of the blob: negative, zero or positive.
    @inline(__always)
    func order(_ a: Int, _ aLength: Int, _ b: Int, _ bLength: Int) -> Int {
        let raw = UnsafeRawBufferPointer(bytes)
        return Self.order(raw, a, aLength, raw, b, bLength)
    }

    /// memcmp order of `x[a..<a+aLength]` and `y[b..<b+bLength]`: negative, zero or positive.
    ///
    /// Keys are short, and a call to `memcmp` costs more than comparing them here: big-endian
    /// words, the last one overlapping the one before it (the overlap is known equal, so the
    /// first difference still decides).
    @inline(__always)
    static func order(
        _ x: UnsafeRawBufferPointer, _ a: Int, _ aLength: Int, _ y: UnsafeRawBufferPointer, _ b: Int, _ bLength: Int
    ) -> Int {
        // The callers pass ranges inside their buffers, so these offsets cannot overflow.
        let common = min(aLength, bLength)
        if common >= 8 {
            var index = 0
            while true {
                let p = UInt64(bigEndian: x.loadUnaligned(fromByteOffset: a &+ index, as: UInt64.self))
                let q = UInt64(bigEndian: y.loadUnaligned(fromByteOffset: b &+ index, as: UInt64.self))
                if p != q { return p < q ? -1 : 1 }
                if index == common &- 8 { break }
                index = min(index &+ 8, common &- 8)
            }
        } else if common >= 4 {
            let last = common &- 4
            let p = UInt64(UInt32(bigEndian: x.loadUnaligned(fromByteOffset: a, as: UInt32.self))) << 32
                | UInt64(UInt32(bigEndian: x.loadUnaligned(fromByteOffset: a &+ last, as: UInt32.self)))
            let q = UInt64(UInt32(bigEndian: y.loadUnaligned(fromByteOffset: b, as: UInt32.self))) << 32
                | UInt64(UInt32(bigEndian: y.loadUnaligned(fromByteOffset: b &+ last, as: UInt32.self)))
            if p != q { return p < q ? -1 : 1 }
        } else {
            for index in 0..<common {
                let p = x[a &+ index]
                let q = y[b &+ index]
                if p != q { return p < q ? -1 : 1 }
            }
        }
        return aLength - bLength
    }

    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }
}
