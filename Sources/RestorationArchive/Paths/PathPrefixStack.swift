/// Finds each path's parent among the paths before it, for paths taken in the store's order
/// (ascending bytes of the text form, each path once), without hashing a path.
///
/// Every path between a parent and its child in that order begins with the parent's bytes (a
/// path that differs from the parent's bytes before their end sorts either before the parent
/// or after the child). So the parent of the current path, if it was pushed, is still among
/// the pushed paths that begin the current one: those are kept, each a prefix of the next, as
/// the bytes of the deepest and the length of each.
///
/// Paths are compared by bytes, as the store compares them. Swift's `String` equality is
/// canonical equivalence, under which two different byte sequences can be the same path: the
/// restoration walk, which must find a parent as `String`s are equal, uses a dictionary of
/// ``RestorationPath`` when the paths are not all ASCII (for which the two agree); a save finds
/// parents by their bytes on purpose (``PathOrder``).
struct PathPrefixStack<Value> {
    /// What ``parent(of:)`` found.
    enum Parent {
        /// The path has one identifier.
        case root
        /// The parent was pushed, with this value.
        case found(Value)
        /// The parent was not pushed.
        case missing
    }

    /// The bytes of the deepest path pushed and still a prefix of the current one.
    private var deepest: [UInt8] = []
    /// The paths kept, shallowest first: each one's length (its bytes are `deepest`'s first
    /// ones) and its value.
    private var entries: [(length: Int, value: Value)] = []

    /// Moves to `path`, the text bytes of a path after every path given before, and returns
    /// its parent.
    mutating func parent(of path: UnsafeRawBufferPointer) -> Parent {
        let common = deepest.withUnsafeBytes { Self.commonPrefixLength($0, path) }
        while let last = entries.last, last.length > common { entries.removeLast() }
        guard let parentLength = RestorationPath.lastSlash(in: path) else { return .root }
        for entry in entries.reversed() where entry.length <= parentLength {
            return entry.length == parentLength ? .found(entry.value) : .missing
        }
        return .missing
    }

    /// Pushes `path`, the one last given to ``parent(of:)``, so that paths below it find it.
    mutating func push(_ path: UnsafeRawBufferPointer, _ value: Value) {
        deepest.removeAll(keepingCapacity: true)
        deepest.append(contentsOf: path)
        entries.append((path.count, value))
    }

    /// How many first bytes `a` and `b` have in common, compared a word at a time.
    static func commonPrefixLength(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let count = min(a.count, b.count)
        var index = 0
        while count &- index >= 8 {
            let difference = a.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                ^ b.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // In little-endian order the first byte is the lowest.
            if difference != 0 { return index &+ UInt64(littleEndian: difference).trailingZeroBitCount / 8 }
            index &+= 8
        }
        while index < count && a[index] == b[index] { index &+= 1 }
        return index
    }
}
