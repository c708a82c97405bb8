#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The nodes of a save in the store's order (a path's UTF-8 bytes, as the primary key sorts
/// them: a parent before everything below it), with the checks a save makes on its nodes
/// before writing: each node is valid, each path is unique (R2) and, for a full save, each
/// node's parent is among the nodes.
///
/// The paths' bytes are copied once into one buffer, sorted there, and checked in that order:
/// equal paths are next to each other, and a node's parent is found on a stack of the paths
/// that lead to it. A dictionary of paths cost two hashes of a path per node, and sorting by
/// ``RestorationPath/<`` a lookup of both nodes per comparison: together a tenth of a full save.
///
/// Bytes tell paths apart as the store does, but Swift's `String` equality (and so
/// ``RestorationPath``'s) is canonical equivalence, under which different bytes can be the
/// same path (`"é"` composed or not, or the Kelvin sign and `K`). Such paths are one path to
/// the engine, so a save refuses them as duplicates: when any path is not ASCII (for which
/// bytes and canonical equivalence agree), the checks are made on the paths themselves.
struct PathOrder {
    /// The nodes' indexes in path order.
    let indexes: [Int]

    /// Checks `nodes` and orders them.
    /// - Parameter requireParents: whether every node's parent must be among the nodes (a full
    ///   save), or may be in the archive already (an incremental one).
    /// - Throws: for the first node in `nodes` with a problem, in this order:
    ///   ``ArchiveStoreError/invalidNode(_:_:)``, ``ArchiveStoreError/duplicatePath(_:firstClass:secondClass:)``
    ///   (naming the path's first node and the second), ``ArchiveStoreError/missingParent(_:)``.
    init(_ nodes: [ArchivedNode], requireParents: Bool) throws(ArchiveStoreError) {
        for node in nodes { try node.validate() }
        let texts = Texts(nodes)
        if !texts.isASCII {
            indexes = try Self.byPaths(nodes, requireParents: requireParents)
            return
        }
        indexes = try texts.withBytes { bytes -> Result<[Int], ArchiveStoreError> in
            let order = texts.sorted(in: bytes)
            if let (first, second) = texts.firstDuplicate(in: order, bytes) {
                return .failure(.duplicatePath(
                    nodes[second].path, firstClass: nodes[first].className, secondClass: nodes[second].className))
            }
            if requireParents, let orphan = texts.firstOrphan(in: order, bytes) {
                return .failure(.missingParent(nodes[orphan].path))
            }
            return .success(order)
        }.get()
    }

    /// The general route, for paths that are not all ASCII: paths compared as `String`s.
    private static func byPaths(_ nodes: [ArchivedNode], requireParents: Bool) throws(ArchiveStoreError) -> [Int] {
        var indexes: [Substring: Int] = [:]
        indexes.reserveCapacity(nodes.count)
        for (index, node) in nodes.enumerated() {
            if let first = indexes.updateValue(index, forKey: node.path.description[...]) {
                throw .duplicatePath(node.path, firstClass: nodes[first].className, secondClass: node.className)
            }
        }
        if requireParents {
            for node in nodes {
                if let parent = node.path.parentDescription, indexes[parent] == nil {
                    throw .missingParent(node.path)
                }
            }
        }
        return nodes.indices.sorted { nodes[$0].path < nodes[$1].path }
    }

    /// The paths' text forms, their bytes one after another.
    private struct Texts {
        private var storage: [UInt8] = []
        /// Each path's bytes in `storage`: its start above 32 bits, its length below.
        private var spans: [UInt64] = []
        /// Where each path's parent's text ends (the offset of the last `/` in its own), or -1
        /// for a root.
        private var parentLengths: [Int32] = []
        private(set) var isASCII = true

        init(_ nodes: [ArchivedNode]) {
            spans.reserveCapacity(nodes.count)
            parentLengths.reserveCapacity(nodes.count)
            storage.reserveCapacity(nodes.count * 32)
            for node in nodes {
                UTF8Text.withBytes(of: node.path.description) { text in
                    isASCII = isASCII && UTF8Text.isASCII(text)
                    spans.append(UInt64(storage.count) << 32 | UInt64(text.count))
                    parentLengths.append(RestorationPath.lastSlash(in: text).map { Int32($0) } ?? -1)
                    storage.append(contentsOf: text)
                }
            }
        }

        func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            storage.withUnsafeBytes(body)
        }

        private func start(_ index: Int) -> Int { Int(spans[index] >> 32) }
        private func count(_ index: Int) -> Int { Int(spans[index] & 0xFFFF_FFFF) }

        /// The bytes of two paths compared as `memcmp` compares them, the shorter first when
        /// one is the other's prefix.
        private func order(_ left: Int, _ right: Int, _ bytes: UnsafeRawBufferPointer) -> Int32 {
            let leftCount = count(left)
            let rightCount = count(right)
            let common = min(leftCount, rightCount)
            if common > 0, let base = bytes.baseAddress {
                let order = memcmp(base + start(left), base + start(right), common)
                if order != 0 { return order }
            }
            return leftCount == rightCount ? 0 : (leftCount < rightCount ? -1 : 1)
        }

        /// Whether `prefix`'s bytes begin `path`'s (or are all of them).
        private func isPrefix(_ prefix: Int, of path: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
            let prefixCount = count(prefix)
            guard prefixCount <= count(path), let base = bytes.baseAddress else { return prefixCount == 0 }
            return memcmp(base + start(prefix), base + start(path), prefixCount) == 0
        }

        /// The indexes in path order; equal paths in index order.
        func sorted(in bytes: UnsafeRawBufferPointer) -> [Int] {
            var order = Array(spans.indices)
            order.sort { left, right in
                let comparison = self.order(left, right, bytes)
                return comparison == 0 ? left < right : comparison < 0
            }
            return order
        }

        /// The first node (by index) whose path an earlier node has, with that earlier node.
        /// Equal paths are adjacent in `order`, each run in index order.
        func firstDuplicate(in order: [Int], _ bytes: UnsafeRawBufferPointer) -> (first: Int, second: Int)? {
            var found: (first: Int, second: Int)?
            var runStart = 0
            for position in order.indices.dropFirst() {
                if self.order(order[position - 1], order[position], bytes) != 0 {
                    runStart = position
                } else if position == runStart + 1, order[position] < found?.second ?? .max {
                    found = (order[runStart], order[position])
                }
            }
            return found
        }

        /// The first node (by index) whose parent is not among the nodes; the paths are unique.
        ///
        /// Walked in path order with a stack of the paths seen that begin the current one, each
        /// longer than the one below. Every path between a parent and its child in that order
        /// begins with the parent's bytes, so the parent is still on the stack at the child,
        /// where it is the entry as long as the child's parent text.
        func firstOrphan(in order: [Int], _ bytes: UnsafeRawBufferPointer) -> Int? {
            var orphan: Int?
            var stack: [Int] = []
            for index in order {
                while let top = stack.last, !isPrefix(top, of: index, bytes) { stack.removeLast() }
                let parentLength = Int(parentLengths[index])
                if parentLength >= 0 {
                    var position = stack.count - 1
                    while position >= 0 && count(stack[position]) > parentLength { position -= 1 }
                    if position < 0 || count(stack[position]) != parentLength, index < orphan ?? .max {
                        orphan = index
                    }
                }
                stack.append(index)
            }
            return orphan
        }
    }
}
