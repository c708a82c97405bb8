#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads and checks blobs. Every read is bounds-checked against the content and the limits
/// before anything is allocated; nothing here can trap on any input.
struct BlobReader {
    /// Nesting beyond this is refused whatever the limits say, so recursion stays shallow.
    static let depthCeiling = 512

    let blob: [UInt8]
    let limits: DecodingLimits
    /// The end of the content (the checksum follows).
    let end: Int
    private let maximumDepth: Int
    /// Set once ``readRootContainer()`` has checked the whole content: later reads of the same
    /// bytes skip re-validating UTF-8, URLs and paths (bounds are still checked everywhere).
    private(set) var isChecked = false

    /// Checks the frame: size, version and checksum.
    init(blob: [UInt8], limits: DecodingLimits) throws(StateCodingError) {
        guard blob.count <= limits.maximumBlobSize else {
            throw .limitExceeded(limit: "blob size (\(limits.maximumBlobSize) bytes)", offset: 0)
        }
        guard let version = blob.first else { throw .truncated(offset: 0) }
        guard version <= BlobFormat.version else {
            throw .unsupportedFormatVersion(found: Int(version), supported: Int(BlobFormat.version))
        }
        guard version >= 1 else { throw .malformed(reason: "format version 0 does not exist", offset: 0) }
        // Version, an entry count and the checksum at least.
        guard blob.count >= 6 else { throw .truncated(offset: blob.count) }
        let end = blob.count - 4
        let stored = UInt32(blob[end]) | UInt32(blob[end + 1]) << 8 | UInt32(blob[end + 2]) << 16
            | UInt32(blob[end + 3]) << 24
        guard CRC32C.checksum(blob, count: end) == stored else { throw .checksumMismatch }
        self.blob = blob
        self.limits = limits
        self.end = end
        self.maximumDepth = min(limits.maximumDepth, Self.depthCeiling)
    }

    /// Checks the whole content and, when `entries` is not nil, lists the root's entries
    /// (key range and value offset) in the same pass.
    mutating func readRootContainer(indexing entries: inout [(key: Range<Int>, value: Int)]) throws(StateCodingError)
        -> (offset: Int, count: Int)
    {
        var offset = 1
        let count = try skipMapBody(at: &offset, depth: 1, entries: &entries, indexing: true)
        guard offset == end else { throw .trailingBytes(offset: offset) }
        isChecked = true
        return (1, count)
    }

    // MARK: Checking (no allocation but for non-ASCII strings)

