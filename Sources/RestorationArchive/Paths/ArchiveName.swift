/// The name of one archive in a store: one per scene or window session, ``main`` by default.
///
/// A name is 1 to 256 bytes of UTF-8 without control characters, so that it prints safely.
/// Names are equal when their bytes are, as the store compares them: `"Caf\u{E9}"` and
/// `"Cafe\u{301}"` name two archives.
public struct ArchiveName: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The longest name accepted, in UTF-8 bytes.
    public static let maximumLength = 256

    /// The archive of an app without scenes.
    public static let main = ArchiveName(trusted: "main")

    /// The name as stored.
    public let rawValue: String

    /// - Throws: ``ArchiveStoreError/invalidArchiveName(_:)`` for an empty or too long name,
    ///   or one holding control characters.
    public init(_ rawValue: String) throws(ArchiveStoreError) {
        guard !rawValue.isEmpty, rawValue.utf8.count <= Self.maximumLength else {
            throw .invalidArchiveName("an archive name must be 1 to \(Self.maximumLength) bytes of UTF-8")
        }
        guard !rawValue.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidArchiveName("an archive name may not contain control characters")
        }
        self.rawValue = rawValue
    }

    init(trusted rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public static func < (lhs: ArchiveName, rhs: ArchiveName) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    /// Whether the names are the same bytes, as the store finds an archive by its name: one
    /// name in two Unicode forms (composed or decomposed characters, which `String` finds
    /// equal) names two archives. Equal as strings, the two were one archive to an engine and
    /// two in the store, and a save of one was computed against the other's nodes.
    public static func == (lhs: ArchiveName, rhs: ArchiveName) -> Bool {
        UTF8Text.sameBytes(lhs.rawValue, rhs.rawValue)
    }

    public func hash(into hasher: inout Hasher) {
        UTF8Text.withBytes(of: rawValue) { hasher.combine(bytes: $0) }
    }
}

/// A generation number: every successful save of an archive makes generation g + 1.
///
/// Numbers are never reused within an archive, not even after it is discarded. An archive the
/// store has forgotten (one discarded before the newest
/// ``ArchiveStore/retainedDiscardedArchives``), or one of an erased store, is gone: a save under
/// its name starts a new archive at generation 1.
public struct Generation: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByIntegerLiteral
{
    /// The number.
    public let rawValue: Int64

    /// Generation `rawValue`.
    public init(rawValue: Int64) { self.rawValue = rawValue }
    /// Generation `rawValue`.
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public init(integerLiteral value: Int64) { self.rawValue = value }

    /// The generation that follows.
    public var next: Generation { Generation(rawValue + 1) }

    public var description: String { String(rawValue) }

    public static func < (lhs: Generation, rhs: Generation) -> Bool { lhs.rawValue < rhs.rawValue }
}
