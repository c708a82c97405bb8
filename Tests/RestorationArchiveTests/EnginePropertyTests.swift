import Testing
import TestSupport
@testable import RestorationArchive

/// Random live trees through the engine, against what a fresh engine's full save writes, and
/// back through a restoration. Identifiers are drawn from a few that collide on purpose: a
/// repeat and a rank (`a`, `a#2`), two Unicode forms of one string, escapes (`x/y`, `x%2F`);
/// containers are ordered or not, and some objects have no identifier (R1).
@Suite("Engine: random trees")
struct EnginePropertyTests {
    private static let identifiers = [
        "a", "a", "a", "a#2", "a#2", "a#3", "b", "caf\u{E9}", "cafe\u{301}", "x%2F", "x/y", "%", "\u{212A}", "K",
    ]

    private static func tree(_ random: inout SeededGenerator, depth: Int = 0) -> [Probe] {
        let count = depth == 0 ? 1 : Int.random(in: 0...(depth > 3 ? 0 : 4), using: &random)
        return (0..<count).map { _ in
            let identifier = Int.random(in: 0..<10, using: &random) == 0 ? nil : identifiers.randomElement(using: &random)
            return Probe(
                depth == 0 ? "Root" : identifier, value: "v\(Int.random(in: 0..<3, using: &random))",
                ordered: Bool.random(using: &random), tree(&random, depth: depth + 1))
        }
    }

    /// Changes values, removes, adds and reorders children, here and there.
    private static func change(_ objects: [any Restorable], _ random: inout SeededGenerator) {
        for case let probe as Probe in objects {
            if Int.random(in: 0..<5, using: &random) == 0 { probe.value = "v\(Int.random(in: 0..<3, using: &random))" }
            if Int.random(in: 0..<12, using: &random) == 0, !probe.children.isEmpty {
                probe.children.remove(at: Int.random(in: 0..<probe.children.count, using: &random))
            }
            if Int.random(in: 0..<12, using: &random) == 0 { probe.children += tree(&random, depth: 3) }
            if Int.random(in: 0..<15, using: &random) == 0 { probe.children.shuffle(using: &random) }
            change(probe.children, &random)
        }
    }

    /// The same tree with no state: what the app's start-up builds at the next launch.
    private static func blankCopy(_ objects: [any Restorable]) -> [Probe] {
        objects.compactMap { $0 as? Probe }.map {
            Probe($0.restorationIdentifier, ordered: $0.ordered, blankCopy($0.children))
        }
    }

    private static func pairs(_ originals: [any Restorable], _ copies: [any Restorable]) -> [(Probe, Probe)] {
        zip(originals, copies).flatMap { original, copy -> [(Probe, Probe)] in
            guard let original = original as? Probe, let copy = copy as? Probe else { return [] }
            return [(original, copy)] + pairs(original.children, copy.children)
        }
    }

    /// Whether two preserved children of an unordered container have one identifier (equal as
    /// strings): the one tree R2 refuses. Ordered containers tell repeats apart.
    private static func hasRepeatInAnUnorderedContainer(_ objects: [any Restorable], ordered: Bool) -> Bool {
        let identified = objects.filter { $0.restorationIdentifier != nil }
        if !ordered && Set(identified.compactMap(\.restorationIdentifier)).count < identified.count { return true }
        return identified.contains {
            hasRepeatInAnUnorderedContainer($0.restorationChildren, ordered: $0.restorationChildrenAreOrdered)
        }
    }

    /// The newest generation's rows: path, class, order and state, by their bytes.
    private static func rows(_ store: ArchiveStore) throws -> [[UInt8]] {
        try (store.snapshot()?.nodes ?? []).map {
            Array($0.path.description.utf8) + [0] + Array($0.className.utf8) + [0] + Array(String($0.order).utf8) + [0] + $0.state
        }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Each save, incremental or full, leaves the rows a full save of the same tree writes,
    /// also when another engine saved the archive in between; a restoration into the tree
    /// the app would build again gives each object the state it had.
    @Test func savesWriteWhatAFullSaveWritesAndRestoreIt() throws {
        var random = SeededGenerator(seed: 40)
        var saves: [SaveKind: Int] = [:]
        var restored = 0
        for trial in 0..<60 {
            try withTemporaryStore(configuration: .init(retainedGenerations: trial % 3 + 1)) { store in
                try withTemporaryStore { reference in
                    let engine = try makeEngine(store)
                    let other = try makeEngine(store)
                    let roots = Self.tree(&random)
                    let otherRoots = Self.tree(&random)
                    for step in 0..<8 {
                        defer { Self.change(roots, &random) }
                        if Int.random(in: 0..<3, using: &random) == 0 {
                            _ = try? other.preserve(Bool.random(using: &random) ? otherRoots : roots)
                            Self.change(otherRoots, &random)
                        }
                        let result: PreservationResult
                        do {
                            result = try engine.preserve(roots)
                        } catch {
                            // R2 refuses only a repeat in an unordered container.
                            guard case .duplicatePath = error as? RestorationError,
                                Self.hasRepeatInAnUnorderedContainer(roots, ordered: false)
                            else { throw error }
                            continue
                        }
                        let save = try #require(result.save)
                        saves[save.kind, default: 0] += 1
                        #expect(try makeEngine(reference).preserve(roots).leftOut.count == result.leftOut.count)
                        try #require(try Self.rows(store) == Self.rows(reference), "trial \(trial), step \(step)")

                        let copy = Self.blankCopy(roots)
                        let restoration = try makeEngine(store).restore(copy)
                        #expect(restoration.report.notRestored.isEmpty, "trial \(trial), step \(step)")
                        let objects = Set(restoration.objects.values.map(ObjectIdentifier.init))
                        for (original, fresh) in Self.pairs(roots, copy) where objects.contains(ObjectIdentifier(fresh)) {
                            #expect(fresh.value == original.value, "trial \(trial), step \(step)")
                            restored += 1
                        }
                    }
                }
            }
        }
        #expect(saves[.incremental, default: 0] >= 100 && saves[.full, default: 0] >= 50, "\(saves)")
        #expect(restored >= 1_000)
    }
}
