#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The keyed coder a restorable object writes its state into.
///
/// Each object gets its own encoder, so keys never collide across objects (R3). Values are
/// typed; any `Encodable` value goes through the same format (no detour through JSON), and
/// references to other restorable objects are stored as their restoration paths (R4).
/// Encoding a key twice keeps the last value, as `NSCoder` does.
///
/// ```swift
/// let coder = StateEncoder()
/// try coder.encode(2, forKey: "selectedTab")
/// try coder.encode(order, forKey: "order")           // any Codable value
/// try coder.encodeNested(forKey: "scroll") { scroll in
///     try scroll.encode(120.5, forKey: "offset")
/// }
/// let blob = try coder.encodedBlob()
/// ```
///
/// The blob is deterministic: the same values always give the same bytes, whatever the
/// order they were encoded in. Not thread-safe: one object encodes into it at a time.
public final class StateEncoder {
    /// Keys starting with this prefix belong to the restoration engine and are refused.
    public static let reservedKeyPrefix = "restoration."
    /// The longest key accepted, in UTF-8 bytes.
    public static let maximumKeyLength = 1024

    /// One encoded key and its value, both in `values`: the key length-prefixed as the blob
    /// has it, then the value, so that writing the blob copies each entry in one piece.
    private struct Entry {
        /// The entry's bytes in `values`: the key's length, the key, the value.
        var bytes: Range<Int>
        /// The key's own bytes in `values`.
        var key: Range<Int>
        /// The key's first 8 bytes, big-endian and zero-padded: comparing two prefixes orders
        /// most keys without looking at their bytes.
        var prefix: UInt64

        /// Strictly before `other` in the blob's (memcmp) order; `values` holds both keys.
        @inline(__always)
        func precedes(_ other: Entry, in values: UnsafeRawBufferPointer) -> Bool {
            if prefix != other.prefix { return prefix < other.prefix }
            return BlobScanner.order(values, key.lowerBound, key.count, values, other.key.lowerBound, other.key.count) < 0
        }
    }

    // Only this object's own methods touch these, one call at a time (the class is not
    // Sendable), so the dynamic exclusivity checks Swift would run on every access are skipped.
    @exclusivity(unchecked) private var values = BlobWriter()
    @exclusivity(unchecked) private var entries: [Entry] = []
    private let depth: Int
    private let allowsReservedKeys: Bool

    /// A new, empty coder.
    public convenience init() {
        self.init(depth: 1, allowsReservedKeys: false)
    }

    init(depth: Int, allowsReservedKeys: Bool) {
        self.depth = depth
        self.allowsReservedKeys = allowsReservedKeys
        entries.reserveCapacity(8)
    }

    /// An encoder for the restoration engine itself, which may write reserved keys.
    static func forEngine() -> StateEncoder {
        StateEncoder(depth: 1, allowsReservedKeys: true)
    }

    // MARK: Typed values

