#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// The escaped text form, which is also the stored form.
    public let description: String
    /// The number of identifiers: 1 for a root object.
    public let depth: Int

    // A path is kept as its text form only: a restore reads thousands of paths, and splitting
    // each into an array of identifiers was a fifth of reading a node row. The identifiers are
    // made when asked for.

    /// A path from identifiers, root first.
    /// - Throws: ``ArchiveStoreError/invalidRestorationPath(_:)`` when there is no identifier,
    ///   an identifier is empty or too long, or the path is too deep.
    public init(_ identifiers: [String]) throws(ArchiveStoreError) {
        guard !identifiers.isEmpty else {
            throw .invalidRestorationPath("a restoration path needs at least one identifier")
        }
        guard identifiers.count <= Self.maximumDepth else { throw Self.tooDeep(identifiers.count) }
        var text = ""
        for (index, identifier) in identifiers.enumerated() {
            try Self.validate(identifier)
            if index > 0 { text.append("/") }
            Self.appendEscaped(identifier, to: &text)
        }
        self.init(trusted: text, depth: identifiers.count)
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
        for part in Self.parts(of: text) {
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
        if let depth = Self.plainDepth(text) {
            self.init(trusted: text, depth: depth)
            return
        }
        guard let path = try? RestorationPath(parsing: text), path.description == text else { return nil }
        self = path
    }

    /// The number of identifiers of `text` when it has no `%` and no NUL (so nothing to
    /// unescape), no empty identifier, no identifier over the length limit and no more
    /// identifiers than the depth limit; `nil` otherwise.
    private static func plainDepth(_ text: String) -> Int? {
        UTF8Text.withBytes(of: text) { bytes -> Int? in
            var depth = 1
            var start = 0  // where the current identifier starts
            for index in 0..<bytes.count {
                let byte = bytes[index]
                if byte > 0x2F { continue }  // above "/": letters and digits, the common case
                if byte == 0x25 || byte == 0 { return nil }
                guard byte == 0x2F else { continue }
                guard index > start, index - start <= maximumIdentifierLength, depth < maximumDepth else { return nil }
                depth += 1
                start = index + 1
            }
            let last = bytes.count - start
            guard last > 0, last <= maximumIdentifierLength else { return nil }
            return depth
        }
    }

    /// A path whose text is already canonical and holds `depth` identifiers.
    private init(trusted description: String, depth: Int) {
        self.description = description
        self.depth = depth
    }

    /// The identifiers, root first. Never empty.
    public var identifiers: [String] {
        Self.parts(of: description).map(Self.canonicalIdentifier)
    }

    /// The last identifier.
    public var identifier: String {
        // From the bytes: restoration classes ask for it for every node they create.
        let last = UTF8Text.withBytes(of: description) { bytes -> (text: String, isEscaped: Bool) in
            let start = Self.lastSlash(in: bytes).map { $0 + 1 } ?? 0
            let identifier = UnsafeBufferPointer(rebasing: bytes.assumingMemoryBound(to: UInt8.self)[start...])
            return (String(decoding: identifier, as: UTF8.self), identifier.contains(0x25))
        }
        return last.isEscaped ? Self.canonicalIdentifier(last.text[...]) : last.text
    }

    /// The path of the parent object, or `nil` for a root object.
    public var parent: RestorationPath? {
        parentDescription.map { RestorationPath(trusted: String($0), depth: depth - 1) }
    }

    /// The text form of ``parent``, without making the path; `nil` for a root object.
    var parentDescription: Substring? {
        guard let slash = lastSlash else { return nil }
        return description[..<slash]
    }

    /// Where the last `/` of the text form is: identifiers are joined by `/` and escape their
    /// own, so the last identifier starts after it.
    private var lastSlash: String.Index? {
        UTF8Text.withBytes(of: description, Self.lastSlash(in:))
            .map { description.utf8.index(description.utf8.startIndex, offsetBy: $0) }
    }

    /// A text form's parts between its `/`s, found by their byte. Not by `split` on the
    /// string: that compares characters, and a `/` followed by a combining mark (an
    /// identifier starting with U+0301, a variation selector, a zero-width joiner) is one
    /// character with it, so the two identifiers around it read as one.
    private static func parts(of text: String) -> [Substring] {
        text.utf8.split(separator: 0x2F, omittingEmptySubsequences: false).map { Substring($0) }
    }

    /// The offset of the last `/` in a text form's bytes: the parent's text is what comes
    /// before it.
    static func lastSlash(in bytes: UnsafeRawBufferPointer) -> Int? {
        var index = bytes.count
        while index > 0 {
            index &-= 1
            if bytes[index] == 0x2F { return index }
        }
        return nil
    }

    /// The path of a child object.
    /// - Throws: ``ArchiveStoreError/invalidRestorationPath(_:)`` for an invalid identifier or
    ///   a path that would be too deep.
    public func appending(_ identifier: String) throws(ArchiveStoreError) -> RestorationPath {
        guard depth < Self.maximumDepth else { throw Self.tooDeep(depth + 1) }
        try Self.validate(identifier)
        // An identifier with nothing to escape (the common case) is copied after the parent's
        // text and a "/" into a string made at its size: appending to a copy of the parent's
        // text cost about 1,100 instructions a path (a preservation makes one per object).
        let joined = UTF8Text.withBytes(of: description) { parent in
            UTF8Text.withBytes(of: identifier) { child -> String? in
                guard !child.contains(where: Self.needsEscape) else { return nil }
                return String(unsafeUninitializedCapacity: parent.count + 1 + child.count) { buffer in
                    let bytes = UnsafeMutableRawBufferPointer(buffer)
                    bytes.copyMemory(from: parent)
                    bytes[parent.count] = 0x2F
                    UnsafeMutableRawBufferPointer(rebasing: bytes[(parent.count + 1)...]).copyMemory(from: child)
                    return parent.count + 1 + child.count
                }
            }
        }
        if let joined { return RestorationPath(trusted: joined, depth: depth + 1) }
        var text = description
        text.append("/")
        Self.appendEscaped(identifier, to: &text)
        return RestorationPath(trusted: text, depth: depth + 1)
    }

    /// Whether `self` is `other` or lies below it, as paths compare (``==(_:_:)``): below
    /// another Unicode form of `other` too, as ``ArchiveStore/saveChanges(_:removing:basedOn:header:in:)``
    /// removes it with `other`.
    public func isDescendant(of other: RestorationPath) -> Bool {
        guard depth >= other.depth else { return false }
        // Identifiers escape their own "/": `other`'s identifiers begin `self`'s in the same
        // bytes exactly when its text begins `self`'s and is followed by a "/" or by nothing.
        let text = description.utf8
        let prefix = other.description.utf8
        if text.starts(with: prefix) {
            guard text.count > prefix.count else { return true }
            if text[text.index(text.startIndex, offsetBy: prefix.count)] == 0x2F { return true }
        }
        // Or in other bytes: the ancestor at `other`'s depth is `other` as paths compare. Only
        // a text that is not all ASCII can be.
        let bothASCII =
            UTF8Text.withBytes(of: description, UTF8Text.isASCII)
            && UTF8Text.withBytes(of: other.description, UTF8Text.isASCII)
        guard !bothASCII else { return false }
        return sequence(first: self, next: \.parent).first { $0.depth == other.depth } == other
    }

    /// Orders paths as the store does: by the UTF-8 bytes of the text form, so a parent
    /// always sorts before everything below it.
    public static func < (lhs: RestorationPath, rhs: RestorationPath) -> Bool {
        // The bytes compared as unsigned, as `memcmp` does: a generic comparison of the two
        // UTF-8 views stepped through their indices a byte at a time.
        UTF8Text.withBytes(of: lhs.description) { left in
            UTF8Text.withBytes(of: rhs.description) { right in
                let common = min(left.count, right.count)
                if common > 0, let a = left.baseAddress, let b = right.baseAddress {
                    let order = memcmp(a, b, common)
                    if order != 0 { return order < 0 }
                }
                return left.count < right.count
            }
        }
    }

    /// Whether the paths are the same text as Swift compares strings (canonical equivalence):
    /// an identifier in composed or decomposed form (`"caf\u{E9}"`, `"cafe\u{301}"`) makes one
    /// path, so two such siblings in one save are a duplicate path (R2). ``<(_:_:)`` and the store
    /// go by the text's bytes, which tell the two forms apart.
    public static func == (lhs: RestorationPath, rhs: RestorationPath) -> Bool {
        lhs.description == rhs.description
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(description)
    }

    /// Whether the two paths' texts are the same bytes: equal paths (`==`, canonical
    /// equivalence) may be in different Unicode forms, which the store keeps as different rows.
    func hasSameBytes(as other: RestorationPath) -> Bool {
        UTF8Text.sameBytes(description, other.description)
    }

    // MARK: Text form

    private static func tooDeep(_ count: Int) -> ArchiveStoreError {
        .invalidRestorationPath(
            "a restoration path is limited to \(maximumDepth) identifiers, this one has \(count)")
    }

    /// The identifier a part of the text form holds. The text form's escapes are exactly the
    /// three ``unescape(_:)`` knows, so it never throws here.
    private static func canonicalIdentifier(_ part: Substring) -> String {
        guard UTF8Text.withBytes(of: part, { $0.contains(0x25) }) else { return String(part) }
        return (try? unescape(part)) ?? String(part)
    }

    private static func validate(_ identifier: String) throws(ArchiveStoreError) {
        guard !identifier.isEmpty else {
            throw .invalidRestorationPath("an identifier in a restoration path is empty")
        }
        guard identifier.utf8.count <= maximumIdentifierLength else {
            throw .invalidRestorationPath(
                "an identifier is \(identifier.utf8.count) bytes long; the limit is \(maximumIdentifierLength)")
        }
    }

    /// Whether a byte of an identifier is written escaped: `%`, `/` and NUL.
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == 0x25 || byte == 0x2F || byte == 0
    }

    private static func appendEscaped(_ identifier: String, to text: inout String) {
        guard identifier.utf8.contains(where: needsEscape) else {
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
