#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Codable over the blob format: an `Encoder` that builds a `StateValue` tree and a `Decoder`
// that reads one. `Date`, `UUID`, `URL`, `Data` and `[UInt8]` keep their own types.

/// Where a value sits, for error messages: `order.items[2].name`. A position in an array is
/// written `[2]`; any other key by its name, even one that has an integer value too (an
/// `enum CodingKeys: Int`), since its name is what the container stores it under.
private func describe(_ path: [any CodingKey], root: String) -> String {
    path.reduce(root) { text, key in
        if let position = key as? IndexKey { return "\(text)[\(position.stringValue)]" }
        return text.isEmpty ? key.stringValue : "\(text).\(key.stringValue)"
    }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    let stringValue: String
    init(_ index: Int) { intValue = index; stringValue = String(index) }
    init?(intValue: Int) { self.init(intValue) }
    init?(stringValue: String) { return nil }
}

/// The key a keyed container's `superEncoder()` and `superDecoder()` use, as Foundation's
/// coders do. It is not one of the container's own keys: a class's `CodingKeys` rarely has a
/// `super` case.
private struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { return nil }
}

// MARK: - Encoding

/// A value being built: filled once by a single-value container, or by a keyed or unkeyed one.
private final class EncodedValue {
    enum Content {
        case empty
        case value(StateValue)
        case keyed([String: EncodedValue])
        case unkeyed([EncodedValue])
    }
    var content: Content = .empty

    func materialize() -> StateValue {
        switch content {
        case .empty: .container([:])
        case .value(let value): value
        case .keyed(let entries): .container(entries.mapValues { $0.materialize() })
        case .unkeyed(let items): .array(items.map { $0.materialize() })
        }
    }
}

struct StateValueEncoder {
    /// Encodes `value` as a tree; `depth` is the depth of the container it goes into.
    static func encode<Value: Encodable>(_ value: Value, key: String, depth: Int) throws(StateCodingError) -> StateValue {
        let root = EncodedValue()
        let context = Context(rootKey: key, baseDepth: depth)
        do {
            try TreeEncoder.encode(value, into: root, path: [], context: context)
        } catch let error as StateCodingError {
            throw error
        } catch EncodingError.invalidValue(let refused, let context) {
            // Not the error's description: it holds the refused value itself.
            throw .unencodable(
                key: describe(context.codingPath, root: key),
                reason: "an encode(to:) encoding \(Value.self) refused a value of type \(type(of: refused)) (EncodingError.invalidValue)")
        } catch {
            throw .unencodable(key: key, reason: "an encode(to:) encoding \(Value.self) threw \(error)")
        }
        if let path = context.mixedContainers.first {
            throw .unencodable(
                key: describe(path, root: key),
                reason: "its encode(to:) used a keyed, an unkeyed or a single-value container where it had "
                    + "already encoded through another kind (or a single value twice): one would be lost")
        }
        return root.materialize()
    }

    /// Where an `encode(to:)` first switched container kinds for one value: keyed after
    /// unkeyed, a single value after a keyed one, and so on. Foundation's coders stop the
    /// process there; this one finishes the value, then throws, rather than lose part of it.
    /// (Keyed after keyed is one container, as a subclass and its superclass share it.)
    final class MixedContainers {
        private(set) var first: [any CodingKey]?
        func record(_ path: [any CodingKey]) { if first == nil { first = path } }
    }

    /// How many values the one being encoded is inside of through single-value containers
    /// (a wrapper encoding what it wraps as its own value): those add no depth to the blob,
    /// but each is a level of recursion, and a cycle of them would never end.
    final class SingleValueNesting {
        private(set) var depth = 0
        func enter() { depth += 1 }
        func leave() { depth -= 1 }
    }

    struct Context {
        let rootKey: String
        let baseDepth: Int
        let mixedContainers = MixedContainers()
        let singleValueNesting = SingleValueNesting()

