/// One entry of a container: where its key's bytes are; its value follows the key.
///
/// Packed in one word (the key's offset above 11 bits, its length below: keys are at most
/// 1,024 bytes), so that a small container's entries fit inline in ``BlobEntryIndex``.
struct BlobEntry {
    private static let lengthBits: UInt64 = 11
    private let bits: UInt64

    init(key: Int, keyLength: Int) {
        assert(keyLength < 1 << Self.lengthBits && key >= 0)
        bits = UInt64(key) << Self.lengthBits | UInt64(keyLength)
    }

    var key: Int { Int(bits >> Self.lengthBits) }
    var keyLength: Int { Int(bits & (1 << Self.lengthBits - 1)) }
    /// Where the entry's value starts.
    var value: Int { key + keyLength }
    var keyRange: Range<Int> { key..<key + keyLength }
}

/// The entries of one container, in the order they were appended.
///
/// The decoder appends them in the blob's order (ascending keys), which ``value(of:in:)``
/// relies on: it binary-searches the entries that spilled to the array. The encoder appends
/// them in encoding order and sorts them itself; it never looks a key up here.
///
/// Up to ``inlineCapacity`` entries are kept inline: an object's state is usually a handful of
/// keys, and allocating an array for them would cost more than all of its lookups.
struct BlobEntryIndex: Sendable {
    static let inlineCapacity = 8

    private var inline: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// The entries when there are more than fit inline.
    private var overflow: [BlobEntry] = []
    private var isInline = true
    private(set) var count = 0

    /// Makes room for `count` entries.
    mutating func reserve(_ count: Int) {
        if count > Self.inlineCapacity { spill(capacity: count) }
    }

    mutating func append(_ entry: BlobEntry) {
        if isInline && count == Self.inlineCapacity { spill(capacity: count + 1) }
        if isInline {
            withUnsafeMutableBytes(of: &inline) { $0.storeBytes(of: entry, toByteOffset: count &* 8, as: BlobEntry.self) }
        } else {
            appendToOverflow(entry)
        }
        count &+= 1
    }

    /// Out of line, as the other code for containers of more than ``inlineCapacity`` keys:
    /// the common case's code stays short, which counts when it is cold (at launch).
    @inline(never)
    private mutating func appendToOverflow(_ entry: BlobEntry) {
        overflow.append(entry)
    }

    /// Appends an entry to an index that has room for it inline (the quick check's append,
    /// for containers of at most ``inlineCapacity`` entries): no code for spilling.
    @inline(__always)
    mutating func appendInline(_ entry: BlobEntry) {
        precondition(isInline && count < Self.inlineCapacity)
        withUnsafeMutableBytes(of: &inline) { $0.storeBytes(of: entry, toByteOffset: count &* 8, as: BlobEntry.self) }
        count &+= 1
    }

    /// Moves the entries to the array.
    @inline(never)
    private mutating func spill(capacity: Int) {
        guard isInline else { return }
        overflow.reserveCapacity(capacity)
        overflow.append(contentsOf: all)
        isInline = false
    }

    subscript(index: Int) -> BlobEntry {
        precondition(index >= 0 && index < count)
        guard isInline else { return overflow[index] }
        return withUnsafeBytes(of: inline) { $0.load(fromByteOffset: index &* 8, as: BlobEntry.self) }
    }

    /// The entries in order.
    var all: [BlobEntry] { (0..<count).map { self[$0] } }

    /// Where the value of the entry whose key is `wanted` starts, if there is one; `blob`
    /// holds the keys.
    @inline(__always)
    func value(of wanted: UnsafeRawBufferPointer, in blob: UnsafeRawBufferPointer) -> Int? {
        guard isInline else { return Self.search(overflow, wanted, blob) }
        return withUnsafeBytes(of: inline) { inline -> Int? in
            // Few keys: compare lengths first, then bytes.
            for index in 0..<count {
                let entry = inline.load(fromByteOffset: index &* 8, as: BlobEntry.self)
                if entry.keyLength == wanted.count
                    && BlobScanner.order(blob, entry.key, entry.keyLength, wanted, 0, wanted.count) == 0
                {
                    return entry.value
                }
            }
            return nil
        }
    }

    /// Binary search on the key bytes (entries ascend).
    @inline(never)
    private static func search(_ entries: [BlobEntry], _ wanted: UnsafeRawBufferPointer, _ blob: UnsafeRawBufferPointer)
        -> Int?
    {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let entry = entries[middle]
            let order = BlobScanner.order(blob, entry.key, entry.keyLength, wanted, 0, wanted.count)
            if order == 0 { return entry.value }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }
}
