import RestorationArchive
import TestSupport

/// Archives with random shapes and state, and a digest that names their content.
enum Content {
    static let header = SaveHeader(
        appVersion: "11.0", appBuild: "1024", platform: "linux", idiom: "phone",
        appValues: ["MyAppVersion": .string("11.0")])

    /// A random tree of `count` nodes under `Root`, 1 to 6 components deep.
    static func tree(count: Int, stateSize: ClosedRange<Int> = 8...400, using random: inout SeededGenerator) throws
        -> [ArchivedNode]
    {
        var nodes = [try node(at: RestorationPath("Root"), stateSize: stateSize, using: &random)]
        var parents = [nodes[0].path]
        while nodes.count < count {
            let parent = parents[Int.random(in: 0..<parents.count, using: &random)]
            let path = try parent.appending("n\(nodes.count)")
            nodes.append(try node(at: path, stateSize: stateSize, using: &random))
            if path.depth < 6 { parents.append(path) }
        }
        return nodes
    }

    static func node(at path: RestorationPath, stateSize: ClosedRange<Int>, using random: inout SeededGenerator)
        throws -> ArchivedNode
    {
        ArchivedNode(
            path: path, className: "Screen\(Int.random(in: 0..<5, using: &random))",
            classVersion: Int.random(in: 0..<3, using: &random), order: Int.random(in: 0..<8, using: &random),
            state: try state(bytes: Int.random(in: stateSize, using: &random), using: &random))
    }

    /// A valid blob, as an app's coder writes it: a few typed values and `bytes` random bytes.
    static func state(bytes: Int, using random: inout SeededGenerator) throws -> [UInt8] {
        let coder = StateEncoder()
        try coder.encode(Int.random(in: .min ... .max, using: &random), forKey: "count")
        try coder.encode(Double.random(in: -1e9...1e9, using: &random), forKey: "offset")
        try coder.encode(Bool.random(using: &random), forKey: "editing")
        try coder.encode("title \(random.next())", forKey: "title")
        try coder.encodeBytes(random.bytes(bytes), forKey: "data")
        return try coder.encodedBlob()
    }

    /// A random change to `nodes`: some states rewritten, a few nodes added, sometimes a
    /// subtree removed. Returns the new tree and the change as an incremental save takes it.
    static func change(_ nodes: [ArchivedNode], using random: inout SeededGenerator) throws
        -> (tree: [ArchivedNode], changed: [ArchivedNode], removed: [RestorationPath])
    {
        var tree = nodes
        var changed: [ArchivedNode] = []
        var removed: [RestorationPath] = []
        if tree.count > 3, Bool.random(using: &random) {
            let victim = tree[Int.random(in: 1..<tree.count, using: &random)].path
            removed.append(victim)
            tree.removeAll { $0.path == victim || $0.path.isDescendant(of: victim) }
        }
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let index = Int.random(in: 0..<tree.count, using: &random)
            tree[index].state = try state(bytes: Int.random(in: 8...400, using: &random), using: &random)
            changed.append(tree[index])
        }
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            let parent = tree[Int.random(in: 0..<tree.count, using: &random)].path
            guard parent.depth < 6 else { continue }
            let path = try parent.appending("a\(random.next() % 1_000_000)")
            guard !tree.contains(where: { $0.path == path }) else { continue }
            let added = try node(at: path, stateSize: 8...400, using: &random)
            tree.append(added)
            changed.append(added)
        }
        // A node changed twice is written once, as it is last.
        var latest: [RestorationPath: ArchivedNode] = [:]
        for node in changed { latest[node.path] = tree.first { $0.path == node.path } }
        return (tree, Array(latest.values), removed)
    }

    /// FNV-1a over the nodes in path order: equal digests mean equal content.
    static func digest(_ nodes: [ArchivedNode]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        func mix(_ bytes: some Sequence<UInt8>) {
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        }
        func mix(_ value: Int) { withUnsafeBytes(of: Int64(value).littleEndian) { mix($0) } }
        for node in nodes.sorted(by: { $0.path < $1.path }) {
            mix(node.path.description.utf8.count)
            mix(node.path.description.utf8)
            mix(node.className.utf8.count)
            mix(node.className.utf8)
            mix(node.classVersion)
            mix(node.order)
            mix(node.state.count)
            mix(node.state)
        }
        return hash
    }
}
