import Testing
import TestSupport
@testable import RestorationArchive

/// The order a save writes its nodes in and the checks it makes on them (`PathOrder`), against
/// the plain way to do both: a dictionary of paths, and a sort by `RestorationPath.<`.
@Suite("Path order of a save")
struct PathOrderTests {
    /// What `PathOrder` must answer, done the plain way: paths equal as strings are duplicates,
    /// and a parent is found by its text's bytes, as the store finds it.
    static func expected(_ nodes: [ArchivedNode], requireParents: Bool) -> Result<[Int], ArchiveStoreError> {
        var firstIndex: [RestorationPath: Int] = [:]
        for (index, node) in nodes.enumerated() {
            if let first = firstIndex[node.path] {
                return .failure(.duplicatePath(node.path, firstClass: nodes[first].className, secondClass: node.className))
            }
            firstIndex[node.path] = index
        }
        let texts = Set(nodes.map { Array($0.path.description.utf8) })
        if requireParents,
            let orphan = nodes.first(where: { $0.path.parentDescription.map { !texts.contains(Array($0.utf8)) } ?? false })
        {
            // The parent there as a string, in other bytes, is named as such.
            if let parent = orphan.path.parent, firstIndex[parent] != nil {
                return .failure(.invalidNode(orphan.path, PathOrder.parentInAnotherForm))
            }
            return .failure(.missingParent(orphan.path))
        }
        return .success(nodes.indices.sorted { (nodes[$0].path, $0) < (nodes[$1].path, $1) })
    }

    static func actual(_ nodes: [ArchivedNode], requireParents: Bool) -> Result<[Int], ArchiveStoreError> {
        Result { () throws(ArchiveStoreError) in try PathOrder(nodes, requireParents: requireParents).indexes }
    }

    static func node(_ identifiers: [String], _ className: String = "C") throws -> ArchivedNode {
        ArchivedNode(path: try RestorationPath(identifiers), className: className, state: [])
    }

