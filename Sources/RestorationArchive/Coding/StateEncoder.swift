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
/// Encoding a key twice keeps the last value, as `NSCoder` does. Keys are told apart by their
/// bytes, so a key that is one encoded already in another Unicode form (composed or decomposed
/// characters) is refused: `restorectl`, migrations and `Codable` values read a container as a
/// dictionary of strings, which could hold only one of the two.
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

    /// An entry in the blob's order, while sorting: its bytes in `values` (the key's length,
    /// the key, the value), its key, and the key's first 8 bytes as a number.
    private struct SortedEntry {
        /// The key's first 8 bytes, big-endian and zero-padded: comparing two prefixes orders
        /// most keys without looking at their bytes.
        var prefix: UInt64
        var key: BlobEntry
        var bytes: Range<Int>

        init(key: BlobEntry, bytes: Range<Int>, in values: UnsafeRawBufferPointer) {
            self.key = key
            self.bytes = bytes
            if key.keyLength >= 8 {
                prefix = UInt64(bigEndian: values.loadUnaligned(fromByteOffset: key.key, as: UInt64.self))
            } else {
                prefix = 0
                for index in 0..<key.keyLength {
                    prefix |= UInt64(values[key.key + index]) << (56 - 8 * UInt64(index))
                }
            }
        }

        /// Strictly before `other` in the blob's (memcmp) order; `values` holds both keys.
        @inline(__always)
        func precedes(_ other: SortedEntry, in values: UnsafeRawBufferPointer) -> Bool {
            if prefix != other.prefix { return prefix < other.prefix }
            return BlobScanner.order(values, key.key, key.keyLength, values, other.key.key, other.key.keyLength) < 0
        }
    }

    /// Every entry in encoding order, each its key's length, its key and its value. An
    /// entry ends where the next one starts: a value that fails part-way is taken back whole.
    ///
    /// Only this object's own methods touch `values` and `entries`, one call at a time (the
    /// class is not Sendable), so the dynamic exclusivity checks Swift would run on every
    /// access are skipped.
    @exclusivity(unchecked) private var values = BlobWriter()
    /// Where each entry's key is in `values`, in encoding order.
    @exclusivity(unchecked) private var entries = BlobEntryIndex()
    /// The keys encoded so far that are not ASCII, each once: only those can be another key
    /// in another Unicode form. Empty for most objects.
    @exclusivity(unchecked) private var otherKeys: Set<String> = []
    private let depth: Int
    private let allowsReservedKeys: Bool

    /// A new, empty coder.
    public convenience init() {
        self.init(depth: 1, allowsReservedKeys: false)
    }

    init(depth: Int, allowsReservedKeys: Bool) {
        self.depth = depth
        self.allowsReservedKeys = allowsReservedKeys
    }

    /// An encoder for the restoration engine itself, which may write reserved keys.
    static func forEngine() -> StateEncoder {
        StateEncoder(depth: 1, allowsReservedKeys: true)
    }

    // MARK: Typed values

    // Each write throws ``StateCodingError/invalidKey(_:)`` for an empty or over-long key, or
    // one encoded already in another Unicode form, and ``StateCodingError/reservedKey(_:)`` for
    // a key starting with ``reservedKeyPrefix``.

    /// Encodes `value` for `key` as a bool.
    public func encode(_ value: Bool, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    /// Encodes `value` for `key` as an integer.
    public func encode(_ value: Int, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(Int64(value)) }
    }
    /// Encodes `value` for `key` as an integer.
    public func encode(_ value: Int8, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(Int64(value)) }
    }
    /// Encodes `value` for `key` as an integer.
    public func encode(_ value: Int16, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(Int64(value)) }
    }
    /// Encodes `value` for `key` as an integer.
    public func encode(_ value: Int32, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(Int64(value)) }
    }
    /// Encodes `value` for `key` as an integer.
    public func encode(_ value: Int64, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    /// Encodes `value` for `key` as an integer.
    public func encode(_ value: UInt, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(UInt64(value)) }
    }
    /// Encodes `value` for `key` as an integer.
    public func encode(_ value: UInt8, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(UInt64(value)) }
    }
    /// Encodes `value` for `key` as an integer.
    public func encode(_ value: UInt16, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(UInt64(value)) }
    }
    /// Encodes `value` for `key` as an integer.
    public func encode(_ value: UInt32, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(UInt64(value)) }
    }
    /// Encodes `value` for `key` as an integer.
    public func encode(_ value: UInt64, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    /// Encodes `value` for `key` as a float.
    public func encode(_ value: Float, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    /// Encodes `value` for `key` as a double.
    public func encode(_ value: Double, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    /// Encodes `value` for `key` as a string.
    public func encode(_ value: String, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    /// Encodes bytes. (A `[UInt8]` variable passed to ``encode(_:forKey:)-(Value,_)`` is encoded
    /// as bytes too; this name keeps an array literal such as `[1, 2]` from becoming bytes.)
    public func encodeBytes(_ value: [UInt8], forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(bytes: value) }
    }
    /// Encodes `value` for `key` as bytes.
    public func encode(_ value: Data, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    /// Encodes `value` for `key` as a date (its `timeIntervalSinceReferenceDate`, exactly).
    public func encode(_ value: Date, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    /// Encodes `value` for `key` as a UUID.
    public func encode(_ value: UUID, forKey key: String) throws(StateCodingError) {
        try record(key) { $0.write(value) }
    }
    /// Encodes `value` for `key` as a URL.
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
    ///
    /// A value whose containers nest deeper than ``DecodingLimits/maximumDepth``'s default,
    /// or that is that many values deep through single-value containers (a value inside
    /// itself), is refused as ``StateCodingError/unencodable(key:reason:)``, as is a value whose
    /// `encode(to:)` throws (an `EncodingError` by the key path it met and the refused value's
    /// type, never by the value).
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
        try record(key) { (writer: inout BlobWriter) throws(StateCodingError) in
            try writer.startArray(count: paths.count)
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
        try record(key) { (writer: inout BlobWriter) throws(StateCodingError) in
            writer.tag(.map)
            try nested.writeBody(into: &writer)
        }
    }

    // MARK: Result

    /// The keys encoded so far, in the blob's order.
    public var keys: [String] {
        withSortedEntries { sorted, values in
            sorted.map { String(decoding: UnsafeRawBufferPointer(rebasing: values[$0.key.keyRange]), as: UTF8.self) }
        }
    }

    /// The blob: format version, the entries sorted by key, and a CRC-32C.
    public func encodedBlob() throws(StateCodingError) -> [UInt8] {
        try checkKeyCount()
        let blob: [UInt8]? = withSortedEntries { sorted, values in
            // The exact size. The blob is put together in temporary memory (on the stack when
            // it is small) and copied into its array: `[UInt8](unsafeUninitializedCapacity:)`
            // allocates through the standard library's unspecialized array buffer, which looks
            // up the storage class's generic metadata at every call (about 280 instructions an
            // encode, and 5% of its time), where an array made from a buffer is specialized here.
            var size = 1 + BlobWriter.varintSize(sorted.count) + 4
            for entry in sorted { size += entry.bytes.count }
            guard size <= DecodingLimits.default.maximumBlobSize else { return nil }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { buffer in
                var offset = 0
                buffer[offset] = BlobFormat.version
                offset += 1
                offset = Self.putVarint(UInt64(sorted.count), into: buffer, at: offset)
                for entry in sorted {
                    offset = Self.copy(UnsafeRawBufferPointer(rebasing: values[entry.bytes]), into: buffer, at: offset)
                }
                let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<offset]))
                for shift in stride(from: 0, to: 32, by: 8) {
                    buffer[offset] = UInt8(truncatingIfNeeded: crc >> UInt32(shift))
                    offset += 1
                }
                precondition(offset == size, "blob size miscomputed")
                return [UInt8](UnsafeBufferPointer(buffer))
            }
        }
        guard let blob else {
            throw .unencodable(key: "", reason: "the blob would exceed \(DecodingLimits.default.maximumBlobSize) bytes")
        }
        return blob
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
        case empty, tooLong, reserved, anotherForm

        func error(_ key: String) -> StateCodingError {
            switch self {
            case .empty: .invalidKey("a key must not be empty")
            case .tooLong: .invalidKey("a key must be at most \(maximumKeyLength) bytes of UTF-8")
            case .reserved: .reservedKey(key)
            case .anotherForm:
                .invalidKey(
                    "'\(key)' is a key of this container already, in another Unicode form (composed or decomposed characters)")
            }
        }
    }

    @inline(__always)
    private static func keyProblem(_ key: UnsafeRawBufferPointer, allowsReservedKeys: Bool) -> KeyProblem? {
        if key.isEmpty { return .empty }
        if key.count > maximumKeyLength { return .tooLong }
        // Bytes, not String.hasPrefix (which compares by Unicode canonical equivalence): the
        // prefix's 12 bytes as two words.
        if !allowsReservedKeys && key.count >= 12
            && UInt64(littleEndian: key.loadUnaligned(as: UInt64.self)) == reservedKeyHead
            && UInt32(littleEndian: key.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) == reservedKeyTail
        {
            return .reserved
        }
        return nil
    }

    /// ``reservedKeyPrefix``, "restoration.", as its first 8 bytes and its last 4, each read
    /// little-endian ("restorat" and "ion."; a test pins them to the string).
    static let reservedKeyHead: UInt64 = 0x7461_726f_7473_6572
    static let reservedKeyTail: UInt32 = 0x2e6e_6f69

    /// Checks the key, writes it and the value `write` writes to `values`, and records them.
    @inline(__always)
    private func record(_ key: String, _ write: (inout BlobWriter) throws(StateCodingError) -> Void)
        throws(StateCodingError)
    {
        let start = values.count
        let allowsReservedKeys = allowsReservedKeys
        var notedOtherKey = false
        let written = UTF8Text.withBytes(of: key) { bytes -> Result<BlobEntry, KeyProblem> in
            if let problem = Self.keyProblem(bytes, allowsReservedKeys: allowsReservedKeys) { return .failure(problem) }
            if !UTF8Text.isASCII(bytes) {
                switch noteOtherKey(key, bytes) {
                case .anotherForm: return .failure(.anotherForm)
                case .noted: notedOtherKey = true
                case .known: break
                }
            }
            values.appendLengthPrefixed(bytes)
            return .success(BlobEntry(key: values.count - bytes.count, keyLength: bytes.count))
        }
        let entry: BlobEntry
        switch written {
        case .failure(let problem): throw problem.error(key)
        case .success(let success): entry = success
        }
        do {
            try write(&values)
        } catch {
            values.truncate(to: start)
            if notedOtherKey { otherKeys.remove(key) }
            // A limit the writer met somewhere in the value: named by the key it was for.
            throw error.under(key)
        }
        entries.append(entry)
    }

    /// What ``noteOtherKey(_:_:)`` found.
    private enum OtherKey { case noted, known, anotherForm }

    /// Checks a key that is not ASCII (its UTF-8 `bytes`) against the others encoded: the
    /// same `String` in other bytes is another Unicode form of one (composed or decomposed
    /// characters), refused. The blob would hold both, since keys are told apart by their
    /// bytes, but a ``StateValue`` container (a dictionary: what `restorectl`, migrations and
    /// `Codable` values read) could hold only one. A new key is noted. Out of line: most keys
    /// are ASCII and never come here.
    @inline(never)
    private func noteOtherKey(_ key: String, _ bytes: UnsafeRawBufferPointer) -> OtherKey {
        // A set finds a key equal as strings (its hash is the same for every form).
        if let known = otherKeys.firstIndex(of: key) {
            return Self.hasSameBytes(otherKeys[known], bytes: bytes) ? .known : .anotherForm
        }
        otherKeys.insert(key)
        return .noted
    }

    private static func hasSameBytes(_ key: String, bytes: UnsafeRawBufferPointer) -> Bool {
        UTF8Text.withBytes(of: key) { $0.hasSameBytes(as: bytes) }
    }

    /// Calls `body` with the entries in key order (the last of equal keys kept) and the bytes
    /// of `values`. The sorted entries live on the stack: no allocation for the usual few keys.
    private func withSortedEntries<Result>(
        _ body: (UnsafeBufferPointer<SortedEntry>, UnsafeRawBufferPointer) -> Result
    ) -> Result {
        let entries = entries
        return values.withUnsafeBytes { values in
            withUnsafeTemporaryAllocation(of: SortedEntry.self, capacity: max(entries.count, 1)) { sorted in
                // An entry's bytes start at its key's length and end where the next one starts.
                func start(_ index: Int) -> Int {
                    guard index < entries.count else { return values.count }
                    return entries[index].key - BlobWriter.varintSize(entries[index].keyLength)
                }
                let count = entries.count
                if count <= Self.insertionSortLimit {
                    for index in 0..<count {
                        let entry = SortedEntry(key: entries[index], bytes: start(index)..<start(index + 1), in: values)
                        // Insertion sort: stable, and linear when keys arrive in order.
                        var position = index
                        while position > 0 && entry.precedes(sorted[position - 1], in: values) {
                            sorted[position] = sorted[position - 1]
                            position -= 1
                        }
                        sorted[position] = entry  // SortedEntry is trivial: no deinitialization needed
                    }
                } else {
                    // Many keys, perhaps in no order (a dictionary's, say): insertion sort would
                    // take quadratic time (0.84 s for 40,000 keys in descending order). Equal
                    // keys stay in encoding order, which is the order of their bytes in `values`.
                    for index in 0..<count {
                        sorted[index] = SortedEntry(key: entries[index], bytes: start(index)..<start(index + 1), in: values)
                    }
                    var all = UnsafeMutableBufferPointer(rebasing: sorted[0..<count])
                    all.sort { a, b in
                        a.precedes(b, in: values) || (!b.precedes(a, in: values) && a.bytes.lowerBound < b.bytes.lowerBound)
                    }
                }
                // Equal keys are adjacent, in encoding order: keep the last of each run (sorted,
                // so the previous entry is equal unless it precedes this one).
                var unique = 0
                for slot in 0..<count {
                    if unique > 0 && !sorted[unique - 1].precedes(sorted[slot], in: values) {
                        sorted[unique - 1] = sorted[slot]
                    } else {
                        sorted[unique] = sorted[slot]
                        unique += 1
                    }
                }
                return body(UnsafeBufferPointer(rebasing: sorted[0..<unique]), values)
            }
        }
    }

    /// Containers of at most this many keys are sorted by insertion: no call, and linear for
    /// keys that arrive in order, as most objects' few keys do.
    private static let insertionSortLimit = 32

    /// Whether `a` sorts strictly before `b` by their UTF-8 bytes (memcmp order).
    static func precedes(_ a: String, _ b: String) -> Bool {
        UTF8Text.withBytes(of: a) { x in
            UTF8Text.withBytes(of: b) { y in BlobScanner.order(x, 0, x.count, y, 0, y.count) < 0 }
        }
    }

    /// Refuses more keys than the default limits read. The keys encoded twice count once:
    /// counted only when the entries are more than the limit, which few containers near.
    private func checkKeyCount() throws(StateCodingError) {
        guard entries.count > DecodingLimits.default.maximumElementCount else { return }
        try BlobWriter.checkCount(withSortedEntries { sorted, _ in sorted.count })
    }

    private func writeBody(into writer: inout BlobWriter) throws(StateCodingError) {
        try checkKeyCount()
        withSortedEntries { sorted, values in
            writer.appendVarint(UInt64(sorted.count))
            for entry in sorted {
                writer.append(UnsafeRawBufferPointer(rebasing: values[entry.bytes]))
            }
        }
    }
}

@available(*, unavailable, message: "A StateEncoder belongs to one object's encoding")
extension StateEncoder: Sendable {}
