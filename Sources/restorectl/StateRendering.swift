import Foundation
import RestorationArchive

/// Renders decoded state without the app's code: a typed, indented tree for people, and a
/// typed JSON value for tools.
enum StateRendering {
    // MARK: Text

    static func text(_ root: [String: StateValue], indent: String = "  ") -> String {
        var out = ""
        appendEntries(root, indent: indent, to: &out)
        return out
    }

    private static func appendEntries(_ entries: [String: StateValue], indent: String, to out: inout String) {
        for key in entries.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            append(label: TerminalText.escaped(key), entries[key]!, indent: indent, to: &out)
        }
    }

    private static func append(label: String, _ value: StateValue, indent: String, to out: inout String) {
        switch value {
        case .array(let items):
            out += "\(indent)\(label): array (\(items.count))\n"
            for (index, item) in items.enumerated() {
                append(label: "[\(index)]", item, indent: indent + "  ", to: &out)
            }
        case .container(let entries):
            out += "\(indent)\(label): container (\(entries.count))\n"
            appendEntries(entries, indent: indent + "  ", to: &out)
        default:
            out += "\(indent)\(label): \(scalar(value))\n"
        }
    }

    private static func scalar(_ value: StateValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let value): "bool \(value)"
        case .int(let value): "int \(value)"
        case .uint(let value): "uint \(value)"
        case .float(let value): "float \(NonFiniteNumber.text(value))"
        case .double(let value): "double \(NonFiniteNumber.text(value))"
        case .string(let value): "string \"\(TerminalText.escaped(value))\""
        case .bytes(let value):
            "bytes (\(value.count)) " + value.prefix(32).map { String(format: "%02x", $0) }.joined()
                + (value.count > 32 ? "…" : "")
        case .date(let value): "date \(Timestamp.text(value))"
        case .uuid(let value): "uuid \(value.uuidString)"
        case .url(let value): "url \(TerminalText.escaped(value.absoluteString))"
        case .reference(let path): "reference \(TerminalText.escaped(path.description))"
        case .array, .container: ""
        }
    }

    // MARK: JSON

    /// `{"type": "int", "value": 5}`, `{"type": "container", "entries": {…}}`, … (docs/cli.md).
    struct JSONValue: Encodable {
        let value: StateValue

        private enum Keys: String, CodingKey { case type, value, base64, items, entries }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            switch value {
            case .null: try container.encode("null", forKey: .type)
            case .bool(let value): try typed("bool", value, &container)
            case .int(let value): try typed("int", value, &container)
            case .uint(let value): try typed("uint", value, &container)
            case .float(let value): try typed("float", value, &container)
            case .double(let value): try typed("double", value, &container)
            case .string(let value): try typed("string", value, &container)
            case .bytes(let value):
                try container.encode("bytes", forKey: .type)
                try container.encode(Data(value).base64EncodedString(), forKey: .base64)
            case .date(let value): try typed("date", value, &container)
            case .uuid(let value): try typed("uuid", value.uuidString, &container)
            case .url(let value): try typed("url", value.absoluteString, &container)
            case .reference(let path): try typed("reference", path.description, &container)
            case .array(let items):
                try container.encode("array", forKey: .type)
                try container.encode(items.map(JSONValue.init), forKey: .items)
            case .container(let entries):
                try container.encode("container", forKey: .type)
                try container.encode(entries.mapValues(JSONValue.init), forKey: .entries)
            }
        }

        private func typed(_ type: String, _ value: some Encodable, _ container: inout KeyedEncodingContainer<Keys>) throws {
            try container.encode(type, forKey: .type)
            try container.encode(value, forKey: .value)
        }
    }
}