        func check(_ path: [any CodingKey]) throws {
            guard baseDepth + path.count < DecodingLimits.default.maximumDepth else {
                throw StateCodingError.unencodable(
                    key: describe(path, root: rootKey),
                    reason: "containers nest deeper than \(DecodingLimits.default.maximumDepth) levels")
            }
            // As many again through single values: a value inside itself (an object graph with
            // a cycle) is refused here, where it would otherwise overflow the stack.
            guard singleValueNesting.depth < DecodingLimits.default.maximumDepth else {
                throw StateCodingError.unencodable(
                    key: describe(path, root: rootKey),
                    reason: "values nest deeper than \(DecodingLimits.default.maximumDepth) levels through "
                        + "single-value containers (does a value contain itself?)")
            }
        }
    }
}

private struct TreeEncoder: Encoder {
    let target: EncodedValue
    let codingPath: [any CodingKey]
    let context: StateValueEncoder.Context
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Encodes a value into `target`, keeping Foundation's value types as native tags.
    static func encode<Value: Encodable>(
        _ value: Value, into target: EncodedValue, path: [any CodingKey], context: StateValueEncoder.Context
    ) throws {
        if let special = special(value) {
            target.content = .value(special)
            return
        }
        try context.check(path)
        try value.encode(to: TreeEncoder(target: target, codingPath: path, context: context))
    }

