/// Bounds on what decoding a blob may read and allocate.
///
/// Every length and count in a blob is checked against these limits and against the bytes
/// actually present before anything is allocated, so a hostile or damaged blob costs memory
/// and time in proportion to its own size, whatever it claims. (``StateDecoder`` indexes a
/// container in at most 4 bytes per byte of blob; ``StateValue/decode(blob:limits:)`` builds a
/// tree, a few tens of bytes per value.) A negative limit allows what 0 allows.
public struct DecodingLimits: Hashable, Sendable {
    /// The largest blob accepted, in bytes.
    public var maximumBlobSize: Int
    /// The longest string (or key, URL, reference) accepted, in UTF-8 bytes.
    public var maximumStringLength: Int
    /// The longest byte value accepted.
    public var maximumBytesLength: Int
    /// The deepest nesting of containers and arrays accepted (the root container is depth 1).
    public var maximumDepth: Int
    /// The most elements (array values, or container entries) accepted in one array or container.
    public var maximumElementCount: Int

    /// Limits with these bounds; each defaults to the bound of ``default``.
    public init(
        maximumBlobSize: Int = 16 << 20, maximumStringLength: Int = 16 << 20, maximumBytesLength: Int = 16 << 20,
        maximumDepth: Int = 64, maximumElementCount: Int = 1 << 20
    ) {
        self.maximumBlobSize = maximumBlobSize
        self.maximumStringLength = maximumStringLength
        self.maximumBytesLength = maximumBytesLength
        self.maximumDepth = maximumDepth
        self.maximumElementCount = maximumElementCount
    }

    /// The defaults: 16 MiB blobs, strings and bytes; depth 64; 1,048,576 elements per container.
    public static let `default` = DecodingLimits()

    /// Whether every blob ``StateEncoder`` writes decodes under these limits: none is
    /// stricter than ``default``, which bounds what the encoder writes (its blob size, depth
    /// and counts; a string or byte value is no longer than its blob).
    var admitsEveryEncodedBlob: Bool {
        let coder = Self.default
        return maximumBlobSize >= coder.maximumBlobSize && maximumStringLength >= coder.maximumBlobSize
            && maximumBytesLength >= coder.maximumBlobSize && maximumDepth >= coder.maximumDepth
            && maximumElementCount >= coder.maximumElementCount
    }
}