    public func encode(_ value: Bool, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    public func encode(_ value: Int, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(Int64(value)) }
    }
    public func encode(_ value: Int8, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(Int64(value)) }
    }
    public func encode(_ value: Int16, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(Int64(value)) }
    }
    public func encode(_ value: Int32, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(Int64(value)) }
    }
    public func encode(_ value: Int64, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    public func encode(_ value: UInt, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(UInt64(value)) }
    }
    public func encode(_ value: UInt8, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(UInt64(value)) }
    }
    public func encode(_ value: UInt16, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(UInt64(value)) }
    }
    public func encode(_ value: UInt32, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(UInt64(value)) }
    }
    public func encode(_ value: UInt64, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    public func encode(_ value: Float, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    public func encode(_ value: Double, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    public func encode(_ value: String, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    /// Encodes bytes. (A `[UInt8]` variable passed to ``encode(_:forKey:)-(Value,_)`` is encoded
    /// as bytes too; this name keeps an array literal such as `[1, 2]` from becoming bytes.)
    public func encodeBytes(_ value: [UInt8], forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(bytes: value) }
    }
    public func encode(_ value: Data, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    public func encode(_ value: Date, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    public func encode(_ value: UUID, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    public func encode(_ value: URL, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }

    /// Encodes an explicit null (``StateDecoder/decodeNil(forKey:)`` is then `true`).
    public func encodeNil(forKey key: String) throws(StateCodingError) {
        try record(key) { $0.writeNull() }
    }

    /// Encodes any `Encodable` value — optionals, arrays, dictionaries with string keys,
    /// Codable structs and enums — in the blob format. `Date`, `UUID`, `URL`, `Data` and
    /// `[UInt8]` keep their own types wherever they appear.
    public func encode<Value: Encodable>(_ value: Value, forKey key: String) throws(StateCodingError) {
        let tree = try StateValueEncoder.encode(value, key: key, depth: depth)
        try record(key) { (writer: inout BlobWriter) throws(StateCodingError) in try writer.write(tree, depth: depth) }
    }

    // MARK: References and nesting

    /// Encodes a reference to another restorable object, by its restoration path (R4).
    public func encodeReference(to path: RestorationPath, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(path) }
    }

    /// Encodes an ordered list of references (a navigation stack's children, for instance).
    public func encodeReferences(to paths: [RestorationPath], forKey key: String) throws(StateCodingError) {
        try record(key) { writer in
            writer.tag(.array)
            writer.appendVarint(UInt64(paths.count))
            for path in paths { writer.write(path) }
        }
    }

    /// Encodes a nested keyed container, filled by `body`.
    public func encodeNested(forKey key: String, _ body: (StateEncoder) throws -> Void) throws {
        try checkKey(key)
        guard depth < DecodingLimits.default.maximumDepth else {
            throw StateCodingError.unencodable(
                key: key, reason: "containers nest deeper than \(DecodingLimits.default.maximumDepth) levels")
        }
        let nested = StateEncoder(depth: depth + 1, allowsReservedKeys: false)
        try body(nested)
        try record(key) { writer in
            writer.tag(.map)
            nested.writeBody(into: &writer)
        }
    }

    // MARK: Result

    /// The keys encoded so far, in the blob's order.
    public var keys: [String] {
        withSortedEntries { order, values in
            order.map { String(decoding: UnsafeRawBufferPointer(rebasing: values[entries[$0].key]), as: UTF8.self) }
        }
    }

    /// The blob: format version, the entries sorted by key, and a CRC-32C.
    public func encodedBlob() throws(StateCodingError) -> [UInt8] {
        let entries = entries
        let blob: [UInt8]? = withSortedEntries { order, values in
            // The exact size, so the blob is one allocation filled by direct copies.
            var size = 1 + Self.varintSize(order.count) + 4
            for index in order { size += entries[index].bytes.count }
            guard size <= DecodingLimits.default.maximumBlobSize else { return nil }
            return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
                var offset = 0
                buffer[offset] = BlobFormat.version
                offset += 1
                offset = Self.putVarint(UInt64(order.count), into: buffer, at: offset)
                for index in order {
                    offset = Self.copy(UnsafeRawBufferPointer(rebasing: values[entries[index].bytes]), into: buffer, at: offset)
                }
                let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<offset]))
                for shift in stride(from: 0, to: 32, by: 8) {
                    buffer[offset] = UInt8(truncatingIfNeeded: crc >> UInt32(shift))
                    offset += 1
                }
                initialized = offset
            }
        }
        guard let blob else {
            throw .unencodable(key: "", reason: "the blob would exceed \(DecodingLimits.default.maximumBlobSize) bytes")
        }
        return blob
    }

    private static func varintSize(_ value: Int) -> Int {
        var value = UInt64(value)
        var size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }

    private static func putVarint(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        var value = value
        var offset = offset
        while value >= 0x80 {
            buffer[offset] = UInt8(truncatingIfNeeded: value) | 0x80
            value >>= 7
            offset += 1
        }
        buffer[offset] = UInt8(value)
        return offset + 1
    }

    private static func copy(_ bytes: UnsafeRawBufferPointer, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int)
        -> Int
    {
        if let source = bytes.baseAddress, let target = buffer.baseAddress, bytes.count > 0 {
            // The size was computed from the same entries: a mismatch is a bug, never input.
            precondition(offset + bytes.count <= buffer.count, "blob size miscomputed")
            UnsafeMutableRawPointer(target + offset).copyMemory(from: source, byteCount: bytes.count)
        }
        return offset + bytes.count
    }

    // MARK: Internals

    /// The format's rule for every key, dictionaries' included: at most 1,024 bytes.
    static func checkKeyLength(_ key: String) throws(StateCodingError) {
        guard key.utf8.count <= maximumKeyLength else { throw KeyProblem.tooLong.error(key) }
    }

    /// The rule for the keys an object names: not empty, and not reserved.
    private func checkKey(_ key: String) throws(StateCodingError) {
        let allowsReservedKeys = allowsReservedKeys
        if let problem = UTF8Text.withBytes(of: key, { Self.keyProblem($0, allowsReservedKeys: allowsReservedKeys) }) {
            throw problem.error(key)
        }
    }

    /// What is wrong with a key an object names, if anything.
    private enum KeyProblem: Error {
        case empty, tooLong, reserved

        func error(_ key: String) -> StateCodingError {
            switch self {
            case .empty: .invalidKey("a key must not be empty")
            case .tooLong: .invalidKey("a key must be at most \(maximumKeyLength) bytes of UTF-8")
            case .reserved: .reservedKey(key)
            }
        }
    }

    @inline(__always)
    private static func keyProblem(_ key: UnsafeRawBufferPointer, allowsReservedKeys: Bool) -> KeyProblem? {
        if key.isEmpty { return .empty }
        if key.count > maximumKeyLength { return .tooLong }
        // Bytes, not String.hasPrefix (which compares by Unicode canonical equivalence); most
        // keys are told apart by their first byte.
        if !allowsReservedKeys && key.count >= reservedKeyPrefixBytes.count && key[0] == UInt8(ascii: "r")
            && reservedKeyPrefixBytes.withUnsafeBytes({ BlobScanner.order(key, 0, $0.count, $0, 0, $0.count) }) == 0
        {
            return .reserved
        }
        return nil
    }

    private static let reservedKeyPrefixBytes = Array(reservedKeyPrefix.utf8)

    /// Checks the key, writes it and the value `write` writes to `values`, and records them.
    @inline(__always)
    private func record(_ key: String, _ write: (inout BlobWriter) throws(StateCodingError) -> Void)
        throws(StateCodingError)
    {
        let start = values.bytes.count
        let allowsReservedKeys = allowsReservedKeys
        let written = UTF8Text.withBytes(of: key) { bytes -> Result<(key: Range<Int>, prefix: UInt64), KeyProblem> in
            if let problem = Self.keyProblem(bytes, allowsReservedKeys: allowsReservedKeys) { return .failure(problem) }
            values.appendLengthPrefixed(bytes)
            var prefix: UInt64 = 0
            if bytes.count >= 8 {
                prefix = UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
            } else {
                for index in 0..<bytes.count { prefix |= UInt64(bytes[index]) << (56 - 8 * UInt64(index)) }
            }
            return .success((values.bytes.count - bytes.count..<values.bytes.count, prefix))
        }
        let stored: (key: Range<Int>, prefix: UInt64)
        switch written {
        case .failure(let problem): throw problem.error(key)
        case .success(let success): stored = success
        }
        do {
            try write(&values)
        } catch {
            values.bytes.removeSubrange(start...)
            throw error
        }
        entries.append(Entry(bytes: start..<values.bytes.count, key: stored.key, prefix: stored.prefix))
    }

    /// Calls `body` with the indices of the entries in key order (the last of equal keys kept)
    /// and the bytes of `values`. The indices live on the stack: no allocation for the usual
    /// few keys.
    private func withSortedEntries<Result>(_ body: (UnsafeBufferPointer<Int>, UnsafeRawBufferPointer) -> Result) -> Result {
        let entries = entries
        return values.bytes.withUnsafeBytes { values in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: max(entries.count, 1)) { order in
                var count = 0
                for index in entries.indices {
                    // Insertion sort: stable, and linear when keys arrive in order.
                    var position = count
                    while position > 0 && entries[index].precedes(entries[order[position - 1]], in: values) {
                        order[position] = order[position - 1]
                        position -= 1
                    }
                    order[position] = index
                    count += 1
                }
                // Equal keys are adjacent, in encoding order: keep the last of each run (sorted,
                // so the previous entry is equal unless it precedes this one).
                var unique = 0
                for slot in 0..<count {
                    if unique > 0 && !entries[order[unique - 1]].precedes(entries[order[slot]], in: values) {
                        order[unique - 1] = order[slot]
                    } else {
                        order[unique] = order[slot]
                        unique += 1
                    }
                }
                return body(UnsafeBufferPointer(rebasing: order[0..<unique]), values)
            }
        }
    }

    /// Whether `a` sorts strictly before `b` by their UTF-8 bytes (memcmp order).
    static func precedes(_ a: String, _ b: String) -> Bool {
        UTF8Text.withBytes(of: a) { x in
            UTF8Text.withBytes(of: b) { y in BlobScanner.order(x, 0, x.count, y, 0, y.count) < 0 }
        }
    }

    private func writeBody(into writer: inout BlobWriter) {
        let entries = entries
        withSortedEntries { order, values in
            writer.appendVarint(UInt64(order.count))
            for index in order {
                writer.append(UnsafeRawBufferPointer(rebasing: values[entries[index].bytes]))
            }
        }
    }
}

@available(*, unavailable, message: "A StateEncoder belongs to one object's encoding")
extension StateEncoder: Sendable {}
