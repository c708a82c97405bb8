/// The identifiers from a root object down to one preserved object, such as
/// `Tabs/MenuNavigation/MenuItemDetail`.
///
/// A path identifies exactly one node in an archive. Identifiers may hold any character,
/// including `/` and `%`; in the path's text form (``description``, and what the store and
/// `restorectl` show) those are written `%2F` and `%25`, and NUL is written `%00`, so the
/// text form always parses back to the same identifiers.
///
/// ```swift
/// let detail = try RestorationPath("Tabs", "MenuNavigation", "MenuItemDetail")
/// detail.parent?.description   // "Tabs/MenuNavigation"
/// try RestorationPath(parsing: "Tabs/MenuNavigation") == detail.parent   // true
/// ```
public struct RestorationPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The longest identifier accepted, in UTF-8 bytes.
    public static let maximumIdentifierLength = 1024
    /// The deepest path accepted, in identifiers.
    public static let maximumDepth = 256

    /// The identifiers, root first. Never empty.
    public let identifiers: [String]
    /// The escaped text form, which is also the stored form.
    public let description: String

    /// A path from identifiers, root first.
    /// - Throws: ``ArchiveStoreError/invalidRestorationPath(_:)`` when there is no identifier,
    ///   an identifier is empty or too long, or the path is too deep.
    public init(_ identifiers: [String]) throws(ArchiveStoreError) {
        guard !identifiers.isEmpty else {
            throw .invalidRestorationPath("a restoration path needs at least one identifier")
        }
        guard identifiers.count <= Self.maximumDepth else {
            throw .invalidRestorationPath(
                "a restoration path is limited to \(Self.maximumDepth) identifiers, this one has \(identifiers.count)")
        }
        var text = ""
        for (index, identifier) in identifiers.enumerated() {
            try Self.validate(identifier)
            if index > 0 { text.append("/") }
            Self.appendEscaped(identifier, to: &text)
        }
        self.identifiers = identifiers
        self.description = text
    }

    /// A path from identifiers, root first.
    public init(_ identifiers: String...) throws(ArchiveStoreError) {
        try self.init(identifiers)
    }

    /// Parses the text form (identifiers separated by `/`, with `%2F`, `%25` and `%00` escapes).
    /// - Throws: ``ArchiveStoreError/invalidRestorationPath(_:)`` for an empty identifier
    ///   (`a//b`) or an escape other than those three.
    public init(parsing text: String) throws(ArchiveStoreError) {
        var identifiers: [String] = []
        for part in text.split(separator: "/", omittingEmptySubsequences: false) {
            identifiers.append(try Self.unescape(part))
        }
        try self.init(identifiers)
    }

    /// A path from text that must already be in the canonical form (what ``description``
    /// writes: upper-case escapes, NUL escaped), as stored paths and blob references are; `nil`
    /// for anything else, so one path never has two stored forms.
    init?(canonicalText text: String) {
        // The common case in one pass: no escape, no NUL, identifiers within the limits. The
        // text is then its own canonical form. Anything else takes the general route.
        if let identifiers = Self.plainIdentifiers(text) {
            self.init(trusted: identifiers, description: text)
            return
        }
        guard let path = try? RestorationPath(parsing: text), path.description == text else { return nil }
        self = path
    }

    /// The identifiers of `text` when it has no `%` and no NUL (so nothing to unescape),
    /// no empty identifier, no identifier over the length limit and no more identifiers than
    /// the depth limit; `nil` otherwise.
    private static func plainIdentifiers(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { bytes -> [String]? in
            var identifiers: [String] = []
            var start = 0
            for index in 0...bytes.count {
                if index < bytes.count {
                    let byte = bytes[index]
                    if byte == 0x25 || byte == 0 { return nil }
                    if byte != 0x2F { continue }
                }
                let length = index - start
                guard length > 0, length <= maximumIdentifierLength, identifiers.count < maximumDepth else { return nil }
                identifiers.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                start = index + 1
            }
            return identifiers
        }
    }

    private init(trusted identifiers: [String], description: String) {
        self.identifiers = identifiers
        self.description = description
    }

    /// The last identifier.
    public var identifier: String { identifiers[identifiers.count - 1] }

    /// The number of identifiers: 1 for a root object.
    public var depth: Int { identifiers.count }

    /// The path of the parent object, or `nil` for a root object.
    public var parent: RestorationPath? {
        // Identifiers are joined by "/" and escape their own, so the last one starts after it.
        guard identifiers.count > 1, let slash = description.utf8.lastIndex(of: UInt8(ascii: "/")) else {
            return nil
        }
        return RestorationPath(
            trusted: Array(identifiers.dropLast()), description: String(description[..<slash]))
    }

    /// The text form of ``parent``, without making the path; `nil` for a root object.
    var parentDescription: Substring? {
        guard identifiers.count > 1, let slash = description.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        return description[..<slash]
    }

    /// The path of a child object.
    /// - Throws: ``ArchiveStoreError/invalidRestorationPath(_:)`` for an invalid identifier or
    ///   a path that would be too deep.
    public func appending(_ identifier: String) throws(ArchiveStoreError) -> RestorationPath {
        try RestorationPath(identifiers + [identifier])
    }

    /// Whether `self` is `other` or lies below it.
    public func isDescendant(of other: RestorationPath) -> Bool {
        identifiers.count >= other.identifiers.count
            && Array(identifiers.prefix(other.identifiers.count)) == other.identifiers
    }

    /// Orders paths as the store does: by the UTF-8 bytes of the text form, so a parent
    /// always sorts before everything below it.
    public static func < (lhs: RestorationPath, rhs: RestorationPath) -> Bool {
        lhs.description.utf8.lexicographicallyPrecedes(rhs.description.utf8)
    }

    public static func == (lhs: RestorationPath, rhs: RestorationPath) -> Bool {
        lhs.description == rhs.description
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(description)
    }

    // MARK: Text form

    private static func validate(_ identifier: String) throws(ArchiveStoreError) {
        guard !identifier.isEmpty else {
            throw .invalidRestorationPath("an identifier in a restoration path is empty")
        }
        guard identifier.utf8.count <= maximumIdentifierLength else {
            throw .invalidRestorationPath(
                "an identifier is \(identifier.utf8.count) bytes long; the limit is \(maximumIdentifierLength)")
        }
    }

    private static func appendEscaped(_ identifier: String, to text: inout String) {
        guard identifier.utf8.contains(where: { $0 == 0x25 || $0 == 0x2F || $0 == 0 }) else {
            text.append(identifier)
            return
        }
        for scalar in identifier.unicodeScalars {
            switch scalar {
            case "%": text.append("%25")
            case "/": text.append("%2F")
            case "\0": text.append("%00")
            default: text.unicodeScalars.append(scalar)
            }
        }
    }

    private static func unescape(_ part: Substring) throws(ArchiveStoreError) -> String {
        guard part.utf8.contains(0x25) else { return String(part) }
        var result = ""
        var scalars = part.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard scalar == "%" else {
                result.unicodeScalars.append(scalar)
                continue
            }
            let escape = String(String.UnicodeScalarView([scalars.next(), scalars.next()].compactMap { $0 }))
            switch escape.uppercased() {
            case "25": result.append("%")
            case "2F": result.append("/")
            case "00": result.append("\0")
            default:
                throw .invalidRestorationPath(
                    "unknown escape '%\(escape)' in a restoration path (only %25, %2F and %00 are used)")
            }
        }
        return result
    }
}
