#if Encryption
internal import Crypto
#endif

/// How node states are kept on disk: as they are, or sealed under the app's key.
///
/// A sealed state is `0xE1`, then AES-GCM's 12-byte nonce, the ciphertext and the 16-byte tag.
/// The associated data binds it to its place: the archive's name, the node's path and the
/// generation that wrote the row. A sealed state moved to another node or archive, or
/// replayed from another generation, does not open. States the app stores never start with
/// `0xE1` (the blob format starts with its version, 1; the store refuses raw states that do),
/// so a sealed state is recognised even by a library built without the Encryption trait.
struct StateSeal: Sendable {
    /// The first byte of every sealed state.
    static let marker: UInt8 = 0xE1
    /// Bytes a sealed state has beyond its plaintext: marker, nonce, tag.
    static let overhead = 1 + 12 + 16

    static func isSealed(_ stored: [UInt8]) -> Bool { stored.first == marker }

    /// The sealed constant that tells a wrong key from damage when a store opens.
    func keyCheck() throws -> [UInt8] {
        try seal(Self.keyCheckText, archive: .main, pathText: Self.keyCheckPath, born: 0)
    }

    /// Whether `stored` is the key check sealed under this key.
    func matchesKeyCheck(_ stored: [UInt8]) -> Bool {
        open(stored, archive: .main, pathText: Self.keyCheckPath, born: 0) == Self.keyCheckText
    }

    private static let keyCheckText = Array("restoration archive key check".utf8)
    // Not a restoration path's text ('/' alone is no path), so no node's place can match it.
    private static let keyCheckPath = "/"

    #if Encryption
    let key: SymmetricKey

    /// Seals a node's state for its place in the store.
    func seal(_ state: [UInt8], archive: ArchiveName, pathText: String, born: Generation) throws -> [UInt8] {
        let box = try AES.GCM.seal(state, using: key, authenticating: Self.place(archive, pathText, born))
        guard let combined = box.combined else { throw ArchiveStoreError.damagedStore("AES-GCM gave no combined box") }
        return [Self.marker] + combined
    }

    /// Opens a sealed state; `nil` when it does not open under this key at this place.
    func open(_ stored: [UInt8], archive: ArchiveName, pathText: String, born: Generation) -> [UInt8]? {
        guard Self.isSealed(stored), stored.count >= Self.overhead,
            let box = try? AES.GCM.SealedBox(combined: stored.dropFirst()),
            let state = try? AES.GCM.open(box, using: key, authenticating: Self.place(archive, pathText, born))
        else { return nil }
        return [UInt8](state)
    }

    /// The associated data: each field length-prefixed, so no two places read the same.
    private static func place(_ archive: ArchiveName, _ path: String, _ born: Generation) -> [UInt8] {
        var data = Array("restoration-archive/state/v1".utf8)
        for field in [Array(archive.rawValue.utf8), Array(path.utf8)] {
            withUnsafeBytes(of: UInt64(field.count).littleEndian) { data += $0 }
            data += field
        }
        withUnsafeBytes(of: born.rawValue.littleEndian) { data += $0 }
        return data
    }
    #else
    // Without the trait no seal exists (a store's `seal` is always nil); these keep the
    // callers free of conditions.
    func seal(_ state: [UInt8], archive: ArchiveName, pathText: String, born: Generation) throws -> [UInt8] { state }
    func open(_ stored: [UInt8], archive: ArchiveName, pathText: String, born: Generation) -> [UInt8]? { nil }
    #endif
}

#if Encryption
/// The key that seals every node's state on disk (AES-GCM with a 256-bit key).
///
/// Keep it where the platform keeps secrets (the keychain, a secret service), never in the
/// store. A store opened with a different key refuses with
/// ``ArchiveStoreError/wrongEncryptionKey``; one opened without a key reads headers and paths
/// but refuses states with ``ArchiveStoreError/encryptionKeyRequired(_:_:)``.
public struct StateEncryptionKey: Hashable, Sendable {
    let key: SymmetricKey

    /// A key from 32 bytes.
    ///
    /// - Throws: ``ArchiveStoreError/invalidConfiguration(_:)`` unless `bytes` holds exactly 32 bytes.
    public init(bytes: [UInt8]) throws(ArchiveStoreError) {
        guard bytes.count == 32 else { throw .invalidConfiguration("an encryption key must be 32 bytes") }
        key = SymmetricKey(data: bytes)
    }

    /// A new random key.
    public static func generate() -> StateEncryptionKey {
        StateEncryptionKey(key: SymmetricKey(size: .bits256))
    }

    private init(key: SymmetricKey) { self.key = key }

    /// The key's 32 bytes, to keep in the platform's secret store.
    public var bytes: [UInt8] { key.withUnsafeBytes { [UInt8]($0) } }

    public static func == (lhs: StateEncryptionKey, rhs: StateEncryptionKey) -> Bool { lhs.key == rhs.key }

    /// Hashes no key material.
    public func hash(into hasher: inout Hasher) { hasher.combine(key.bitCount) }
}
#endif
