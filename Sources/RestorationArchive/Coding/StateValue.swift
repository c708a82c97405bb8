#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A decoded value of a blob, with its type: what `restorectl` shows without the app's code.
///
/// Integers stay integers (signed or unsigned as written), floats stay floats, bytes are bytes.
public enum StateValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case float(Float)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    case date(Date)
    case uuid(UUID)
    case url(URL)
    case array([StateValue])
    /// A keyed container (an object's own state, a nested container, a Codable struct or a
    /// string-keyed dictionary).
    case container([String: StateValue])
    /// A reference to another restorable object, by its restoration path.
    case reference(RestorationPath)

    /// The type's name, as errors and `restorectl` print it.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int, .uint: "integer"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .bytes: "bytes"
        case .date: "date"
        case .uuid: "uuid"
        case .url: "url"
        case .array: "array"
        case .container: "container"
        case .reference: "reference"
        }
    }

    /// Decodes a whole blob into its root container, checking it completely.
    ///
    /// - Throws: ``StateCodingError`` for a newer format version, a checksum mismatch,
    ///   truncation, trailing bytes, invalid UTF-8, a non-canonical form or a limit exceeded.
    public static func decode(blob: [UInt8], limits: DecodingLimits = .default) throws(StateCodingError)
        -> [String: StateValue]
    {
        // One pass: building the tree checks everything a validation pass would.
        try BlobReader(blob: blob, limits: limits).readRootTree()
    }

    /// Encodes a root container into a blob (what ``StateEncoder`` writes for the same values).
    public static func encode(_ root: [String: StateValue]) throws(StateCodingError) -> [UInt8] {
        var writer = BlobWriter()
        writer.startBlob()
        try writer.writeMapBody(root, depth: 1)
        return try writer.finishBlob()
    }
}
