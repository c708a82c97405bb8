#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Reads the state a restorable object encoded with ``StateEncoder``.
///
/// The whole blob is checked when the decoder is made (format version, checksum, structure,
/// UTF-8, limits), so reads by key fail only for the key's own reasons: a missing key
/// (``StateCodingError/keyNotFound(key:)``), another type (``StateCodingError/typeMismatch(key:expected:found:)``)
/// or an integer that does not fit (``StateCodingError/integerOutOfRange(key:type:)``).
///
/// ```swift
/// let coder = try StateDecoder(blob: node.state)
/// let tab = try coder.decode(Int.self, forKey: "selectedTab")
/// let order = try coder.decode(Order.self, forKey: "order")      // any Codable value
/// let editing = try coder.decodeBool(forKey: "isEditing")         // false when absent
/// ```
public struct StateDecoder: Sendable {
    private let reader: BlobReader
    /// Key ranges and value offsets of this container, in ascending key order.
    private let entries: [(key: Range<Int>, value: Int)]
    private let depth: Int

    /// Checks a whole blob and prepares its root container for reading.
    /// - Throws: ``StateCodingError`` for any malformed, damaged, newer or oversized blob.
    public init(blob: [UInt8], limits: DecodingLimits = .default) throws(StateCodingError) {
        var reader = try BlobReader(blob: blob, limits: limits)
        var entries: [(key: Range<Int>, value: Int)] = []
        _ = try reader.readRootContainer(indexing: &entries)
        self.reader = reader
        self.entries = entries
        self.depth = 1
    }

    /// A container whose body (count and entries) starts at `body`; the blob is already checked.
    private init(reader: BlobReader, body: Int, depth: Int) {
        self.reader = reader
        self.depth = depth
        var offset = body
        var entries: [(key: Range<Int>, value: Int)] = []
        // Checked content: these reads cannot fail, and the loops are bounded by the blob.
        if let count = try? reader.readCount(at: &offset, minimumElementSize: 2) {
            entries.reserveCapacity(count)
            for _ in 0..<count {
                guard let key = try? reader.readKeyRange(at: &offset) else { break }
                let value = offset
                guard (try? reader.skipValue(at: &offset, depth: depth)) != nil else { break }
                entries.append((key, value))
            }
        }
        self.entries = entries
    }

    /// The keys of this container, in the blob's (ascending) order.
    public var keys: [String] { entries.map { reader.string($0.key) } }

    /// Whether the container holds a value for `key`.
    public func contains(_ key: String) -> Bool { offset(of: key) != nil }

    /// Whether the value for `key` is an explicit null, or absent.
    public func decodeNil(forKey key: String) -> Bool {
        guard let value = try? value(forKey: key) else { return true }
        return value == .null
    }

    // MARK: Typed values

