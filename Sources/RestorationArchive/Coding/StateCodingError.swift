/// An error encoding or decoding restorable state.
///
/// Messages name keys, offsets and types, never the values: restoration state is user data.
public enum StateCodingError: Error, Hashable, Sendable, CustomStringConvertible {
    // MARK: Reading a value by key

    /// No value for the key.
    case keyNotFound(key: String)
    /// The value has another type: asked for `expected`, stored `found`.
    case typeMismatch(key: String, expected: String, found: String)
    /// The stored integer does not fit the requested type.
    case integerOutOfRange(key: String, type: String)
    /// A `Decodable` value's `init(from:)` refused what is stored: it threw a `DecodingError`
    /// other than a missing key or value (an enum's raw value it has no case for, a value it
    /// finds invalid), or an error of the app's own. `key` is the key path where it refused;
    /// `reason` names the types and the kind of error (and holds an error of the app's own as
    /// it describes itself). A `DecodingError`'s description is left out: the standard library
    /// writes the refused value into it.
    case undecodable(key: String, reason: String)

    // MARK: Writing

    /// The key is reserved for the restoration engine.
    case reservedKey(String)
    /// The key is empty, longer than the limit, or a key of the container already in another
    /// Unicode form.
    case invalidKey(String)
    /// The value cannot be encoded (nesting too deep, too large, an unsupported Codable shape);
    /// `key` is empty when the whole blob is at fault (larger than the blob size limit).
    case unencodable(key: String, reason: String)

    // MARK: Malformed blobs

    /// The blob was written by a newer format version.
    case unsupportedFormatVersion(found: Int, supported: Int)
    /// The blob ends before the value at `offset` does.
    case truncated(offset: Int)
    /// The blob's checksum does not match its content.
    case checksumMismatch
    /// Bytes follow the end of the blob's content.
    case trailingBytes(offset: Int)
    /// An unknown type tag.
    case invalidTag(UInt8, offset: Int)
    /// A string that is not valid UTF-8.
    case invalidUTF8(offset: Int)
    /// A value written in a form the format forbids (an overlong integer, unordered or
    /// duplicate keys, an unparsable URL or restoration path).
    case malformed(reason: String, offset: Int)
    /// A length, count, depth or size beyond the decoding limits.
    case limitExceeded(limit: String, offset: Int)

    public var description: String {
        switch self {
        case .keyNotFound(let key): "No value for key '\(key)'."
        case .typeMismatch(let key, let expected, let found):
            "The value for key '\(key)' is \(article(found)) \(found), not \(article(expected)) \(expected)."
        case .integerOutOfRange(let key, let type): "The integer for key '\(key)' does not fit in \(type)."
        case .undecodable(let key, let reason): "Cannot decode the value for key '\(key)': \(reason)."
        case .reservedKey(let key): "The key '\(key)' is reserved for the restoration engine."
        case .invalidKey(let reason): "Invalid key: \(reason)."
        case .unencodable(let key, let reason):
            key.isEmpty ? "Cannot encode the state: \(reason)." : "Cannot encode the value for key '\(key)': \(reason)."
        case .unsupportedFormatVersion(let found, let supported):
            "The blob is in format version \(found); this library reads up to version \(supported)."
        case .truncated(let offset): "The blob is truncated (at byte \(offset))."
        case .checksumMismatch: "The blob's checksum does not match its content."
        case .trailingBytes(let offset): "The blob has unexpected bytes after its content (at byte \(offset))."
        case .invalidTag(let tag, let offset): "Unknown type tag 0x\(String(tag, radix: 16)) at byte \(offset)."
        case .invalidUTF8(let offset): "A string at byte \(offset) is not valid UTF-8."
        case .malformed(let reason, let offset): "Malformed blob at byte \(offset): \(reason)."
        case .limitExceeded(let limit, let offset): "The blob exceeds the \(limit) limit at byte \(offset)."
        }
    }

    private func article(_ word: String) -> String {
        word.first.map { "aeiou".contains($0) } == true ? "an" : "a"
    }
}

extension StateCodingError {
    /// This error as met in the value for `key`: an unencodable value's key path gains `key` in
    /// front. The writer's limits name no key, and each container on the way out adds its own,
    /// so a message names the whole path (`order.lines`), not just the state.
    func under(_ key: String) -> StateCodingError {
        guard case .unencodable(let inner, let reason) = self else { return self }
        return .unencodable(key: inner.isEmpty ? key : key + "." + inner, reason: reason)
    }
}
