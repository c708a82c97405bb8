import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

/// What `Fixtures/schema-v6.sqlite` holds: the saves below, made by the library at schema
/// version 6 (commit f7cdb4e), before full saves kept their rows apart (v0007). The same
/// functions give the nodes each retained generation must read back after migrating.
enum SchemaV6Fixture {
    static let scene = try! ArchiveName("scene-2")
    static let closed = try! ArchiveName("closed")

    /// `main`: a full save (generation 1), then two incremental saves (2 and 3): one changes a
    /// node and removes a subtree, the next adds a node and changes another.
    static func main(_ generation: Int) throws -> [ArchivedNode] {
        var nodes = try tree(count: 12, fill: 1)
        if generation >= 2 {
            nodes = nodes.filter { !($0.path.description == "Root/n2" || $0.path.description.hasPrefix("Root/n2/")) }
            nodes = try nodes.map { $0.path.description == "Root/n1" ? try with($0, fill: 2) : $0 }
        }
        if generation >= 3 {
            nodes.append(
                ArchivedNode(path: try RestorationPath(parsing: "Root/n1/added"), className: "Added", state: try state(9)))
            nodes = try nodes.map { $0.path.description == "Root/n3" ? try with($0, fill: 3) : $0 }
        }
        return nodes.sorted { $0.path < $1.path }
    }

    /// `scene-2`: two full saves (generations 1 and 2).
    static func scene(_ generation: Int) throws -> [ArchivedNode] {
        try tree(count: 5, fill: 10 + generation).sorted { $0.path < $1.path }
    }

    /// A sample tree whose states a coder wrote (so that `check()` decodes them), each holding `fill`.
    static func tree(count: Int, fill: Int) throws -> [ArchivedNode] {
        try SampleArchives.tree(count: count).map { try with($0, fill: fill) }
    }

    static func with(_ node: ArchivedNode, fill: Int) throws -> ArchivedNode {
        var node = node
        node.state = try state(fill)
        return node
    }

    static func state(_ fill: Int) throws -> [UInt8] {
        let coder = StateEncoder()
        try coder.encode(fill, forKey: "fill")
        return try coder.encodedBlob()
    }

    /// The saves, in order.
    static func write(into store: ArchiveStore) throws {
        let header = SampleArchives.header
        try store.save(try main(1), header: header)
        let changed2 = try main(2).filter { $0.path.description == "Root/n1" }
        try store.saveChanges(changed2, removing: [try RestorationPath(parsing: "Root/n2")], basedOn: 1, header: header)
        let changed3 = try main(3).filter { ["Root/n1/added", "Root/n3"].contains($0.path.description) }
        try store.saveChanges(changed3, basedOn: 2, header: header)
        try store.save(try scene(1), header: header, in: scene)
        try store.save(try scene(2), header: header, in: scene)
        try store.save(try scene(1), header: header, in: closed)
        try store.discard(closed, reason: "scene closed")
    }

    /// Copies `Fixtures/schema-v6.sqlite`, or another fixture holding these saves, to `path`.
    static func copy(to path: String, fixture name: String = "schema-v6.sqlite") throws {
        let fixture = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Fixtures/\(name)")
        try FileManager.default.copyItem(atPath: fixture.path, toPath: path)
    }

    /// Expects `store` to read what the saves above leave: every retained generation's nodes,
    /// nothing of the discarded archive, and a clean check.
    static func expectRetainedGenerations(in store: ArchiveStore) throws {
        for generation in [2, 3] {
            let read = try store.snapshot(generation: Generation(Int64(generation)))?.nodes
            #expect(read == (try main(generation)), "main generation \(generation)")
        }
        for generation in [1, 2] {
            let read = try store.snapshot(of: scene, generation: Generation(Int64(generation)))
            #expect(read?.nodes == (try Self.scene(generation)), "scene-2 generation \(generation)")
        }
        #expect(try store.snapshot(of: closed) == nil)
        #expect(try store.check() == [])
    }
}
