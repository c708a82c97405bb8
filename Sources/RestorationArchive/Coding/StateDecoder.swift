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
    /// This container's entries, in ascending key order.
    private let entries: BlobEntryIndex
    private let depth: Int

    /// Checks a whole blob and prepares its root container for reading.
    /// - Throws: ``StateCodingError`` for any malformed, damaged, newer or oversized blob.
    public init(blob: [UInt8], limits: DecodingLimits = .default) throws(StateCodingError) {
        var reader = try BlobReader(blob: blob, limits: limits)
        var entries = BlobEntryIndex()
        try reader.readRootContainer(indexing: &entries)
        self.reader = reader
        self.entries = entries
        self.depth = 1
    }

    /// A container whose body (count and entries) starts at `body`; the blob is already checked.
    private init(reader: BlobReader, body: Int, depth: Int) {
        self.reader = reader
        self.depth = depth
        self.entries = reader.withScanner { $0.entries(ofBody: body, depth: depth) }
    }

    /// The keys of this container, in the blob's (ascending) order.
    public var keys: [String] { entries.all.map { reader.string($0.keyRange) } }

    /// Whether the container holds a value for `key`.
    public func contains(_ key: String) -> Bool { offset(of: key) != nil }

    /// Whether the value for `key` is an explicit null, or absent.
    public func decodeNil(forKey key: String) -> Bool {
        guard let value = try? value(forKey: key) else { return true }
        return value == .null
    }

    // MARK: Typed values

    // Each typed read throws ``StateCodingError/keyNotFound(key:)`` when the key is absent and
    // ``StateCodingError/typeMismatch(key:expected:found:)`` when another type is stored.

    /// The bool for `key`.
    public func decode(_: Bool.Type, forKey key: String) throws(StateCodingError) -> Bool {
        try bool(quickValue(forKey: key), key)
    }
    /// The integer for `key` as an `Int`; ``StateCodingError/integerOutOfRange(key:type:)`` when
    /// the stored integer does not fit.
    public func decode(_: Int.Type, forKey key: String) throws(StateCodingError) -> Int {
        try integer(Int.self, forKey: key)
    }
    /// The integer for `key` as an `Int8`; ``StateCodingError/integerOutOfRange(key:type:)`` when
    /// the stored integer does not fit.
    public func decode(_: Int8.Type, forKey key: String) throws(StateCodingError) -> Int8 {
        try integer(Int8.self, forKey: key)
    }
    /// The integer for `key` as an `Int16`; ``StateCodingError/integerOutOfRange(key:type:)`` when
    /// the stored integer does not fit.
    public func decode(_: Int16.Type, forKey key: String) throws(StateCodingError) -> Int16 {
        try integer(Int16.self, forKey: key)
    }
    /// The integer for `key` as an `Int32`; ``StateCodingError/integerOutOfRange(key:type:)`` when
    /// the stored integer does not fit.
    public func decode(_: Int32.Type, forKey key: String) throws(StateCodingError) -> Int32 {
        try integer(Int32.self, forKey: key)
    }
    /// The integer for `key` as an `Int64`; ``StateCodingError/integerOutOfRange(key:type:)`` when
    /// the stored integer does not fit.
    public func decode(_: Int64.Type, forKey key: String) throws(StateCodingError) -> Int64 {
        try integer(Int64.self, forKey: key)
    }
    /// The integer for `key` as a `UInt`; ``StateCodingError/integerOutOfRange(key:type:)`` when
    /// the stored integer does not fit.
    public func decode(_: UInt.Type, forKey key: String) throws(StateCodingError) -> UInt {
        try integer(UInt.self, forKey: key)
    }
    /// The integer for `key` as a `UInt8`; ``StateCodingError/integerOutOfRange(key:type:)`` when
    /// the stored integer does not fit.
    public func decode(_: UInt8.Type, forKey key: String) throws(StateCodingError) -> UInt8 {
        try integer(UInt8.self, forKey: key)
    }
    /// The integer for `key` as a `UInt16`; ``StateCodingError/integerOutOfRange(key:type:)`` when
    /// the stored integer does not fit.
    public func decode(_: UInt16.Type, forKey key: String) throws(StateCodingError) -> UInt16 {
        try integer(UInt16.self, forKey: key)
    }
    /// The integer for `key` as a `UInt32`; ``StateCodingError/integerOutOfRange(key:type:)`` when
    /// the stored integer does not fit.
    public func decode(_: UInt32.Type, forKey key: String) throws(StateCodingError) -> UInt32 {
        try integer(UInt32.self, forKey: key)
    }
    /// The integer for `key` as a `UInt64`; ``StateCodingError/integerOutOfRange(key:type:)`` when
    /// the stored integer does not fit.
    public func decode(_: UInt64.Type, forKey key: String) throws(StateCodingError) -> UInt64 {
        try integer(UInt64.self, forKey: key)
    }
    /// The float for `key`: a stored float, or a stored double that a float holds exactly.
    public func decode(_: Float.Type, forKey key: String) throws(StateCodingError) -> Float {
        try float(quickValue(forKey: key), key)
    }
    /// The double for `key`: a stored double, or a stored float (widened exactly).
    public func decode(_: Double.Type, forKey key: String) throws(StateCodingError) -> Double {
        try double(quickValue(forKey: key), key)
    }
    /// The string for `key`.
    public func decode(_: String.Type, forKey key: String) throws(StateCodingError) -> String {
        let stored = quickValue(forKey: key)
        if stored.is(.string) { return reader.string(stored.range) }
        return try converted(key) { (value) throws(StateCodingError) in try value.string(key: key) }
    }
    /// Decodes bytes.
    public func decode(_: [UInt8].Type, forKey key: String) throws(StateCodingError) -> [UInt8] {
        let stored = quickValue(forKey: key)
        if stored.is(.bytes) { return reader.bytes(stored.range) }
        return try converted(key) { (value) throws(StateCodingError) in try value.bytes(key: key) }
    }
    /// The bytes for `key`, as `Data`.
    public func decode(_: Data.Type, forKey key: String) throws(StateCodingError) -> Data {
        Data(try decode([UInt8].self, forKey: key))
    }
    /// The date for `key`.
    public func decode(_: Date.Type, forKey key: String) throws(StateCodingError) -> Date {
        let stored = quickValue(forKey: key)
        if stored.is(.date) { return BlobScanner.date(bits: stored.payload) }
        return try converted(key) { (value) throws(StateCodingError) in try value.date(key: key) }
    }
    /// The UUID for `key`.
    public func decode(_: UUID.Type, forKey key: String) throws(StateCodingError) -> UUID {
        try value(forKey: key).uuid(key: key)
    }
    /// The URL for `key`.
    public func decode(_: URL.Type, forKey key: String) throws(StateCodingError) -> URL {
        try value(forKey: key).url(key: key)
    }

    /// Decodes any `Decodable` value encoded with ``StateEncoder/encode(_:forKey:)-(Value,_)``;
    /// an `Optional` type decodes a missing key or a null as `nil`. An error its `init(from:)`
    /// throws names the key path it met (`order.items[2].size`): a missing key or null as
    /// such, any other as ``StateCodingError/undecodable(key:reason:)``.
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

    // One lookup each: a missing key is the default, anything else is read as the typed read
    // of the same type reads it.

    /// The bool for `key`, or `false` when absent (like `NSCoder.decodeBool(forKey:)`).
    public func decodeBool(forKey key: String) throws(StateCodingError) -> Bool {
        let stored = quickValue(forKey: key)
        return stored.isMissing ? false : try bool(stored, key)
    }
    /// The integer for `key`, or 0 when absent (like `NSCoder.decodeInteger(forKey:)`).
    public func decodeInteger(forKey key: String) throws(StateCodingError) -> Int {
        let stored = quickValue(forKey: key)
        return stored.isMissing ? 0 : try integer(Int.self, stored, key)
    }
    /// The double for `key`, or 0 when absent (like `NSCoder.decodeDouble(forKey:)`).
    public func decodeDouble(forKey key: String) throws(StateCodingError) -> Double {
        let stored = quickValue(forKey: key)
        return stored.isMissing ? 0 : try double(stored, key)
    }
    /// The float for `key`, or 0 when absent (like `NSCoder.decodeFloat(forKey:)`).
    public func decodeFloat(forKey key: String) throws(StateCodingError) -> Float {
        let stored = quickValue(forKey: key)
        return stored.isMissing ? 0 : try float(stored, key)
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
        let tag = try reader.withScanner { (scanner) throws(StateCodingError) in try scanner.readTag(at: &cursor) }
        guard tag == .map else { throw .typeMismatch(key: key, expected: "container", found: tag.name) }
        return StateDecoder(reader: reader, body: cursor, depth: depth + 1)
    }

    /// The value for `key` as a typed tree.
    public func value(forKey key: String) throws(StateCodingError) -> StateValue {
        guard let offset = offset(of: key) else { throw .keyNotFound(key: key) }
        return try reader.value(at: offset, depth: depth)
    }

    // MARK: Lookup

    /// The value for `key` as the quick read finds it (``QuickValue``). The typed reads above
    /// take their common case (the stored type is the one asked for) from it; every other case
    /// (a missing key, a conversion, a mismatch) goes through ``value(forKey:)`` and
    /// ``StateValue``'s conversions, which name the error.
    ///
    /// One function for every typed read, never inlined into them, so that the code a decode
    /// runs stays short: when other work has run in between (as at launch) that code is cold,
    /// and fetching it costs more than the call (docs/benchmark-history.md, "Coder").
    @inline(never)
    private func quickValue(forKey key: String) -> QuickValue {
        let end = reader.end
        return reader.blob.withUnsafeBufferPointer { bytes in
            // The value is read outside the key's closure, which `withBytes` calls from two
            // places (so the compiler keeps it out of line): here it is inlined.
            let found = UTF8Text.withBytes(of: key) { entries.value(of: $0, in: UnsafeRawBufferPointer(bytes)) }
            guard let offset = found else { return .missing }
            return QuickValue(reading: bytes, at: offset, end: end)
        }
    }

    /// The typed reads' other cases — a missing key, a conversion (an `Int` stored, a `Double`
    /// asked for), a mismatch — through ``StateValue``'s conversions, which name the error. Out
    /// of line: the common case's code stays short, which counts when it is cold (at launch).
    @inline(never)
    private func converted<Value>(
        _ key: String, _ conversion: (StateValue) throws(StateCodingError) -> Value
    ) throws(StateCodingError) -> Value {
        try conversion(try value(forKey: key))
    }

    // The typed reads of a value found by `quickValue(forKey:)`: the stored type's value, or
    // the conversion of another (which names the error).

    private func bool(_ stored: QuickValue, _ key: String) throws(StateCodingError) -> Bool {
        if stored.is(.true) { return true }
        if stored.is(.false) { return false }
        return try converted(key) { (value) throws(StateCodingError) in try value.bool(key: key) }
    }

    private func double(_ stored: QuickValue, _ key: String) throws(StateCodingError) -> Double {
        if stored.is(.double) { return Double(bitPattern: stored.payload) }
        return try converted(key) { (value) throws(StateCodingError) in try value.double(key: key) }
    }

    private func float(_ stored: QuickValue, _ key: String) throws(StateCodingError) -> Float {
        if stored.is(.float) { return Float(bitPattern: UInt32(truncatingIfNeeded: stored.payload)) }
        return try converted(key) { (value) throws(StateCodingError) in try value.float(key: key) }
    }

    private func integer<T: FixedWidthInteger>(_ type: T.Type, forKey key: String) throws(StateCodingError) -> T {
        try integer(type, quickValue(forKey: key), key)
    }

    private func integer<T: FixedWidthInteger>(_: T.Type, _ stored: QuickValue, _ key: String)
        throws(StateCodingError) -> T
    {
        let exact: T?
        if stored.is(.int) {
            exact = T(exactly: BlobScanner.unzigzag(stored.payload))
        } else if stored.is(.uint) {
            exact = T(exactly: stored.payload)
        } else {
            return try converted(key) { (value) throws(StateCodingError) in try value.integer(T.self, key: key) }
        }
        guard let exact else { throw .integerOutOfRange(key: key, type: "\(T.self)") }
        return exact
    }

    /// Where the value for `key` starts, if the container holds one.
    @inline(never)
    private func offset(of key: String) -> Int? {
        reader.blob.withUnsafeBytes { blob in
            UTF8Text.withBytes(of: key) { entries.value(of: $0, in: blob) }
        }
    }
}
