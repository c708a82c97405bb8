import Foundation
import RestorationArchive

/// JSON output: stable keys (sorted), ISO 8601 dates with milliseconds (``Timestamp``), and every character that could act on
/// a terminal written as a `\u` escape (still valid JSON).
enum JSONOutput {
    static func render(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.text(date))
        }
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: NonFiniteNumber.positiveInfinity, negativeInfinity: NonFiniteNumber.negativeInfinity,
            nan: NonFiniteNumber.notANumber)
        return escapingUnprintable(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Encoded JSON with every scalar that ``TerminalText/isUnprintableBeyondASCII(_:)``
    /// writes as `\u` escapes (UTF-16 code units, as JSON counts them: two for one beyond
    /// U+FFFF). The encoder already escapes U+0000–U+001F, quotes and backslashes; outside
    /// strings JSON has only ASCII, so these can only be inside strings. The text between
    /// them is copied a run at a time: an export of 100,000 nodes is 88 MB.
    static func escapingUnprintable(_ text: String) -> String {
        // Bytes below DEL are ASCII scalars that need no escape: most documents are all such.
        guard text.utf8.contains(where: { $0 >= 0x7F }) else { return text }
        let scalars = text.unicodeScalars
        var result = ""
        result.reserveCapacity(text.utf8.count + 64)
        var copied = scalars.startIndex
        for index in scalars.indices where TerminalText.isUnprintableBeyondASCII(scalars[index]) {
            result += Substring(scalars[copied..<index])
            for unit in String(scalars[index]).utf16 {
                let hex = String(unit, radix: 16, uppercase: false)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
            copied = scalars.index(after: index)
        }
        result += Substring(scalars[copied...])
        return result
    }
}

/// A header value in JSON: `{"type": "int", "value": 5}`; bytes as base64.
struct HeaderValueJSON: Encodable {
    let value: HeaderValue

    private enum Keys: String, CodingKey { case type, value, base64 }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        switch value {
        case .bool(let value):
            try container.encode("bool", forKey: .type)
            try container.encode(value, forKey: .value)
        case .int(let value):
            try container.encode("int", forKey: .type)
            try container.encode(value, forKey: .value)
        case .double(let value):
            try container.encode("double", forKey: .type)
            try container.encode(value, forKey: .value)
        case .string(let value):
            try container.encode("string", forKey: .type)
            try container.encode(value, forKey: .value)
        case .bytes(let value):
            try container.encode("bytes", forKey: .type)
            try container.encode(Data(value).base64EncodedString(), forKey: .base64)
        }
    }
}

/// An archive state in JSON: `{"kind": "invalidated", "reason": "…", "at": "…"}`.
struct ArchiveStateJSON: Encodable {
    let kind: String
    let reason: String?
    let at: Date?

    init(_ state: ArchiveState) {
        switch state {
        case .valid: (kind, reason, at) = ("valid", nil, nil)
        case .invalidated(let reason, let at): (kind, self.reason, self.at) = ("invalidated", reason, at)
        case .discarded(let reason, let at): (kind, self.reason, self.at) = ("discarded", reason, at)
        }
    }
}