    public func decode(_: Bool.Type, forKey key: String) throws(StateCodingError) -> Bool {
        let (tag, _) = try tagged(key)
        switch tag {
        case .true: return true
        case .false: return false
        default: return try value(forKey: key).bool(key: key)
        }
    }
    public func decode(_: Int.Type, forKey key: String) throws(StateCodingError) -> Int {
        try integer(Int.self, forKey: key)
    }
    public func decode(_: Int8.Type, forKey key: String) throws(StateCodingError) -> Int8 {
        try integer(Int8.self, forKey: key)
    }
    public func decode(_: Int16.Type, forKey key: String) throws(StateCodingError) -> Int16 {
        try integer(Int16.self, forKey: key)
    }
    public func decode(_: Int32.Type, forKey key: String) throws(StateCodingError) -> Int32 {
        try integer(Int32.self, forKey: key)
    }
    public func decode(_: Int64.Type, forKey key: String) throws(StateCodingError) -> Int64 {
        try integer(Int64.self, forKey: key)
    }
    public func decode(_: UInt.Type, forKey key: String) throws(StateCodingError) -> UInt {
        try integer(UInt.self, forKey: key)
    }
    public func decode(_: UInt8.Type, forKey key: String) throws(StateCodingError) -> UInt8 {
        try integer(UInt8.self, forKey: key)
    }
    public func decode(_: UInt16.Type, forKey key: String) throws(StateCodingError) -> UInt16 {
        try integer(UInt16.self, forKey: key)
    }
    public func decode(_: UInt32.Type, forKey key: String) throws(StateCodingError) -> UInt32 {
        try integer(UInt32.self, forKey: key)
    }
    public func decode(_: UInt64.Type, forKey key: String) throws(StateCodingError) -> UInt64 {
        try integer(UInt64.self, forKey: key)
    }
    public func decode(_: Float.Type, forKey key: String) throws(StateCodingError) -> Float {
        try value(forKey: key).float(key: key)
    }
    public func decode(_: Double.Type, forKey key: String) throws(StateCodingError) -> Double {
        var (tag, body) = try tagged(key)
        guard tag == .double else { return try value(forKey: key).double(key: key) }
        return Double(bitPattern: try reader.readFixed(UInt64.self, at: &body))
    }
    public func decode(_: String.Type, forKey key: String) throws(StateCodingError) -> String {
        var (tag, body) = try tagged(key)
        guard tag == .string else { return try value(forKey: key).string(key: key) }
        return reader.string(try reader.readStringRange(at: &body))
    }
    /// Decodes bytes.
    public func decode(_: [UInt8].Type, forKey key: String) throws(StateCodingError) -> [UInt8] {
        var (tag, body) = try tagged(key)
        guard tag == .bytes else { return try value(forKey: key).bytes(key: key) }
        return try reader.readBytes(at: &body)
    }
    public func decode(_: Data.Type, forKey key: String) throws(StateCodingError) -> Data {
        Data(try decode([UInt8].self, forKey: key))
    }
    public func decode(_: Date.Type, forKey key: String) throws(StateCodingError) -> Date {
        var (tag, body) = try tagged(key)
        guard tag == .date else { return try value(forKey: key).date(key: key) }
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.readFixed(UInt64.self, at: &body)))
    }
    public func decode(_: UUID.Type, forKey key: String) throws(StateCodingError) -> UUID {
        try value(forKey: key).uuid(key: key)
    }
    public func decode(_: URL.Type, forKey key: String) throws(StateCodingError) -> URL {
        try value(forKey: key).url(key: key)
    }

    /// Decodes any `Decodable` value encoded with ``StateEncoder/encode(_:forKey:)-(Value,_)``;
    /// an `Optional` type decodes a missing key or a null as `nil`.
    public func decode<Value: Decodable>(_ type: Value.Type, forKey key: String) throws(StateCodingError) -> Value {
        guard let offset = offset(of: key) else {
            // Only an optional type accepts a missing key.
            guard let missing = try? StateValueDecoder.decode(type, from: .null, key: key) else {
                throw .keyNotFound(key: key)
            }
            return missing
        }
        return try StateValueDecoder.decode(type, from: try reader.value(at: offset, depth: depth), key: key)
    }

    /// Decodes a value if the key is present and not null; `nil` otherwise.
    public func decodeIfPresent<Value: Decodable>(_ type: Value.Type, forKey key: String) throws(StateCodingError)
        -> Value?
    {
        guard !decodeNil(forKey: key) else { return nil }
        return try decode(type, forKey: key)
    }

    // MARK: The UIKit habit: defaults when absent

    /// The bool for `key`, or `false` when absent (like `NSCoder.decodeBool(forKey:)`).
    public func decodeBool(forKey key: String) throws(StateCodingError) -> Bool {
        contains(key) ? try decode(Bool.self, forKey: key) : false
    }
    /// The integer for `key`, or 0 when absent (like `NSCoder.decodeInteger(forKey:)`).
    public func decodeInteger(forKey key: String) throws(StateCodingError) -> Int {
        contains(key) ? try decode(Int.self, forKey: key) : 0
    }
    /// The double for `key`, or 0 when absent (like `NSCoder.decodeDouble(forKey:)`).
    public func decodeDouble(forKey key: String) throws(StateCodingError) -> Double {
        contains(key) ? try decode(Double.self, forKey: key) : 0
    }
    /// The float for `key`, or 0 when absent (like `NSCoder.decodeFloat(forKey:)`).
    public func decodeFloat(forKey key: String) throws(StateCodingError) -> Float {
        contains(key) ? try decode(Float.self, forKey: key) : 0
    }

    // MARK: References and nesting

    /// The restoration path of a referenced object (R4).
    public func decodeReference(forKey key: String) throws(StateCodingError) -> RestorationPath {
        try value(forKey: key).reference(key: key)
    }

    /// An ordered list of references.
    public func decodeReferences(forKey key: String) throws(StateCodingError) -> [RestorationPath] {
        let value = try value(forKey: key)
        guard case .array(let items) = value else {
            throw .typeMismatch(key: key, expected: "array of references", found: value.typeName)
        }
        var paths: [RestorationPath] = []
        for item in items { paths.append(try item.reference(key: key)) }
        return paths
    }

    /// A nested keyed container.
    public func decodeNested(forKey key: String) throws(StateCodingError) -> StateDecoder {
        guard let offset = offset(of: key) else { throw .keyNotFound(key: key) }
        var cursor = offset
        let tag = try reader.readTag(at: &cursor)
        guard tag == .map else { throw .typeMismatch(key: key, expected: "container", found: tag.name) }
        return StateDecoder(reader: reader, body: cursor, depth: depth + 1)
    }

    /// The value for `key` as a typed tree.
    public func value(forKey key: String) throws(StateCodingError) -> StateValue {
        guard let offset = offset(of: key) else { throw .keyNotFound(key: key) }
        return try reader.value(at: offset, depth: depth)
    }

    // MARK: Lookup

    /// The tag of the value for `key`, and the offset of what follows the tag. The typed
    /// reads above take the common case (the stored type is the one asked for) from there,
    /// and leave every other case (conversions, mismatches) to ``StateValue``'s.
    @inline(__always)
    private func tagged(_ key: String) throws(StateCodingError) -> (tag: BlobFormat.Tag, body: Int) {
        guard let offset = offset(of: key) else { throw .keyNotFound(key: key) }
        var body = offset
        let tag = try reader.readTag(at: &body)
        return (tag, body)
    }

    private func integer<T: FixedWidthInteger>(_: T.Type, forKey key: String) throws(StateCodingError) -> T {
        var (tag, body) = try tagged(key)
        let exact: T?
        switch tag {
        case .int: exact = T(exactly: BlobReader.unzigzag(try reader.readVarint(at: &body)))
        case .uint: exact = T(exactly: try reader.readVarint(at: &body))
        default: return try value(forKey: key).integer(T.self, key: key)
        }
        guard let exact else { throw .integerOutOfRange(key: key, type: "\(T.self)") }
        return exact
    }

    private func offset(of key: String) -> Int? {
        var key = key
        return key.withUTF8 { wanted -> Int? in
            reader.blob.withUnsafeBytes { blob -> Int? in
                let wanted = UnsafeRawBufferPointer(wanted)
                if entries.count <= 16 {
                    // Few keys: compare lengths first, then bytes.
                    for entry in entries where entry.key.count == wanted.count {
                        if BlobReader.compare(UnsafeRawBufferPointer(rebasing: blob[entry.key]), wanted) == 0 {
                            return entry.value
                        }
                    }
                    return nil
                }
                // Entries are sorted: binary search on the key bytes.
                var low = 0
                var high = entries.count
                while low < high {
                    let middle = (low + high) / 2
                    let order = BlobReader.compare(UnsafeRawBufferPointer(rebasing: blob[entries[middle].key]), wanted)
                    if order == 0 { return entries[middle].value }
                    if order < 0 { low = middle + 1 } else { high = middle }
                }
                return nil
            }
        }
    }
}
