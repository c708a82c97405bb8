/// Owns a blob whose frame (size, format version, checksum) is checked, and lends its bytes
/// to a ``BlobScanner`` for each read.
struct BlobReader: Sendable {
    /// Nesting beyond this is refused whatever the limits say, so recursion stays shallow.
    static let depthCeiling = 512

    let blob: [UInt8]
    let limits: DecodingLimits
    /// The end of the content (the checksum follows).
    let end: Int
    private let maximumDepth: Int
    private let maximumKeyLength: Int
    /// Set once ``readRootContainer(indexing:)`` has checked the whole content.
    private(set) var isChecked = false

    /// Checks the frame: size, version and checksum.
    init(blob: [UInt8], limits: DecodingLimits) throws(StateCodingError) {
        guard blob.count <= limits.maximumBlobSize else {
            throw .limitExceeded(limit: "blob size (\(limits.maximumBlobSize) bytes)", offset: 0)
        }
        guard let version = blob.first else { throw .truncated(offset: 0) }
        guard version <= BlobFormat.version else {
            throw .unsupportedFormatVersion(found: Int(version), supported: Int(BlobFormat.version))
        }
        guard version >= 1 else { throw .malformed(reason: "format version 0 does not exist", offset: 0) }
        // Version, an entry count and the checksum at least.
        guard blob.count >= 6 else { throw .truncated(offset: blob.count) }
        let end = blob.count - 4
        let stored = UInt32(blob[end]) | UInt32(blob[end + 1]) << 8 | UInt32(blob[end + 2]) << 16
            | UInt32(blob[end + 3]) << 24
        guard CRC32C.checksum(blob, count: end) == stored else { throw .checksumMismatch }
        self.blob = blob
        self.limits = limits
        self.end = end
        self.maximumDepth = min(limits.maximumDepth, Self.depthCeiling)
        self.maximumKeyLength = min(StateEncoder.maximumKeyLength, limits.maximumStringLength)
    }

    /// Reads with the blob's bytes lent to a scanner.
    @inline(__always)
    func withScanner<Result, Failure: Error>(_ body: (BlobScanner) throws(Failure) -> Result) throws(Failure) -> Result {
        try blob.withUnsafeBufferPointer { (bytes) throws(Failure) -> Result in
            try body(
                BlobScanner(
                    bytes: bytes, end: end, limits: limits, maximumDepth: maximumDepth,
                    maximumKeyLength: maximumKeyLength, isChecked: isChecked))
        }
    }

    /// Checks the whole content and lists the root's entries in the same pass: the quick
    /// check first, and the full one (which names the error) for anything it does not accept.
    mutating func readRootContainer(indexing entries: inout BlobEntryIndex) throws(StateCodingError) {
        if withScanner({ $0.quickCheckRoot(entries: &entries) }) {
            assert(fullCheckAgrees(with: entries), "the quick check accepted a blob the full check refuses")
        } else {
            entries = BlobEntryIndex()
            try fullCheck(indexing: &entries)
        }
        isChecked = true
    }

    /// The check pass that names what is wrong (the tests compare the quick one with it).
    func fullCheck(indexing entries: inout BlobEntryIndex) throws(StateCodingError) {
        let end = end
        try withScanner { (scanner) throws(StateCodingError) in
            var offset = 1
            _ = try scanner.checkMapBody(at: &offset, depth: 1, entries: &entries, indexing: true)
            guard offset == end else { throw .trailingBytes(offset: offset) }
        }
    }

    /// Whether the full check accepts the blob and lists the same entries (debug builds).
    private func fullCheckAgrees(with entries: BlobEntryIndex) -> Bool {
        var full = BlobEntryIndex()
        guard (try? fullCheck(indexing: &full)) != nil else { return false }
        return full.count == entries.count
            && (0..<full.count).allSatisfy { full[$0].keyRange == entries[$0].keyRange }
    }

    /// Builds the root container's tree, checking everything as it goes.
    func readRootTree() throws(StateCodingError) -> [String: StateValue] {
        let end = end
        return try withScanner { (scanner) throws(StateCodingError) in
            var offset = 1
            let root = try scanner.readMapBody(at: &offset, depth: 1)
            guard offset == end else { throw .trailingBytes(offset: offset) }
            return root
        }
    }

    /// The value at `offset`, as a tree.
    func value(at offset: Int, depth: Int) throws(StateCodingError) -> StateValue {
        try withScanner { (scanner) throws(StateCodingError) in
            var offset = offset
            return try scanner.readValue(at: &offset, depth: depth)
        }
    }

    /// The string in a checked range.
    func string(_ range: Range<Int>) -> String {
        withScanner { $0.string(range) }
    }

    /// The bytes in a checked range.
    func bytes(_ range: Range<Int>) -> [UInt8] {
        blob.withUnsafeBufferPointer { Array(UnsafeBufferPointer(rebasing: $0[range])) }
    }
}
