#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Appends values in the blob format, into memory it owns.
///
/// The bytes live in one allocation that grows by doubling. Every append checks the room it
/// needs once and then stores directly: an `[UInt8]` would check its uniqueness and capacity
/// on every byte of a varint and call a generic `append(contentsOf:)` for every key.
/// Non-copyable, so its memory has exactly one owner, freed when the writer goes.
struct BlobWriter: ~Copyable {
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    /// The number of bytes written.
    private(set) var count = 0

    /// An empty writer with room for a typical state (an 8-value state is about 280 bytes).
    init() {
        capacity = 512
        base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
    }

    deinit {
        base.deallocate()
    }

    /// Lends the bytes written so far.
    @inline(__always)
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Forgets every byte written after the first `count` (a value that failed part-way).
    mutating func truncate(to count: Int) {
        precondition(count >= 0 && count <= self.count, "truncating past the written bytes")
        self.count = count
    }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if capacity - count < extra { grow(toFit: extra) }
    }

    @inline(never)
    private mutating func grow(toFit extra: Int) {
        var newCapacity = capacity
        while newCapacity - count < extra { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 1)
        newBase.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    // MARK: Blob frame

    mutating func startBlob() {
        append(byte: BlobFormat.version)
    }

    /// Appends the CRC-32C of everything written, and returns the blob.
    consuming func finishBlob() throws(StateCodingError) -> [UInt8] {
        guard count + 4 <= DecodingLimits.default.maximumBlobSize else {
            throw .unencodable(key: "", reason: "the blob would exceed \(DecodingLimits.default.maximumBlobSize) bytes")
        }
        appendFixed32(CRC32C.checksum(UnsafeRawBufferPointer(start: base, count: count)))
        return withUnsafeBytes { Array($0) }
    }

    // MARK: Primitives

    @inline(__always)
    mutating func append(byte: UInt8) {
        reserve(1)
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// How many bytes `value` takes as a varint.
    @inline(__always)
    static func varintSize(_ value: Int) -> Int {
        var value = UInt64(value)
        var size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }

    @inline(__always)
    mutating func appendVarint(_ value: UInt64) {
        reserve(10)
        var value = value
        var offset = count
        while value >= 0x80 {
            base.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, toByteOffset: offset, as: UInt8.self)
            value >>= 7
            offset += 1
        }
        base.storeBytes(of: UInt8(value), toByteOffset: offset, as: UInt8.self)
        count = offset + 1
    }

    @inline(__always)
    mutating func appendFixed32(_ value: UInt32) {
        reserve(4)
        base.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt32.self)
        count += 4
    }

    @inline(__always)
    mutating func appendFixed64(_ value: UInt64) {
        reserve(8)
        base.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt64.self)
        count += 8
    }

    /// Appends raw bytes.
    @inline(__always)
    mutating func append(_ raw: UnsafeRawBufferPointer) {
        guard let source = raw.baseAddress, raw.count > 0 else { return }
        reserve(raw.count)
        (base + count).copyMemory(from: source, byteCount: raw.count)
        count += raw.count
    }

    @inline(__always)
    mutating func appendLengthPrefixed(_ string: String) {
        UTF8Text.withBytes(of: string) { appendLengthPrefixed($0) }
    }

    @inline(__always)
    mutating func appendLengthPrefixed(_ raw: UnsafeRawBufferPointer) {
        appendVarint(UInt64(raw.count))
        append(raw)
    }

    // MARK: Tagged values

    @inline(__always) mutating func tag(_ tag: BlobFormat.Tag) { append(byte: tag.rawValue) }

    mutating func writeNull() { tag(.null) }
    mutating func write(_ value: Bool) { tag(value ? .true : .false) }

    /// Starts an array of `count` values, which the caller then writes; refuses more than the
    /// default decoding limits read (``checkCount(_:)``), so no writer of arrays can skip it.
    mutating func startArray(count: Int) throws(StateCodingError) {
        try Self.checkCount(count)
        tag(.array)
        appendVarint(UInt64(count))
    }

    mutating func write(_ value: Int64) {
        tag(.int)
        appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func write(_ value: UInt64) {
        tag(.uint)
        appendVarint(value)
    }

    mutating func write(_ value: Float) {
        tag(.float)
        appendFixed32(value.bitPattern)
    }

    mutating func write(_ value: Double) {
        tag(.double)
        appendFixed64(value.bitPattern)
    }

    mutating func write(_ value: String) {
        tag(.string)
        appendLengthPrefixed(value)
    }

    mutating func write(bytes value: [UInt8]) {
        tag(.bytes)
        value.withUnsafeBytes { appendLengthPrefixed($0) }
    }

    mutating func write(_ value: Data) {
        tag(.bytes)
        value.withUnsafeBytes { appendLengthPrefixed($0) }
    }

    mutating func write(_ value: Date) {
        tag(.date)
        appendFixed64(value.timeIntervalSinceReferenceDate.bitPattern)
    }

    mutating func write(_ value: UUID) {
        tag(.uuid)
        Swift.withUnsafeBytes(of: value.uuid) { append($0) }
    }

    mutating func write(_ value: URL) {
        tag(.url)
        appendLengthPrefixed(value.absoluteString)
    }

    mutating func write(_ value: RestorationPath) {
        tag(.reference)
        appendLengthPrefixed(value.description)
    }

    /// Writes any value of the tree; containers with their keys sorted.
    mutating func write(_ value: StateValue, depth: Int) throws(StateCodingError) {
        switch value {
        case .null: writeNull()
        case .bool(let value): write(value)
        case .int(let value): write(value)
        case .uint(let value): write(value)
        case .float(let value): write(value)
        case .double(let value): write(value)
        case .string(let value): write(value)
        case .bytes(let value): write(bytes: value)
        case .date(let value): write(value)
        case .uuid(let value): write(value)
        case .url(let value): write(value)
        case .reference(let value): write(value)
        case .array(let values):
            try checkDepth(depth + 1)
            try startArray(count: values.count)
            for value in values { try write(value, depth: depth + 1) }
        case .container(let values):
            try checkDepth(depth + 1)
            tag(.map)
            try writeMapBody(values, depth: depth + 1)
        }
    }

    /// Writes a container's count and entries (no tag), keys in ascending UTF-8 order.
    mutating func writeMapBody(_ values: [String: StateValue], depth: Int) throws(StateCodingError) {
        try checkDepth(depth)
        try Self.checkCount(values.count)
        let entries = values.sorted { StateEncoder.precedes($0.key, $1.key) }
        appendVarint(UInt64(entries.count))
        for (key, value) in entries {
            try StateEncoder.checkKeyLength(key)
            appendLengthPrefixed(key)
            do { try write(value, depth: depth) } catch { throw error.under(key) }
        }
    }

    /// Refuses an array or a container of more elements than the default decoding limits
    /// read: written, it would fail every read (`restorectl`'s, and each launch's restoration).
    /// The key is left empty for the containers around it to name (``StateCodingError/under(_:)``).
    static func checkCount(_ count: Int) throws(StateCodingError) {
        guard count <= DecodingLimits.default.maximumElementCount else {
            throw .unencodable(
                key: "",
                reason: "an array or a container holds \(count) elements; the limit is \(DecodingLimits.default.maximumElementCount)")
        }
    }

    func checkDepth(_ depth: Int) throws(StateCodingError) {
        guard depth <= DecodingLimits.default.maximumDepth else {
            throw .unencodable(
                key: "", reason: "containers nest deeper than \(DecodingLimits.default.maximumDepth) levels")
        }
    }
}