    @Test func aParentIsFoundPastPathsThatSortBetweenItAndItsChild() throws {
        // "A-x" and "A.y" sort between "A" and "A/B" ('-' and '.' come before '/'), and "A/B"
        // begins "A/Bz/C"'s bytes without being its parent.
        let nodes = try [
            ["A", "B"], ["A"], ["A-x"], ["A.y"], ["A-x", "q"], ["A", "Bz"], ["A", "Bz", "C"], ["A", "B", "C"], ["Z"],
        ].map { try Self.node($0) }
        let order = try PathOrder(nodes, requireParents: true).indexes
        #expect(order.map { nodes[$0].path.description } == [
            "A", "A-x", "A-x/q", "A.y", "A/B", "A/B/C", "A/Bz", "A/Bz/C", "Z",
        ])
        #expect(Self.actual(nodes, requireParents: true) == Self.expected(nodes, requireParents: true))
    }

    @Test func aMissingParentIsFoundWhenAPathBeginningWithItsTextIsPresent() throws {
        // "A/B" is missing; "A/B-x" and "A/Bz" begin with its bytes.
        let nodes = try [["A"], ["A", "B-x"], ["A", "Bz"], ["A", "B", "C"]].map { try Self.node($0) }
        #expect(Self.actual(nodes, requireParents: true) == .failure(.missingParent(try RestorationPath("A", "B", "C"))))
        #expect(Self.actual(nodes, requireParents: false) == Self.expected(nodes, requireParents: false))
    }

    @Test func theFirstNodeWithAProblemIsNamed() throws {
        // Two paths repeated: the error names the one whose second node comes first.
        let nodes = try [
            Self.node(["R"], "R1"), Self.node(["Q"], "Q1"), Self.node(["Q", "x"]), Self.node(["R"], "R2"),
            Self.node(["Q"], "Q2"), Self.node(["Q"], "Q3"),
        ]
        #expect(Self.actual(nodes, requireParents: true)
            == .failure(.duplicatePath(try RestorationPath("R"), firstClass: "R1", secondClass: "R2")))
        // Two orphans: the first by index is named, not the first in path order.
        let orphans = try [Self.node(["A"]), Self.node(["B", "c"]), Self.node(["A", "b", "c"])]
        #expect(Self.actual(orphans, requireParents: true) == .failure(.missingParent(orphans[1].path)))
    }

    @Test func pathsEqualAsStringsAreOneEvenWithOtherBytes() throws {
        // Composed and decomposed "é", and the Kelvin sign and "K": the same path to Swift
        // (and to the engine), so a save refuses them as duplicates.
        for (first, second) in [("caf\u{E9}", "cafe\u{301}"), ("\u{212A}", "K")] {
            let nodes = try [Self.node([first], "First"), Self.node([second], "Second")]
            #expect(Self.actual(nodes, requireParents: true)
                == .failure(.duplicatePath(nodes[1].path, firstClass: "First", secondClass: "Second")))
        }
        // Different paths that are not all ASCII are ordered by their bytes, as ASCII ones.
        let nodes = try [["\u{E9}t\u{E9}"], ["\u{E9}t\u{E9}", "a"], ["ete"], ["\u{E9}t\u{E9}-"]].map { try Self.node($0) }
        #expect(Self.actual(nodes, requireParents: true) == Self.expected(nodes, requireParents: true))
        #expect(try PathOrder(nodes, requireParents: true).indexes == [2, 0, 3, 1])
    }

    /// A child whose path begins with another form of its parent's (a decomposed "é" where
    /// the parent's is composed) would be saved and never restored: a restore finds a parent
    /// by its bytes, and this child sorts before it. It is refused, and the error says why (a
    /// `missingParent` would name a parent the app sees among its nodes).
    @Test func aParentIsFoundByItsBytes() throws {
        let nodes = try [Self.node(["caf\u{E9}"]), Self.node(["cafe\u{301}", "menu"])]
        #expect(nodes[0].path == nodes[1].path.parent)
        #expect(Self.actual(nodes, requireParents: true)
            == .failure(.invalidNode(nodes[1].path, PathOrder.parentInAnotherForm)))
        #expect(Self.actual(nodes, requireParents: true) == Self.expected(nodes, requireParents: true))
        #expect(Self.actual(nodes, requireParents: false) == .success([1, 0]))
        // A parent missing in every form is still `missingParent`.
        let orphan = try [Self.node(["caf\u{E9}"]), Self.node(["th\u{E9}", "menu"])]
        #expect(Self.actual(orphan, requireParents: true) == .failure(.missingParent(orphan[1].path)))
    }

    @Test func aSaveSaysWhenAParentIsInAnotherUnicodeForm() throws {
        try withTemporaryStore { store in
            let nodes = try [Self.node(["caf\u{E9}"]), Self.node(["cafe\u{301}", "menu"])]
            let error = try #require(throws: ArchiveStoreError.self) { try store.save(nodes, header: SampleArchives.header) }
            #expect(error.description.contains("another Unicode form"))
            #expect(error.description.contains("menu"))
            #expect(try store.snapshot() == nil)
        }
    }

    /// An incremental save finds rows by their paths' bytes too. A new node whose path is
    /// another Unicode form of one the archive holds is refused (it would be a second node for
    /// the same identifiers, which a full save refuses as a duplicate); a new node whose parent
    /// is there in another form, in the archive or among the nodes saved, says so rather than
    /// `missingParent`. The same bytes are a change, as ever, and a refused save writes nothing.
    @Test func anIncrementalSaveRefusesAnotherUnicodeFormOfAPath() throws {
        try withTemporaryStore { store in
            var composed = try Self.node(["caf\u{E9}"])
            let nodes = [composed, try Self.node(["caf\u{E9}", "menu"])]
            let base = try store.save(nodes, header: SampleArchives.header).generation
            func refusal(_ changed: [ArchivedNode]) throws -> ArchiveStoreError {
                try #require(throws: ArchiveStoreError.self) {
                    try store.saveChanges(changed, basedOn: base, header: SampleArchives.header)
                }
            }

            let decomposed = try Self.node(["cafe\u{301}"], "Other")
            guard case .invalidNode(decomposed.path, let reason) = try refusal([decomposed]) else {
                Issue.record("another form of a node the archive holds was not refused as invalidNode")
                return
            }
            #expect(reason.contains("another Unicode form") && reason.contains("second node"))

            let child = try Self.node(["cafe\u{301}", "drinks"])
            #expect(try refusal([child]) == .invalidNode(child.path, PathOrder.parentInAnotherForm))
            let newParent = try Self.node(["th\u{E9}"])
            let newChild = try Self.node(["the\u{301}", "menu"])
            #expect(try refusal([newParent, newChild]) == .invalidNode(newChild.path, PathOrder.parentInAnotherForm))
            let orphan = try Self.node(["th\u{E9}", "menu"])
            #expect(try refusal([orphan]) == .missingParent(orphan.path))

            #expect(try store.header()?.generation == base)
            #expect(try store.snapshot()?.nodes == nodes)
            composed.state = [9]
            let saved = try store.saveChanges([composed, newParent], basedOn: base, header: SampleArchives.header)
            #expect(saved.nodeCount == 3)
            #expect(try store.node(at: composed.path)?.state == [9])
        }
    }

    /// Paths compare as `String`s: removing another Unicode form of a stored path removes that
    /// node and its subtree, and the other nodes stay.
    @Test func anIncrementalSaveRemovesAPathGivenInAnotherUnicodeForm() throws {
        try withTemporaryStore { store in
            let composed = try Self.node(["caf\u{E9}"])
            let child = try Self.node(["caf\u{E9}", "menu"])
            let kept = try Self.node(["th\u{E9}"])
            let base = try store.save([composed, child, kept], header: SampleArchives.header).generation
            let decomposed = try RestorationPath(["cafe\u{301}"])
            #expect(decomposed == composed.path)
            #expect(!decomposed.description.utf8.elementsEqual(composed.path.description.utf8))

            let saved = try store.saveChanges([], removing: [decomposed], basedOn: base, header: SampleArchives.header)
            #expect(saved.nodesRemoved == 2)
            #expect(saved.nodeCount == 1)
            #expect(try store.snapshot()?.nodes == [kept])

            // The composed form comes back as a new node; then one save removes it by the other
            // form and adds it again, which the paths it retired no longer stop.
            let again = try store.saveChanges([composed], basedOn: saved.generation, header: SampleArchives.header)
            #expect(again.nodeCount == 2)
            #expect(try store.snapshot()?.nodes == [composed, kept])
            var replaced = composed
            replaced.state = [7]
            let replacing = try store.saveChanges(
                [replaced], removing: [decomposed], basedOn: again.generation, header: SampleArchives.header)
            #expect(replacing.nodesRemoved == 1)
            #expect(replacing.nodeCount == 2)
            #expect(try store.snapshot()?.nodes == [replaced, kept])
            // A path held in no form is ignored, as an ASCII one is.
            let absent = try store.saveChanges(
                [], removing: [try RestorationPath("cr\u{E8}me"), try RestorationPath("absent")],
                basedOn: replacing.generation, header: SampleArchives.header)
            #expect(absent.nodesRemoved == 0 && absent.nodeCount == 2)
            #expect(try store.snapshot()?.nodes == [replaced, kept])
        }
    }

    /// A node is found by any form of its path, as paths compare: `restorectl show` of a path
    /// typed in composed characters found no node saved in decomposed ones (as names from a
    /// file system that decomposes them are), though `tree` showed it at that path.
    @Test func aNodeIsFoundByAnotherUnicodeFormOfItsPath() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let decomposed = try Self.node(["cafe\u{301}"])
            let child = try Self.node(["cafe\u{301}", "menu"])
            let kelvin = try Self.node(["\u{212A}"])  // the Kelvin sign, equal to "K"
            try store.save([decomposed, child, kelvin], header: SampleArchives.header)
            let composed = try RestorationPath(["caf\u{E9}"])
            #expect(try store.node(at: composed) == decomposed)
            #expect(try store.node(at: composed.appending("menu")) == child)
            #expect(try store.node(at: RestorationPath("K")) == kelvin)
            #expect(try store.node(at: decomposed.path, generation: 1) == decomposed)
            #expect(try store.node(at: RestorationPath("cr\u{E8}me")) == nil)
            #expect(try store.node(at: RestorationPath("k")) == nil)
            // Damaged, it is named as when found by its own bytes.
            try tamper(with: path, "UPDATE node SET state = x'0102' WHERE path = 'cafe\u{301}'")
            #expect(throws: ArchiveStoreError.damagedNode(.main, decomposed.path, 1)) { try store.node(at: composed) }
        }
    }

    @Test func anInvalidNodeIsRefusedFirst() throws {
        let nodes = try [Self.node(["A", "b"]), Self.node(["A", "b"]), Self.node(["C"], "")]
        guard case .failure(.invalidNode(let path, _)) = Self.actual(nodes, requireParents: true) else {
            Issue.record("an empty class name was not refused first")
            return
        }
        #expect(path == nodes[2].path)
    }

    /// Random trees over a few identifiers whose bytes sort around `/` ('-', '.', '0' and
    /// letters, one of them not ASCII), with nodes dropped (orphans) and repeated (duplicates):
    /// the same order or the same error as the plain way, with and without parents required.
    @Test func randomTreesAgreeWithThePlainWay() throws {
        var random = SeededGenerator(seed: 0x5EED_0A7D)
        let identifiers = ["a", "a-", "a.b", "a0", "b", "ab", "-", ".", "0", "Z", "\u{E9}", "%", "/"]
        var outcomes: [String: Int] = [:]
        for trial in 0..<2_000 {
            var paths: [[String]] = []
            for _ in 0..<Int.random(in: 1...40, using: &random) {
                let parent = paths.isEmpty || Int.random(in: 0..<5, using: &random) == 0
                    ? [] : paths.randomElement(using: &random)!
                guard parent.count < 6 else { continue }
                paths.append(parent + [identifiers.randomElement(using: &random)!])
            }
            // Paths repeat by chance; in two trials of three, only their first node is kept.
            if trial % 3 != 0 {
                var seen: Set<[String]> = []
                paths.removeAll { !seen.insert($0).inserted }
            }
            var nodes = try paths.enumerated().map { try Self.node($1, "C\($0)") }
            // Without the not-ASCII identifier in half the trials, so that the byte route is taken.
            if trial % 2 == 0 {
                nodes.removeAll { !$0.path.description.utf8.allSatisfy { $0 < 0x80 } }
            }
            if Int.random(in: 0..<2, using: &random) == 0, !nodes.isEmpty {
                nodes.remove(at: Int.random(in: 0..<nodes.count, using: &random))
            }
            nodes.shuffle(using: &random)
            for requireParents in [true, false] {
                let expected = Self.expected(nodes, requireParents: requireParents)
                #expect(Self.actual(nodes, requireParents: requireParents) == expected, "trial \(trial)")
                switch expected {
                case .success: outcomes["ordered", default: 0] += 1
                case .failure(.duplicatePath): outcomes["duplicate", default: 0] += 1
                case .failure(.missingParent): outcomes["orphan", default: 0] += 1
                case .failure: outcomes["other", default: 0] += 1
                }
            }
        }
        // Each outcome came up often enough to be tested.
        #expect(outcomes["ordered", default: 0] > 300)
        #expect(outcomes["duplicate", default: 0] > 300)
        #expect(outcomes["orphan", default: 0] > 300)
        #expect(outcomes["other"] == nil)
    }
}
