import Testing
import TestSupport
@testable import RestorationArchive

/// What a preservation writes against the generation the engine knows
/// (`RestorationEngine.changes`): the pairwise pass for the same paths in the same order, and
/// the match by path otherwise, against the plain way.
@Suite("Changes since the known generation")
struct EngineChangesTests {
    /// The plain way: changed nodes in walk order, and the removed paths whose parent stays
    /// (a removed path's subtree goes with it).
    static func expected(_ known: [ArchivedNode], _ nodes: [ArchivedNode]) -> (changed: [ArchivedNode], removed: Set<RestorationPath>) {
        let knownByPath = Dictionary(uniqueKeysWithValues: known.map { ($0.path, $0) })
        let present = Set(nodes.map(\.path))
        let removed = known.map(\.path).filter { path in
            !present.contains(path) && (path.parent.map { present.contains($0) || knownByPath[$0] == nil } ?? true)
        }
        return (nodes.filter { knownByPath[$0.path] != $0 }, Set(removed))
    }

    @Test func randomChangesAgreeWithThePlainWay() throws {
        var random = SeededGenerator(seed: 0xC4A9_6E5)
        var routes: [String: Int] = [:]
        for trial in 0..<500 {
            let known = try SampleArchives.tree(count: Int.random(in: 1...40, using: &random))
            var nodes = known
            // Some states change; then, in some trials, the walk order or the tree changes.
            for index in nodes.indices where Int.random(in: 0..<4, using: &random) == 0 {
                switch Int.random(in: 0..<4, using: &random) {
                case 0: nodes[index].className += "2"
                case 1: nodes[index].classVersion += 1
                case 2: nodes[index].order += 1
                default: nodes[index].state = random.bytes(Int.random(in: 0...8, using: &random))
                }
            }
            switch trial % 4 {
            case 0: break
            case 1: nodes.shuffle(using: &random)
            case 2:
                // A leaf replaced by another: the same count, other paths.
                if let leaf = nodes.indices.last, nodes.count > 1 {
                    nodes[leaf].path = try nodes[0].path.appending("new\(trial)")
                }
            default:
                if nodes.count > 1 { nodes.removeLast(nodes.count / 2) }
            }
            guard case .changes(let changed, let removed, let removedNodes) = RestorationEngine.changes(from: known, to: nodes)
            else {
                Issue.record("trial \(trial): paths of the same bytes were taken for another form")
                continue
            }
            let expected = Self.expected(known, nodes)
            #expect(changed == expected.changed, "trial \(trial)")
            #expect(Set(removed) == expected.removed && removed.count == expected.removed.count, "trial \(trial)")
            #expect(removedNodes == Set(known.map(\.path)).subtracting(nodes.map(\.path)).count, "trial \(trial)")
            let samePaths = known.map(\.path) == nodes.map(\.path)
            routes[samePaths ? "pairwise" : "by path", default: 0] += 1
        }
        #expect(routes["pairwise", default: 0] >= 100 && routes["by path", default: 0] >= 300)
    }

    /// A path the known generation holds in other bytes (another Unicode form) is found on
    /// both routes, changed or not, before anything is listed.
    @Test func aPathInAnotherFormIsFoundOnBothRoutes() throws {
        let known = try [
            ArchivedNode(path: RestorationPath("Root"), className: "C", state: [1]),
            ArchivedNode(path: RestorationPath("Root", "caf\u{E9}"), className: "C", state: [2]),
        ]
        let reformed = try RestorationPath("Root", "cafe\u{301}")
        var pairwise = known
        pairwise[1].path = reformed
        #expect(RestorationEngine.changes(from: known, to: pairwise) == .anotherForm(reformed))
        var byPath = pairwise
        byPath.append(ArchivedNode(path: try RestorationPath("Root", "new"), className: "C", state: [3]))
        #expect(RestorationEngine.changes(from: known, to: byPath) == .anotherForm(reformed))
        #expect(RestorationEngine.changes(from: known, to: known) == .changes(changed: [], removed: [], removedNodes: 0))
    }
}