    /// Matched by exact type, not by cast: on Linux `[Int] as? [UInt8]` succeeds through
    /// NSNumber bridging.
    static func special<Value: Encodable>(_ value: Value) -> StateValue? {
        if Value.self == Date.self { return .date(value as! Date) }
        if Value.self == UUID.self { return .uuid(value as! UUID) }
        if Value.self == URL.self { return .url(value as! URL) }
        if Value.self == Data.self { return .bytes([UInt8](value as! Data)) }
        if Value.self == [UInt8].self { return .bytes(value as! [UInt8]) }
        return nil
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        switch target.content {
        case .keyed: break
        case .empty: target.content = .keyed([:])
        case .value, .unkeyed: context.mixedContainers.record(codingPath)
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(target: target, codingPath: codingPath, context: context))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        switch target.content {
        case .unkeyed: break
        case .empty: target.content = .unkeyed([])
        case .value, .keyed: context.mixedContainers.record(codingPath)
        }
        return UnkeyedContainer(target: target, codingPath: codingPath, context: context)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(target: target, codingPath: codingPath, context: context)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let target: EncodedValue
        let codingPath: [any CodingKey]
        let context: StateValueEncoder.Context

        private func set(_ value: StateValue, _ key: Key) {
            let child = EncodedValue()
            child.content = .value(value)
            add(child, key)
        }

        private func add(_ child: EncodedValue, _ key: any CodingKey) {
            guard case .keyed(var entries) = target.content else { return }
            target.content = .empty  // keep the dictionary uniquely referenced while mutating it
            entries[key.stringValue] = child
            target.content = .keyed(entries)
        }

        mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
        mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { set(.float(value), key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(Int64(value)), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { set(.int(Int64(value)), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { set(.int(Int64(value)), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int64(value)), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { set(.int(value), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.uint(value), key) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let child = EncodedValue()
            try TreeEncoder.encode(value, into: child, path: codingPath + [key], context: context)
            add(child, key)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            TreeEncoder(target: nested(key), codingPath: codingPath + [key], context: context).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            TreeEncoder(target: nested(key), codingPath: codingPath + [key], context: context).unkeyedContainer()
        }

        /// The value a nested container for `key` writes into: the one already there, as
        /// Foundation's encoders hand it back (two helpers may each add to one nested
        /// container); a container of another kind there is refused as mixing kinds.
        private func nested(_ key: Key) -> EncodedValue {
            if case .keyed(let entries) = target.content, let existing = entries[key.stringValue] { return existing }
            let child = EncodedValue()
            add(child, key)
            return child
        }

        mutating func superEncoder() -> any Encoder { encoder(under: SuperKey()) }

        mutating func superEncoder(forKey key: Key) -> any Encoder { encoder(under: key) }

        private func encoder(under key: any CodingKey) -> any Encoder {
            let child = EncodedValue()
            add(child, key)
            return TreeEncoder(target: child, codingPath: codingPath + [key], context: context)
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let target: EncodedValue
        let codingPath: [any CodingKey]
        let context: StateValueEncoder.Context

        var count: Int {
            guard case .unkeyed(let items) = target.content else { return 0 }
            return items.count
        }

        private func append(_ child: EncodedValue) {
            guard case .unkeyed(var items) = target.content else { return }
            target.content = .empty
            items.append(child)
            target.content = .unkeyed(items)
        }

        private func append(_ value: StateValue) {
            let child = EncodedValue()
            child.content = .value(value)
            append(child)
        }

        mutating func encodeNil() throws { append(.null) }
        mutating func encode(_ value: Bool) throws { append(.bool(value)) }
        mutating func encode(_ value: String) throws { append(.string(value)) }
        mutating func encode(_ value: Double) throws { append(.double(value)) }
        mutating func encode(_ value: Float) throws { append(.float(value)) }
        mutating func encode(_ value: Int) throws { append(.int(Int64(value))) }
        mutating func encode(_ value: Int8) throws { append(.int(Int64(value))) }
        mutating func encode(_ value: Int16) throws { append(.int(Int64(value))) }
        mutating func encode(_ value: Int32) throws { append(.int(Int64(value))) }
        mutating func encode(_ value: Int64) throws { append(.int(value)) }
        mutating func encode(_ value: UInt) throws { append(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt8) throws { append(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt16) throws { append(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt32) throws { append(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt64) throws { append(.uint(value)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let child = EncodedValue()
            try TreeEncoder.encode(value, into: child, path: codingPath + [IndexKey(count)], context: context)
            append(child)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            let child = EncodedValue()
            let path = codingPath + [IndexKey(count)]
            append(child)
            return TreeEncoder(target: child, codingPath: path, context: context).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let child = EncodedValue()
            let path = codingPath + [IndexKey(count)]
            append(child)
            return TreeEncoder(target: child, codingPath: path, context: context).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let child = EncodedValue()
            let path = codingPath + [IndexKey(count)]
            append(child)
            return TreeEncoder(target: child, codingPath: path, context: context)
        }
    }

    struct SingleContainer: SingleValueEncodingContainer {
        let target: EncodedValue
        let codingPath: [any CodingKey]
        let context: StateValueEncoder.Context

        /// The value's one value: a second one, or one after a keyed or unkeyed container,
        /// is recorded as mixed.
        private func set(_ value: StateValue) {
            recordIfFilled()
            target.content = .value(value)
        }

        private func recordIfFilled() {
            if case .empty = target.content {} else { context.mixedContainers.record(codingPath) }
        }

        mutating func encodeNil() throws { set(.null) }
        mutating func encode(_ value: Bool) throws { set(.bool(value)) }
        mutating func encode(_ value: String) throws { set(.string(value)) }
        mutating func encode(_ value: Double) throws { set(.double(value)) }
        mutating func encode(_ value: Float) throws { set(.float(value)) }
        mutating func encode(_ value: Int) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int8) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int16) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int32) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int64) throws { set(.int(value)) }
        mutating func encode(_ value: UInt) throws { set(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt8) throws { set(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt16) throws { set(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt32) throws { set(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt64) throws { set(.uint(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            recordIfFilled()
            context.singleValueNesting.enter()
            defer { context.singleValueNesting.leave() }
            try TreeEncoder.encode(value, into: target, path: codingPath, context: context)
        }
    }
}

// MARK: - Decoding

enum StateValueDecoder {
    static func decode<Value: Decodable>(_ type: Value.Type, from value: StateValue, key: String) throws(StateCodingError)
        -> Value
    {
        do {
            return try TreeDecoder.decode(type, from: value, path: [], rootKey: key)
        } catch let error as StateCodingError {
            throw error
        } catch let error as DecodingError {
            throw translate(error, decoding: Value.self, rootKey: key)
        } catch {
            throw .undecodable(key: key, reason: "an init(from:) decoding \(Value.self) threw \(error)")
        }
    }

    /// A `DecodingError` thrown by an `init(from:)` (the app's, or the standard library's for
    /// its own types) as a ``StateCodingError`` naming the key path. Its description is left
    /// out: the standard library writes the refused value into it ("Cannot initialize Flavor
    /// from invalid String value …"), and messages never hold stored values.
    private static func translate<Value>(_ error: DecodingError, decoding _: Value.Type, rootKey: String)
        -> StateCodingError
    {
        let decoding = "an init(from:) decoding \(Value.self)"
        switch error {
        case .keyNotFound(let key, let context):
            return .keyNotFound(key: describe(context.codingPath + [key], root: rootKey))
        case .valueNotFound(let type, let context):
            return .typeMismatch(key: describe(context.codingPath, root: rootKey), expected: "\(type)", found: "null")
        case .typeMismatch(let type, let context):
            return .undecodable(
                key: describe(context.codingPath, root: rootKey),
                reason: "\(decoding) expected \(type) there (DecodingError.typeMismatch)")
        case .dataCorrupted(let context):
            return .undecodable(
                key: describe(context.codingPath, root: rootKey),
                reason: "\(decoding) found it invalid (DecodingError.dataCorrupted)")
        @unknown default:
            return .undecodable(key: rootKey, reason: "\(decoding) threw a DecodingError")
        }
    }
}

private struct TreeDecoder: Decoder {
    let value: StateValue
    let codingPath: [any CodingKey]
    let rootKey: String
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    var keyDescription: String { describe(codingPath, root: rootKey) }

    static func decode<Value: Decodable>(_ type: Value.Type, from value: StateValue, path: [any CodingKey], rootKey: String)
        throws -> Value
    {
        let key = describe(path, root: rootKey)
        if type == Date.self { return try value.date(key: key) as! Value }
        if type == UUID.self { return try value.uuid(key: key) as! Value }
        if type == URL.self { return try value.url(key: key) as! Value }
        if type == Data.self { return Data(try value.bytes(key: key)) as! Value }
        if type == [UInt8].self, case .bytes(let bytes) = value { return bytes as! Value }
        return try Value(from: TreeDecoder(value: value, codingPath: path, rootKey: rootKey))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .container(let entries) = value else {
            throw StateCodingError.typeMismatch(key: keyDescription, expected: "container", found: value.typeName)
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(entries: entries, codingPath: codingPath, rootKey: rootKey))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else {
            throw StateCodingError.typeMismatch(key: keyDescription, expected: "array", found: value.typeName)
        }
        return UnkeyedContainer(items: items, codingPath: codingPath, rootKey: rootKey)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleContainer(value: value, codingPath: codingPath, rootKey: rootKey)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let entries: [String: StateValue]
        let codingPath: [any CodingKey]
        let rootKey: String

        var allKeys: [Key] { entries.keys.compactMap { Key(stringValue: $0) } }
        func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

        private func name(_ key: Key) -> String { describe(codingPath + [key], root: rootKey) }

        private func value(_ key: Key) throws -> StateValue {
            guard let value = entries[key.stringValue] else { throw StateCodingError.keyNotFound(key: name(key)) }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(key).bool(key: name(key)) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(key).string(key: name(key)) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(key).double(key: name(key)) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(key).float(key: name(key)) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(key).integer(type, key: name(key)) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(key).integer(type, key: name(key)) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(key).integer(type, key: name(key)) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(key).integer(type, key: name(key)) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(key).integer(type, key: name(key)) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(key).integer(type, key: name(key)) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(key).integer(type, key: name(key)) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(key).integer(type, key: name(key)) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(key).integer(type, key: name(key)) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(key).integer(type, key: name(key)) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try TreeDecoder.decode(type, from: try value(key), path: codingPath + [key], rootKey: rootKey)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try TreeDecoder(value: try value(key), codingPath: codingPath + [key], rootKey: rootKey).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try TreeDecoder(value: try value(key), codingPath: codingPath + [key], rootKey: rootKey).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder { decoder(under: SuperKey()) }

        func superDecoder(forKey key: Key) throws -> any Decoder { decoder(under: key) }

        /// A missing entry reads as null, as in Foundation's coders: a superclass that
        /// encoded nothing decodes from an empty value.
        private func decoder(under key: any CodingKey) -> any Decoder {
            TreeDecoder(value: entries[key.stringValue] ?? .null, codingPath: codingPath + [key], rootKey: rootKey)
        }
    }

    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let items: [StateValue]
        let codingPath: [any CodingKey]
        let rootKey: String
        var currentIndex = 0

        init(items: [StateValue], codingPath: [any CodingKey], rootKey: String) {
            self.items = items
            self.codingPath = codingPath
            self.rootKey = rootKey
        }

        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        private var name: String { describe(codingPath + [IndexKey(currentIndex)], root: rootKey) }

        private mutating func next() throws -> StateValue {
            guard !isAtEnd else { throw StateCodingError.keyNotFound(key: name) }
            defer { currentIndex += 1 }
            return items[currentIndex]
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, items[currentIndex] == .null else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode(_ type: Bool.Type) throws -> Bool { let n = name; return try next().bool(key: n) }
        mutating func decode(_ type: String.Type) throws -> String { let n = name; return try next().string(key: n) }
        mutating func decode(_ type: Double.Type) throws -> Double { let n = name; return try next().double(key: n) }
        mutating func decode(_ type: Float.Type) throws -> Float { let n = name; return try next().float(key: n) }
        mutating func decode(_ type: Int.Type) throws -> Int { let n = name; return try next().integer(type, key: n) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { let n = name; return try next().integer(type, key: n) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { let n = name; return try next().integer(type, key: n) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { let n = name; return try next().integer(type, key: n) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { let n = name; return try next().integer(type, key: n) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { let n = name; return try next().integer(type, key: n) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let n = name; return try next().integer(type, key: n) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let n = name; return try next().integer(type, key: n) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let n = name; return try next().integer(type, key: n) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let n = name; return try next().integer(type, key: n) }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let path = codingPath + [IndexKey(currentIndex)]
            return try TreeDecoder.decode(type, from: try next(), path: path, rootKey: rootKey)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let path = codingPath + [IndexKey(currentIndex)]
            return try TreeDecoder(value: try next(), codingPath: path, rootKey: rootKey).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let path = codingPath + [IndexKey(currentIndex)]
            return try TreeDecoder(value: try next(), codingPath: path, rootKey: rootKey).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder {
            let path = codingPath + [IndexKey(currentIndex)]
            return TreeDecoder(value: try next(), codingPath: path, rootKey: rootKey)
        }
    }

    struct SingleContainer: SingleValueDecodingContainer {
        let value: StateValue
        let codingPath: [any CodingKey]
        let rootKey: String

        private var name: String { describe(codingPath, root: rootKey) }

        func decodeNil() -> Bool { value == .null }
        func decode(_ type: Bool.Type) throws -> Bool { try value.bool(key: name) }
        func decode(_ type: String.Type) throws -> String { try value.string(key: name) }
        func decode(_ type: Double.Type) throws -> Double { try value.double(key: name) }
        func decode(_ type: Float.Type) throws -> Float { try value.float(key: name) }
        func decode(_ type: Int.Type) throws -> Int { try value.integer(type, key: name) }
        func decode(_ type: Int8.Type) throws -> Int8 { try value.integer(type, key: name) }
        func decode(_ type: Int16.Type) throws -> Int16 { try value.integer(type, key: name) }
        func decode(_ type: Int32.Type) throws -> Int32 { try value.integer(type, key: name) }
        func decode(_ type: Int64.Type) throws -> Int64 { try value.integer(type, key: name) }
        func decode(_ type: UInt.Type) throws -> UInt { try value.integer(type, key: name) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try value.integer(type, key: name) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try value.integer(type, key: name) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try value.integer(type, key: name) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try value.integer(type, key: name) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try TreeDecoder.decode(type, from: value, path: codingPath, rootKey: rootKey)
        }
    }
}
