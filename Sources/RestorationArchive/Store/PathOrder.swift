/// The nodes of a save in the store's order (a path's UTF-8 bytes, as the primary key sorts
/// them: a parent before everything below it), with the checks a save makes on its nodes
/// before writing: each node is valid, each path is unique (R2) and, for a full save, each
/// node's parent is among the nodes.
///
/// The paths' bytes are copied once into one buffer, sorted there, and checked in that order:
/// equal paths are next to each other, and a node's parent is found on a
/// ``PathPrefixStack``. A dictionary of paths cost two hashes of a path per node, and sorting
/// by ``RestorationPath/<`` a lookup of both nodes per comparison: together a tenth of a full
/// save.
///
/// Swift's `String` equality (and so ``RestorationPath``'s) is canonical equivalence, under
/// which different bytes can be the same path (`"é"` composed or not, or the Kelvin sign and
/// `K`). Such paths are one path to the engine, so a save refuses them as duplicates: when
/// any path is not ASCII (for which bytes and canonical equivalence agree), duplicates are
/// looked for among the paths themselves too. A parent is found by its bytes, as the store
/// finds it (an incremental save's parent lookup, and a restore's order, where a parent comes
/// before its children): a child whose path begins with another form of its parent's is
/// refused (``ArchiveStoreError/invalidNode(_:_:)``, saying why), where it would be saved and
/// then never restored.
struct PathOrder {
    /// The nodes' indexes in path order.
    let indexes: [Int]

    /// Checks `nodes` and orders them.
    /// - Parameter requireParents: whether every node's parent must be among the nodes (a full
    ///   save), or may be in the archive already (an incremental one).
    /// - Throws: for the first node in `nodes` with a problem, in this order:
    ///   ``ArchiveStoreError/invalidNode(_:_:)``, ``ArchiveStoreError/duplicatePath(_:firstClass:secondClass:)``
    ///   (naming the path's first node and the second), ``ArchiveStoreError/missingParent(_:)``
    ///   (or `invalidNode` when the parent is there in another Unicode form).
    init(_ nodes: [ArchivedNode], requireParents: Bool) throws(ArchiveStoreError) {
        for node in nodes { try node.validate() }
        let texts = Texts(nodes)
        let strings = texts.isASCII ? nil : try Self.checkDuplicateStrings(nodes)
        indexes = try texts.withBytes { bytes -> Result<[Int], ArchiveStoreError> in
            let order = texts.sorted(in: bytes)
            if let (first, second) = texts.firstDuplicate(in: order, bytes) {
                return .failure(.duplicatePath(
                    nodes[second].path, firstClass: nodes[first].className, secondClass: nodes[second].className))
            }
            if requireParents, let orphan = texts.firstOrphan(in: order, bytes) {
                let path = nodes[orphan].path
                // Its parent's identifiers are there, in other bytes: `missingParent` alone
                // would name a parent the app can see among its nodes.
                if let strings, let parent = path.parentDescription, strings[parent] != nil {
                    return .failure(.invalidNode(path, Self.parentInAnotherForm))
                }
                return .failure(.missingParent(path))
            }
            return .success(order)
        }.get()
    }

    static let parentInAnotherForm = """
        its parent is there (among the nodes saved, or in the archive) with the same identifiers in \
        another Unicode form (composed or decomposed characters), but the store finds a parent by \
        its bytes: write a parent's and its children's identifiers in one form, such as NFC
        """

    /// Why an incremental save refuses a new node whose path is another Unicode form of one
    /// the archive holds.
    static let nodeInAnotherForm = """
        the archive holds a node with the same identifiers in another Unicode form (composed or \
        decomposed characters), and the store finds a node by its bytes, so this one would be a \
        second node for them: write each path's identifiers in one form, such as NFC
        """

    /// Refuses paths equal as `String`s (canonical equivalence), for paths that are not all
    /// ASCII; the bytes' order finds the rest. Returns each path's node by its text.
    private static func checkDuplicateStrings(_ nodes: [ArchivedNode]) throws(ArchiveStoreError) -> [Substring: Int] {
        var indexes: [Substring: Int] = [:]
        indexes.reserveCapacity(nodes.count)
        for (index, node) in nodes.enumerated() {
            if let first = indexes.updateValue(index, forKey: node.path.description[...]) {
                throw .duplicatePath(node.path, firstClass: nodes[first].className, secondClass: node.className)
            }
        }
        return indexes
    }

    /// The paths' text forms, their bytes one after another.
    private struct Texts {
        private var storage: [UInt8] = []
        /// Where each path's bytes are in `storage`.
        private var spans: [(start: Int, count: Int)] = []
        private(set) var isASCII = true

        init(_ nodes: [ArchivedNode]) {
            spans.reserveCapacity(nodes.count)
            storage.reserveCapacity(nodes.count * 32)
            for node in nodes {
                UTF8Text.withBytes(of: node.path.description) { text in
                    isASCII = isASCII && UTF8Text.isASCII(text)
                    spans.append((storage.count, text.count))
                    storage.append(contentsOf: text)
                }
            }
        }

        func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            storage.withUnsafeBytes(body)
        }

        private func start(_ index: Int) -> Int { spans[index].start }
        private func count(_ index: Int) -> Int { spans[index].count }

        /// The bytes of two paths in the store's order (`memcmp`'s, the shorter first when one
        /// is the other's prefix): negative, zero or positive.
        private func order(_ left: Int, _ right: Int, _ bytes: UnsafeRawBufferPointer) -> Int {
            BlobScanner.order(bytes, start(left), count(left), bytes, start(right), count(right))
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
        func firstOrphan(in order: [Int], _ bytes: UnsafeRawBufferPointer) -> Int? {
            var orphan: Int?
            var ancestors = PathPrefixStack<Void>()
            for index in order {
                let path = UnsafeRawBufferPointer(rebasing: bytes[start(index)..<start(index) &+ count(index)])
                if case .missing = ancestors.parent(of: path), index < orphan ?? .max { orphan = index }
                ancestors.push(path, ())
            }
            return orphan
        }
    }
}
