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
        let text = String(decoding: try encoder.encode(value), as: UTF8.self)
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            // The encoder already escapes U+0000–U+001F, quotes and backslashes; outside
            // strings JSON has only ASCII, so these can only be inside strings.
            if (0x7F...0x9F).contains(scalar.value) || scalar.properties.generalCategory == .format
                || scalar.properties.generalCategory == .lineSeparator
                || scalar.properties.generalCategory == .paragraphSeparator
            {
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16, uppercase: false)
                    result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
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