    /// Skips a value, checking it completely.
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
        case .bytes:
            let length = try readLength(at: &offset, limit: limits.maximumBytesLength, name: "bytes length")
            try skip(length, at: &offset)
        case .url:
            if isChecked { _ = try readStringRange(at: &offset) } else { _ = try readURL(at: &offset, start: start) }
        case .reference:
            if isChecked {
                _ = try readStringRange(at: &offset)
            } else {
                _ = try readReference(at: &offset, start: start)
            }
        case .array:
            try checkDepth(depth + 1, offset: start)
            let count = try readCount(at: &offset, minimumElementSize: 1)
            for _ in 0..<count { try skipValue(at: &offset, depth: depth + 1) }
        case .map:
            try checkDepth(depth + 1, offset: start)
            var unused: [(key: Range<Int>, value: Int)] = []
            _ = try skipMapBody(at: &offset, depth: depth + 1, entries: &unused, indexing: false)
        }
    }

    /// Skips a container's body (count and entries), checking that keys strictly ascend;
    /// appends the entries to `entries` when `indexing`.
    func skipMapBody(
        at offset: inout Int, depth: Int, entries: inout [(key: Range<Int>, value: Int)], indexing: Bool
    ) throws(StateCodingError) -> Int {
        try checkDepth(depth, offset: offset)
        let count = try readCount(at: &offset, minimumElementSize: 2)
        if indexing { entries.reserveCapacity(count) }
        var previous: Range<Int>? = nil
        for _ in 0..<count {
            let key = try readKey(at: &offset, after: &previous)
            if indexing { entries.append((key, offset)) }
            try skipValue(at: &offset, depth: depth)
        }
        return count
    }

    // MARK: Building values (on checked content)

    /// The value at `offset`, as a tree.
    func value(at offset: Int, depth: Int) throws(StateCodingError) -> StateValue {
        var offset = offset
        return try readValue(at: &offset, depth: depth)
    }

    func readValue(at offset: inout Int, depth: Int) throws(StateCodingError) -> StateValue {
        let start = offset
        let tag = try readTag(at: &offset)
        switch tag {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int: return .int(Self.unzigzag(try readVarint(at: &offset)))
        case .uint: return .uint(try readVarint(at: &offset))
        case .float: return .float(Float(bitPattern: try readFixed(UInt32.self, at: &offset)))
        case .double: return .double(Double(bitPattern: try readFixed(UInt64.self, at: &offset)))
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try readFixed(UInt64.self, at: &offset))))
        case .uuid: return .uuid(try readUUID(at: &offset))
        case .string: return .string(string(try readStringRange(at: &offset)))
        case .bytes: return .bytes(try readBytes(at: &offset))
        case .url:
            return .url(try readURL(at: &offset, start: start))
        case .reference:
            return .reference(try readReference(at: &offset, start: start))
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
        var previous: Range<Int>? = nil
        for _ in 0..<count {
            let key = try readKey(at: &offset, after: &previous)
            values[string(key)] = try readValue(at: &offset, depth: depth)
        }
        return values
    }

    // MARK: Fields

    func readTag(at offset: inout Int) throws(StateCodingError) -> BlobFormat.Tag {
        guard offset < end else { throw .truncated(offset: offset) }
        let byte = blob[offset]
        guard let tag = BlobFormat.Tag(rawValue: byte) else { throw .invalidTag(byte, offset: offset) }
        offset += 1
        return tag
    }

    /// An unsigned LEB128 integer in its shortest form, at most 64 bits.
    @inline(__always)
    func readVarint(at offset: inout Int) throws(StateCodingError) -> UInt64 {
        let start = offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < end else { throw .truncated(offset: offset) }
            let byte = blob[offset]
            offset += 1
            if shift == 63 && byte > 1 {
                throw .malformed(reason: "an integer overflows 64 bits", offset: start)
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                if byte == 0 && offset - start > 1 {
                    throw .malformed(reason: "an integer is not in its shortest form", offset: start)
                }
                return result
            }
            shift += 7
        }
    }

    /// A little-endian fixed-width integer (floats, doubles and dates are stored this way).
    func readFixed<Value: FixedWidthInteger & UnsignedInteger>(_: Value.Type, at offset: inout Int)
        throws(StateCodingError) -> Value
    {
        let start = offset
        try skip(MemoryLayout<Value>.size, at: &offset)
        var value: Value = 0
        for index in 0..<MemoryLayout<Value>.size { value |= Value(blob[start + index]) << (8 * index) }
        return value
    }

    /// A length-prefixed byte string (after its tag).
    func readBytes(at offset: inout Int) throws(StateCodingError) -> [UInt8] {
        let length = try readLength(at: &offset, limit: limits.maximumBytesLength, name: "bytes length")
        let range = offset..<offset + length
        try skip(length, at: &offset)
        return Array(blob[range])
    }

    func readUUID(at offset: inout Int) throws(StateCodingError) -> UUID {
        let start = offset
        try skip(16, at: &offset)
        let b = blob
        let s = start
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

    /// A container's next key, which must sort strictly after `previous` (one encoding per
    /// container); `previous` becomes it.
    private func readKey(at offset: inout Int, after previous: inout Range<Int>?) throws(StateCodingError) -> Range<Int> {
        let start = offset
        let key = try readKeyRange(at: &offset)
        if let previous, compare(previous, key) >= 0 {
            throw .malformed(reason: "container keys are not in strictly ascending order", offset: start)
        }
        previous = key
        return key
    }

    /// A key's byte range: a string of at most ``StateEncoder/maximumKeyLength`` bytes.
    func readKeyRange(at offset: inout Int) throws(StateCodingError) -> Range<Int> {
        try readStringRange(
            at: &offset, limit: min(StateEncoder.maximumKeyLength, limits.maximumStringLength), name: "key length")
    }

    /// A length-prefixed UTF-8 string's byte range, checked.
    func readStringRange(at offset: inout Int, limit: Int? = nil, name: StaticString = "string length")
        throws(StateCodingError) -> Range<Int>
    {
        let length = try readLength(at: &offset, limit: limit ?? limits.maximumStringLength, name: name)
        let range = offset..<offset + length
        try skip(length, at: &offset)
        guard isChecked || isValidUTF8(range) else { throw .invalidUTF8(offset: range.lowerBound) }
        return range
    }

    /// A length that fits the limit and the bytes left.
    func readLength(at offset: inout Int, limit: Int, name: StaticString) throws(StateCodingError) -> Int {
        let start = offset
        let length = try readVarint(at: &offset)
        guard length <= UInt64(limit) else { throw .limitExceeded(limit: "\(name) (\(limit))", offset: start) }
        guard length <= UInt64(end - offset) else { throw .truncated(offset: start) }
        return Int(length)
    }

    /// An element count that fits the limit and could fit in the bytes left.
    func readCount(at offset: inout Int, minimumElementSize: Int) throws(StateCodingError) -> Int {
        let start = offset
        let count = try readVarint(at: &offset)
        guard count <= UInt64(limits.maximumElementCount) else {
            throw .limitExceeded(limit: "element count (\(limits.maximumElementCount))", offset: start)
        }
        guard count <= UInt64((end - offset) / minimumElementSize) else { throw .truncated(offset: start) }
        return Int(count)
    }

    func skip(_ count: Int, at offset: inout Int) throws(StateCodingError) {
        guard count <= end - offset else { throw .truncated(offset: offset) }
        offset += count
    }

    func checkDepth(_ depth: Int, offset: Int) throws(StateCodingError) {
        guard depth <= maximumDepth else { throw .limitExceeded(limit: "nesting depth (\(maximumDepth))", offset: offset) }
    }

    /// The string in a checked range.
    func string(_ range: Range<Int>) -> String {
        blob.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// Byte-wise comparison of two ranges: negative, zero or positive.
    func compare(_ a: Range<Int>, _ b: Range<Int>) -> Int {
        blob.withUnsafeBytes { buffer in
            Self.compare(UnsafeRawBufferPointer(rebasing: buffer[a]), UnsafeRawBufferPointer(rebasing: buffer[b]))
        }
    }

    /// memcmp order: negative, zero or positive.
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let x = a.baseAddress, let y = b.baseAddress {
            let order = memcmp(x, y, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }

    private func isValidUTF8(_ range: Range<Int>) -> Bool {
        blob.withUnsafeBufferPointer { UTF8Text.isValid(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }
}
