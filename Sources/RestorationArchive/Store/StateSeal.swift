#if Encryption
internal import Crypto
#endif

/// How node states are kept on disk: as they are, or sealed under the app's key.
///
/// A sealed state is `0xE1`, then AES-GCM's 12-byte nonce, the ciphertext and the 16-byte tag.
/// The associated data binds it to its node (``Place``): the archive's name, the node's path,
/// its class name, class version and order, and the generation that wrote the row. A sealed
/// state moved to another node or archive, replayed from another generation, or given another
/// class, version or order, does not open. States the app stores never start with `0xE1` (the
/// blob format starts with its version, 1; the store refuses raw states that do), so a sealed
/// state is recognised even by a library built without the Encryption trait.
///
/// States sealed before the class, version and order were bound (associated data
/// `restoration-archive/state/v1`: archive, path, generation) still open, bound to what they
/// were bound to, until a save writes their nodes again.
struct StateSeal: Sendable {
    /// The first byte of every sealed state.
    static let marker: UInt8 = 0xE1
    /// Bytes a sealed state has beyond its plaintext: marker, nonce, tag.
    static let overhead = 1 + 12 + 16

    static func isSealed(_ stored: [UInt8]) -> Bool { stored.first == marker }

    /// Everything a sealed state is bound to: its node as stored, and the generation that
    /// wrote its row.
    struct Place {
        var archive: ArchiveName
        var pathText: String
        var className: String
        var classVersion: Int64
        var order: Int64
        var born: Generation

        /// Calls `body` with the associated data: a version, each text length-prefixed (so
        /// that no two places read the same), then the numbers, written into one temporary
        /// buffer (a restore builds it for every node).
        func withAssociatedData<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            UTF8Text.withBytes(of: archive.rawValue) { archive in
                UTF8Text.withBytes(of: pathText) { path in
                    UTF8Text.withBytes(of: className) { className in
                        Self.version2.withUnsafeBytes { version in
                            let count = version.count + 8 + archive.count + 8 + path.count + 8 + className.count + 3 * 8
                            return withUnsafeTemporaryAllocation(byteCount: count, alignment: 8) { buffer in
                                var offset = Self.put(version, into: buffer, at: 0)
                                offset = Self.put(text: archive, into: buffer, at: offset)
                                offset = Self.put(text: path, into: buffer, at: offset)
                                offset = Self.put(text: className, into: buffer, at: offset)
                                offset = Self.put(classVersion, into: buffer, at: offset)
                                offset = Self.put(order, into: buffer, at: offset)
                                _ = Self.put(born.rawValue, into: buffer, at: offset)
                                return body(UnsafeRawBufferPointer(buffer))
                            }
                        }
                    }
                }
            }
        }

        private static func put(_ bytes: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
            UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + bytes.count]).copyMemory(from: bytes)
            return offset + bytes.count
        }

        private static func put(text: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
            put(text, into: buffer, at: put(Int64(text.count), into: buffer, at: offset))
        }

        private static func put(_ number: Int64, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
            buffer.storeBytes(of: number.littleEndian, toByteOffset: offset, as: Int64.self)
            return offset + 8
        }

        private static let version2 = Array("restoration-archive/state/v2".utf8)

        /// The associated data of states sealed before the class, version and order were bound.
        var unboundAssociatedData: [UInt8] {
            Self.unboundAssociatedData(archive: archive, pathText: pathText, born: born)
        }

        static func unboundAssociatedData(archive: ArchiveName, pathText: String, born: Generation) -> [UInt8] {
            var data = Array("restoration-archive/state/v1".utf8)
            for field in [archive.rawValue, pathText] { append(field, to: &data) }
            withUnsafeBytes(of: born.rawValue.littleEndian) { data += $0 }
            return data
        }

        private static func append(_ field: String, to data: inout [UInt8]) {
            withUnsafeBytes(of: UInt64(field.utf8.count).littleEndian) { data += $0 }
            data += field.utf8
        }
    }

    /// The sealed constant that tells a wrong key from damage when a store opens. Its
    /// associated data is the one it has had since stores were first sealed.
    func keyCheck() throws -> [UInt8] {
        try Self.keyCheckData.withUnsafeBytes { data in Result { try seal(Self.keyCheckText, authenticating: data) } }.get()
    }

    /// Whether `stored` is the key check sealed under this key.
    func matchesKeyCheck(_ stored: [UInt8]) -> Bool {
        Self.keyCheckData.withUnsafeBytes { data in open(stored, authenticating: data) } == Self.keyCheckText
    }

    private static let keyCheckText = Array("restoration archive key check".utf8)
    // Not a restoration path's text ('/' alone is no path), so no node's place can match it.
    private static let keyCheckData = Place.unboundAssociatedData(archive: .main, pathText: "/", born: 0)

    /// Seals a node's state for its place in the store.
    func seal(_ state: [UInt8], for place: Place) throws -> [UInt8] {
        try place.withAssociatedData { data in Result { try seal(state, authenticating: data) } }.get()
    }

    /// Opens a sealed state; `nil` when it does not open under this key at this place. A state
    /// that does not open bound to the whole place is tried as one sealed before the class,
    /// version and order were bound: no such state can be made without the key.
    func open(_ stored: [UInt8], for place: Place) -> [UInt8]? {
        place.withAssociatedData { data in open(stored, authenticating: data) }
            ?? place.unboundAssociatedData.withUnsafeBytes { data in open(stored, authenticating: data) }
    }

    #if Encryption
    let key: SymmetricKey

    private func seal(_ state: [UInt8], authenticating data: UnsafeRawBufferPointer) throws -> [UInt8] {
        let box = try AES.GCM.seal(state, using: key, authenticating: data)
        guard let combined = box.combined else { throw ArchiveStoreError.damagedStore("AES-GCM gave no combined box") }
        return [Self.marker] + combined
    }

    private func open(_ stored: [UInt8], authenticating data: UnsafeRawBufferPointer) -> [UInt8]? {
        guard Self.isSealed(stored), stored.count >= Self.overhead,
            let box = try? AES.GCM.SealedBox(combined: stored.dropFirst()),
            let state = try? AES.GCM.open(box, using: key, authenticating: data)
        else { return nil }
        return [UInt8](state)
    }
    #else
    // Without the trait no seal exists (a store's `seal` is always nil); these keep the
    // callers free of conditions.
    private func seal(_ state: [UInt8], authenticating data: UnsafeRawBufferPointer) throws -> [UInt8] { state }
    private func open(_ stored: [UInt8], authenticating data: UnsafeRawBufferPointer) -> [UInt8]? { nil }
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
