/// An app-level value written into an archive's header when saving, such as
/// `"MyAppVersion": .string("11.0")` (seed 002's `MyAppVersion`).
///
/// The restore gate sees these values and may refuse an archive because of them.
public enum HeaderValue: Hashable, Sendable {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
}

/// The header values an app writes, by key.
public typealias HeaderValues = [String: HeaderValue]

extension HeaderValue {
    /// The longest key accepted, in UTF-8 bytes.
    public static let maximumKeyLength = 256
    /// The largest encoded size of all of a header's app values together, in bytes.
    public static let maximumEncodedSize = 1 << 20

    private enum Tag: UInt8 {
        case bool = 1, int = 2, double = 3, string = 4, bytes = 5
    }

    /// Encodes values deterministically: entries sorted by the UTF-8 bytes of their key;
    /// each entry is `key length (u32 LE) · key · tag (u8) · payload`, where the payload is
    /// one byte (bool), eight bytes LE (int, double's bit pattern) or `length (u32 LE) · bytes`.
    static func encode(_ values: HeaderValues) throws(ArchiveStoreError) -> [UInt8] {
        var out: [UInt8] = []
        out.append(1)  // encoding version
        appendUInt32(UInt32(values.count), to: &out)
        let entries = values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        for (key, value) in entries {
            guard !key.isEmpty, key.utf8.count <= maximumKeyLength else {
                throw .invalidHeaderValue("a header key must be 1 to \(maximumKeyLength) bytes of UTF-8")
            }
            appendBytes(Array(key.utf8), to: &out)
            switch value {
            case .bool(let value):
                out.append(Tag.bool.rawValue)
                out.append(value ? 1 : 0)
            case .int(let value):
                out.append(Tag.int.rawValue)
                appendUInt64(UInt64(bitPattern: value), to: &out)
            case .double(let value):
                out.append(Tag.double.rawValue)
                appendUInt64(value.bitPattern, to: &out)
            case .string(let value):
                out.append(Tag.string.rawValue)
                appendBytes(Array(value.utf8), to: &out)
            case .bytes(let value):
                out.append(Tag.bytes.rawValue)
                appendBytes(value, to: &out)
            }
            guard out.count <= maximumEncodedSize else {
                throw .invalidHeaderValue("the header's app values exceed \(maximumEncodedSize) bytes")
            }
        }
        return out
    }

    /// Decodes what ``encode(_:)`` wrote. Any other input is `nil`: never a crash, never
    /// an allocation larger than the input.
    static func decode(_ bytes: [UInt8]) -> HeaderValues? {
        var reader = ByteReader(bytes)
        guard reader.byte() == 1, let count = reader.uint32(), Int(count) <= bytes.count else { return nil }
        var values: HeaderValues = [:]
        var previousKey: [UInt8]?
        for _ in 0..<count {
            guard let keyBytes = reader.lengthPrefixed(), let key = String(validating: keyBytes, as: UTF8.self),
                !key.isEmpty
            else { return nil }
            // Strictly increasing keys: the encoding of a set of values is unique.
            if let previousKey, !previousKey.lexicographicallyPrecedes(keyBytes) { return nil }
            previousKey = keyBytes
            guard let tag = reader.byte().flatMap(Tag.init(rawValue:)) else { return nil }
            switch tag {
            case .bool:
                guard let byte = reader.byte(), byte <= 1 else { return nil }
                values[key] = .bool(byte == 1)
            case .int:
                guard let word = reader.uint64() else { return nil }
                values[key] = .int(Int64(bitPattern: word))
            case .double:
                guard let word = reader.uint64() else { return nil }
                values[key] = .double(Double(bitPattern: word))
            case .string:
                guard let text = reader.lengthPrefixed(), let string = String(validating: text, as: UTF8.self)
                else { return nil }
                values[key] = .string(string)
            case .bytes:
                guard let data = reader.lengthPrefixed() else { return nil }
                values[key] = .bytes(data)
            }
        }
        return reader.isAtEnd ? values : nil
    }

    private static func appendUInt32(_ value: UInt32, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    private static func appendUInt64(_ value: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    private static func appendBytes(_ bytes: [UInt8], to out: inout [UInt8]) {
        appendUInt32(UInt32(clamping: bytes.count), to: &out)
        out.append(contentsOf: bytes)
    }
}

/// Reads little-endian fields from a byte array, returning `nil` past the end.
private struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint32() -> UInt32? {
        guard bytes.count - offset >= 4 else { return nil }
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * UInt32(index)) }
        offset += 4
        return value
    }

    mutating func uint64() -> UInt64? {
        guard bytes.count - offset >= 8 else { return nil }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return value
    }

    mutating func lengthPrefixed() -> [UInt8]? {
        guard let length = uint32(), Int(length) <= bytes.count - offset else { return nil }
        defer { offset += Int(length) }
        return Array(bytes[offset..<offset + Int(length)])
    }
}
