import Logging
import RestorationArchive
import Testing
import TestSupport

/// Restore reports, budgets and damage: single nodes never fail a whole save or restoration.
@Suite("Restore reports and budgets")
struct RestoreReportTests {
    @Test func nodeOverItsBudgetIsLeftOutWithItsSubtreeAndTheRestIsSaved() throws {
        try withTemporaryStore { store in
            let big = Probe("Big", value: String(repeating: "x", count: 2000), [Probe("BelowBig")])
            let root = Probe("Root", [big, Probe("Small", value: "s")])
            let engine = try makeEngine(store, configuration: .init(maximumNodeBytes: 1000))
            let result = try engine.preserve([root])
            #expect(result.leftOut.map(\.path) == [try .text("Root/Big")])
            guard case .overBudget(let bytes, 1000)? = result.leftOut.first?.reason else {
                Issue.record("expected an over-budget node, got \(result.leftOut)")
                return
            }
            #expect(bytes > 2000)
            #expect(try #require(try store.snapshot()).nodes.map(\.path.description) == ["Root", "Root/Small"])
        }
    }

    @Test func budgetsBelowOneByteAreRefused() throws {
        try withTemporaryStore { store in
            for configuration in [RestorationEngine.Configuration(maximumNodeBytes: 0), .init(maximumArchiveBytes: -1)] {
                #expect(throws: RestorationError.invalidConfiguration("budgets must be at least 1 byte")) {
                    try makeEngine(store, configuration: configuration)
                }
            }
        }
    }

    /// Every save would refuse the header an engine writes from it: the engine refuses it.
    @Test func anAppIdentityWithATextTooLongForAHeaderIsRefused() throws {
        try withTemporaryStore { store in
            let long = String(repeating: "9", count: SaveHeader.maximumTextLength + 1)
            #expect(
                throws: RestorationError.invalidConfiguration(
                    "the app identity's build is 257 bytes of UTF-8; at most 256 are accepted")
            ) {
                try RestorationEngine(
                    store: store, app: AppIdentity(version: "11.0", build: long), registry: RestorationRegistry())
            }
        }
    }

    @Test func objectsBeyondTheArchiveBudgetAreLeftOut() throws {
        try withTemporaryStore { store in
            let children = (0..<10).map { Probe("S\($0)", value: String(repeating: "y", count: 100)) }
            let engine = try makeEngine(store, configuration: .init(maximumArchiveBytes: 600))
            let result = try engine.preserve([Probe("Root", children)])
            let saved = try #require(try store.snapshot())
            #expect(saved.header.totalBytes <= 600)
            #expect(saved.nodes.count + result.leftOut.count == 11)
            #expect(result.leftOut.count >= 5)
            #expect(result.leftOut.allSatisfy { if case .overBudget(_, 600) = $0.reason { true } else { false } })
        }
    }

    @Test func nodeOverTheBudgetAtRestorationIsSkipped() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([Probe("Root", [Probe("Big", value: String(repeating: "z", count: 5000))])])
            let big = Probe("Big")
            let engine = try makeEngine(store, configuration: .init(maximumNodeBytes: 4096))
            let result = try engine.restore([Probe("Root", [big])])
            guard case .skipped(.overBudget(_, 4096))? = result.report.nodes.last?.outcome else {
                Issue.record("expected an over-budget skip, got \(result.report.nodes)")
                return
            }
            #expect(big.decodeCount == 0)
        }
    }

    /// Budgets include their bound: a node of exactly `maximumNodeBytes` is saved and
    /// restored, and an archive of exactly `maximumArchiveBytes` saved whole; one byte more is
    /// left out of a save, and skipped at a restoration.
    @Test func aBudgetAllowsItsExactSize() throws {
        try withTemporaryStore { store in
            let value = "exactly this much"
            try makeEngine(store).preserve([Probe("Root", value: value)])
            let size = try #require(try store.snapshot()?.nodes.first?.state.count)
            let exact = RestorationEngine.Configuration(maximumNodeBytes: size, maximumArchiveBytes: size)
            #expect(try makeEngine(store, configuration: exact).preserve([Probe("Root", value: value)]).leftOut.isEmpty)
            #expect(try makeEngine(store, configuration: exact).restore([Probe("Root")]).report.restoredCount == 1)

            let under = RestorationEngine.Configuration(maximumNodeBytes: size - 1)
            let skipped = try makeEngine(store, configuration: under).restore([Probe("Root")])
            #expect(skipped.report.nodes.map(\.outcome) == [.skipped(.overBudget(bytes: size, budget: size - 1))])
            for configuration in [under, RestorationEngine.Configuration(maximumArchiveBytes: size - 1)] {
                let result = try makeEngine(store, configuration: configuration).preserve([Probe("Root", value: value)])
                #expect(result.leftOut.map(\.path) == [try .text("Root")])
            }
        }
    }

    /// An engine whose decoding limits are stricter than the coder's own does not save state
    /// its restoration would refuse: such an object is left out with its subtree, and the
    /// preservation says why. It used to be saved, reported nowhere, and fail to decode at
    /// every launch after.
    @Test(arguments: [
        DecodingLimits(maximumStringLength: 16), DecodingLimits(maximumBlobSize: 64), DecodingLimits(maximumElementCount: 1),
    ])
    func stateTheEnginesDecodingLimitsRefuseIsLeftOutOfTheSave(limits: DecodingLimits) throws {
        try withTemporaryStore { store in
            let long = Probe("Long", value: String(repeating: "x", count: 60), [Probe("Below")])
            long.extraKey = "second"
            let engine = try makeEngine(store, configuration: .init(decodingLimits: limits))
            let result = try engine.preserve([Probe("Root", [long, Probe("Short", value: "s")])])
            let leftOut = try #require(result.leftOut.first)
            #expect(result.leftOut.count == 1)
            #expect(leftOut.path == (try .text("Root/Long")))
            #expect(leftOut.reason.description.hasPrefix("its state would not decode under the engine's decoding limits: "), "\(leftOut.reason)")
            #expect(try #require(try store.snapshot()).nodes.map(\.path.description) == ["Root", "Root/Short"])
            // What was saved restores whole under those limits.
            let restored = try makeEngine(store, configuration: .init(decodingLimits: limits)).restore([Probe("Root", [Probe("Short")])])
            #expect(restored.report.nodes.map(\.outcome) == [.restored, .restored])
        }
    }

    @Test func damagedNodeFailsAloneWithChecksumMismatch() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", [Probe("A", value: "a", [Probe("Below")]), Probe("B", value: "b")])])
            try tamper(with: path, "UPDATE node SET state = zeroblob(length(state)) WHERE path = 'Root/A'")
            let b = Probe("B")
            let result = try makeEngine(store).restore([Probe("Root", [Probe("A", [Probe("Below")]), b])])
            #expect(result.report.outcome == .restored)
            #expect(result.report.nodes.map(\.outcome) == [
                .restored, .failed(.checksumMismatch), .skipped(.parentNotRestored), .restored,
            ])
            #expect(b.value == "b")
        }
    }

    @Test func blobFailingItsOwnChecksumFailsWithChecksumMismatch() throws {
        try withTemporaryStore { store in
            // Damaged before it reached the store (so the row's checksum covers the damage):
            // the blob's own CRC-32C still catches it.
            let coder = StateEncoder()
            try coder.encode("saved", forKey: "value")
            var blob = try coder.encodedBlob()
            blob[blob.count - 6] ^= 0x20
            try store.save([ArchivedNode(path: try .text("Root"), className: "Probe", state: blob)], header: SampleArchives.header)
            let root = Probe("Root", value: "fresh")
            let result = try makeEngine(store).restore([root])
            #expect(result.report.nodes.map(\.outcome) == [.failed(.checksumMismatch)])
            #expect(root.decodeCount == 0 && root.value == "fresh")
        }
    }

    @Test func stateThatCannotBeDecodedFailsNamingTheKey() throws {
        try withTemporaryStore { store in
            // A Probe archived without its "value" key, with a sound child below it.
            let coder = StateEncoder()
            try coder.encode("child", forKey: "value")
            try store.save([
                ArchivedNode(path: try .text("Root"), className: "Probe", state: try StateEncoder().encodedBlob()),
                ArchivedNode(path: try .text("Root/Child"), className: "Probe", state: try coder.encodedBlob()),
            ], header: SampleArchives.header)
            let log = EventLog()
            let child = Probe("Child", log: log)
            let result = try makeEngine(store).restore([Probe("Root", log: log, [child])])
            #expect(result.report.nodes.map(\.outcome) == [
                .failed(.decodeFailed("No value for key 'value'.")), .skipped(.parentNotRestored),
            ])
            #expect(child.decodeCount == 0)
            // Neither is told that restoration finished (R8): the root's state is not restored.
            #expect(log.events == ["decode Root"])
            #expect(result.objects.isEmpty)
            // Nor is either in the result, though the root's object decoded part-way and the
            // child's was found (RestorationContext.children sends here to tell).
            let (rootPath, childPath) = (try RestorationPath.text("Root"), try RestorationPath.text("Root/Child"))
            #expect(result.object(at: rootPath) == nil && result.object(at: childPath) == nil)
            #expect(result.roots.isEmpty)

            // State that is not a blob at all (stored so by another program).
            try store.save([ArchivedNode(path: try .text("Root"), className: "Probe", state: [0xFF, 0x00])], header: SampleArchives.header)
            let bad = try makeEngine(store).restore([Probe("Root")])
            guard case .failed(.decodeFailed(let message))? = bad.report.nodes.first?.outcome else {
                Issue.record("expected a decode failure, got \(bad.report.nodes)")
                return
            }
            #expect(message.contains("format version 255"))
        }
    }

    @Test func damagedHeaderFailsTheRestorationAndIsRecorded() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root")])
            try tamper(with: path, "UPDATE generation SET app_version = '12.0'")
            let root = Probe("Root")
            let result = try makeEngine(store).restore([root])
            guard case .failed(let reason) = result.report.outcome else {
                Issue.record("expected a failed restoration, got \(result.report.outcome)")
                return
            }
            #expect(reason.contains("header does not match its checksum"))
            #expect(root.decodeCount == 0)
            #expect(try store.restoreReports().first == result.report)
        }
    }

    @Test func nothingToRestoreIsReportedButNotRecorded() throws {
        try withTemporaryStore { store in
            let result = try makeEngine(store).restore([Probe("Root")])
            #expect(result.report.outcome == .nothingToRestore)
            #expect(try store.restoreReports().isEmpty)
        }
    }

    /// A result's `objects`, `roots` and `object(at:)` name the same objects: those restored,
    /// not a node skipped, failed, or below one that failed.
    @Test func aResultNamesTheRestoredObjectsOnlyHoweverItIsAsked() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([
                Probe("B", value: "b", [Probe("Child", value: "c")]),
                Probe("A", value: "a", [OtherProbe("Other"), Probe("Broken", [Probe("Below")])]),
            ])
            var registry = RestorationRegistry()
            struct Refused: Error {}
            try registry.register(Probe.self) { request in
                if request.path.identifier == "Broken" { throw Refused() }
                return Probe(request.path.identifier)
            }
            let result = try makeEngine(store, registry: registry).restore([])
            let restored = try ["A", "B", "B/Child"].map { try RestorationPath.text($0) }
            #expect(result.report.nodes.filter { $0.outcome == .restored }.map(\.path) == restored)
            #expect(result.report.nodes.count == 6)

            #expect(result.objects.keys.sorted() == restored)
            for path in restored {
                let object = try #require(result.object(at: path))
                #expect(object === result.objects[path])
            }
            for path in ["A/Other", "A/Broken", "A/Broken/Below", "C"] {
                #expect(result.object(at: try .text(path)) == nil)
            }
            #expect(result.roots.compactMap { ($0 as? Probe)?.value } == ["a", "b"])
            let roots = try restored.prefix(2).map { try #require(result.object(at: $0)) }
            #expect(result.roots.map(ObjectIdentifier.init) == roots.map(ObjectIdentifier.init))
        }
    }

    /// A store written directly can hold one path in two Unicode forms ("K" and the Kelvin
    /// sign, which Swift's `String` takes as one). The result holds one object for that path,
    /// found by either form, and lists it once.
    @Test func aPathStoredInTwoFormsIsOneObjectOfTheResult() throws {
        try withTemporaryStore { store in
            let kelvin = try RestorationPath("\u{212A}itchen")
            let ascii = try RestorationPath.text("Kitchen")
            func node(_ path: RestorationPath) throws -> ArchivedNode {
                let coder = StateEncoder()
                try coder.encode(path.identifier, forKey: "value")
                return ArchivedNode(path: path, className: "Probe", classVersion: 0, order: 0, state: try coder.encodedBlob())
            }
            // The header the test engine's app restores (R5).
            let header = SaveHeader(appVersion: "11.0", appBuild: "1024", platform: "linux", idiom: "phone")
            let first = try store.save([try node(kelvin), try node(try .text("Other"))], header: header)
            try store.saveChanges([try node(ascii)], basedOn: first.generation, header: header)

            var registry = RestorationRegistry()
            try registry.register(Probe.self) { request in Probe(request.path.identifier) }
            let result = try makeEngine(store, registry: registry).restore([])
            #expect(result.report.nodes.map(\.path.description) == ["Kitchen", "Other", "\u{212A}itchen"])
            #expect(result.report.nodes.map(\.outcome) == [.restored, .restored, .restored])
            let object = try #require(result.object(at: ascii))
            #expect(result.object(at: kelvin) === object)
            #expect(result.objects.count == 2)
            #expect(result.objects[kelvin] === object)
            // The key is the form restored first: the ASCII one, whose bytes sort first.
            #expect(result.objects.keys.contains { Array($0.description.utf8) == Array("Kitchen".utf8) })
            #expect(result.roots.count == 2)
            #expect(result.roots.first === object)
        }
    }

    @Test func storeKeepsTheNewestReportsOnly() throws {
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            try engine.preserve([Probe("Root")])
            for _ in 0..<(ArchiveStore.retainedRestoreReports + 3) { _ = try engine.restore([Probe("Root")]) }
            let reports = try store.restoreReports()
            #expect(reports.count == ArchiveStore.retainedRestoreReports)
            #expect(reports.allSatisfy { $0.outcome == .restored && $0.restoredCount == 1 })
            #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.date >= $1.date })
        }
    }

    /// `limit` reads the newest reports only: damage to an older one does not hide them.
    @Test func theNewestReportsReadWhenAnOlderOneIsDamaged() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let engine = try makeEngine(store)
            try engine.preserve([Probe("Root")])
            for _ in 0..<4 { _ = try engine.restore([Probe("Root")]) }
            let reports = try store.restoreReports()
            #expect(reports.count == 4)
            #expect(try store.restoreReports(limit: 1) == Array(reports.prefix(1)))
            #expect(try store.restoreReports(limit: 3) == Array(reports.prefix(3)))
            #expect(try store.restoreReports(limit: 10) == reports)
            #expect(try store.restoreReports(limit: 0).isEmpty)
            #expect(try store.restoreReports(limit: -1).isEmpty)
            try tamper(with: path, "UPDATE restore_report SET report = x'00' WHERE sequence = 2")
            #expect(throws: ArchiveStoreError.damagedHistory("a restore report of archive 'main' cannot be read")) {
                try store.restoreReports()
            }
            #expect(try store.restoreReports(limit: 2) == Array(reports.prefix(2)))
            #expect(throws: ArchiveStoreError.damagedHistory("a restore report of archive 'main' cannot be read")) {
                try store.restoreReports(limit: 3)
            }
        }
    }

    @Test func incrementalSaveFallsBackToFullWhenAnotherWriterSavedInBetween() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let engine = try makeEngine(store)
            let root = Probe("Root", [Probe("A", value: "a"), Probe("B", value: "b"), Probe("C", value: "c")])
            try engine.preserve([root])
            // Another process saves the archive.
            try makeEngine(try ArchiveStore(path: path)).preserve([Probe("Root", [Probe("Z")])])
            (root.children[0] as? Probe)?.value = "a2"
            let result = try engine.preserve([root])
            #expect(result.save?.kind == .full)
            #expect(try #require(try store.snapshot()).nodes.map(\.path.description) == ["Root", "Root/A", "Root/B", "Root/C"])
        }
    }

    @Test func removedObjectsAreRemovedWithTheirSubtrees() throws {
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            let keep = (0..<12).map { Probe("K\($0)") }
            let gone = Probe("Gone", [Probe("Child", [Probe("Grandchild")])])
            let root = Probe("Root", keep + [gone])
            try engine.preserve([root])
            root.children.removeLast()
            let result = try engine.preserve([root])
            #expect(result.save?.kind == .incremental)
            #expect(result.nodesRemoved == 3 && result.nodesWritten == 0 && result.nodesUnchanged == 13)
            #expect(try store.snapshot()?.nodes.count == 13)
        }
    }

    /// Retiring a row costs an incremental save about three times what writing one costs a
    /// full save: a save that would retire or rewrite more than a third of the tree's nodes
    /// is written in full, counting every node of a removed subtree (a tab closed with its
    /// whole stack is one removed path, and most of the archive).
    @Test func aSaveThatWouldRetireMostOfTheArchiveIsWrittenInFull() throws {
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            let keep = (0..<4).map { Probe("K\($0)") }
            let tab = Probe("Tab", (0..<5).map { Probe("Screen\($0)", (0..<4).map { Probe("Row\($0)") }) })
            let root = Probe("Root", keep + [tab])
            try engine.preserve([root])
            root.children.removeLast()
            let removed = try engine.preserve([root])
            #expect(removed.save?.kind == .full)
            #expect(removed.nodesWritten == 5 && removed.save?.nodeCount == 5)
            #expect(try store.snapshot()?.nodes.map(\.path.description) == ["Root", "Root/K0", "Root/K1", "Root/K2", "Root/K3"])

            // One node changed of five is within a third: incremental.
            keep[0].value = "changed"
            #expect(try engine.preserve([root]).save?.kind == .incremental)
        }
    }

    @Test func loggerGetsPathsAndCountsButNeverStoredValues() throws {
        try withTemporaryStore { store in
            let sink = LogSink()
            let logger = Logger(label: "test") { _ in sink }
            let engine = try RestorationEngine(
                store: store, app: AppIdentity(version: "11.0", build: "1"), registry: RestorationRegistry(),
                configuration: .init(maximumNodeBytes: 200), logger: logger)
            let secret = "hunter2-secret-text"
            try engine.preserve([Probe("Root", value: secret, [Probe("Huge", value: secret + String(repeating: "!", count: 300))])])
            _ = try engine.restore([Probe("Root")])
            let messages = sink.messages
            #expect(messages.contains { $0.contains("Root/Huge") && $0.contains("over the budget") })
            #expect(messages.contains { $0.contains("Restored archive 'main' generation 1: 1 of 1 nodes") })
            #expect(!messages.contains { $0.contains("hunter2") })
        }
    }
}

/// A log handler that keeps every message.
/// A type whose class name cannot be stored.
final class Nameless: Probe {
    override class var restorationClassName: String { "" }
}

/// Bad trees from the app: never a crash or a hang.
@Suite("Preservation of bad trees")
struct BadTreeTests {
    /// Children that lead back to an ancestor (a screen listing the screen that presented
    /// it) were walked again under ever longer paths: one way back saved 256 copies, two ways
    /// back doubled the paths at each level and never ended, in preservation and in the
    /// restoration's look for existing objects (a launch that hangs). The object is left out
    /// where it comes back. `waysBack` 0: the object is its own child.
    @Test(arguments: [0, 1, 2])
    func anObjectAmongItsOwnAncestorsIsLeftOutThere(waysBack: Int) throws {
        // Without the check, the archive budget bounds preservation (4 KiB hold about 300 of
        // these nodes), so that it fails rather than hangs; the restoration would still hang.
        let configuration = RestorationEngine.Configuration(maximumArchiveBytes: 4096)
        func cyclicTree() -> (root: Probe, cut: () -> Void) {
            let root = Probe("A", value: "a")
            let children = (0..<waysBack).map { Probe("B\($0)", value: "b\($0)") }
            root.children = waysBack == 0 ? [root] : children
            for child in children { child.children = [root] }
            return (root, { root.children = []; for child in children { child.children = [] } })
        }
        try withTemporaryStore { store in
            let saved = cyclicTree()
            defer { saved.cut() }
            let result = try makeEngine(store, configuration: configuration).preserve([saved.root])
            let children = (0..<waysBack).map { "A/B\($0)" }
            #expect(try #require(try store.snapshot()).nodes.map(\.path.description) == ["A"] + children)
            #expect(result.leftOut.map { $0.path?.description } == (waysBack == 0 ? ["A/A"] : children.map { $0 + "/A" }))
            #expect(result.leftOut.allSatisfy {
                $0.className == "Probe"
                    && $0.reason == .invalid("it is among its own ancestors: restorationChildren lead back to it")
            })

            let restoring = cyclicTree()
            defer { restoring.cut() }
            let restored = try makeEngine(store, configuration: configuration).restore([restoring.root])
            #expect(restored.report.outcome == .restored && restored.report.restoredCount == 1 + waysBack)
            #expect(restoring.root.value == "a")
        }
    }

    @Test func unusableClassNameLeavesOnlyThatObjectOut() throws {
        try withTemporaryStore { store in
            let result = try makeEngine(store).preserve([Probe("Root", [Nameless("Odd", [Probe("Below")]), Probe("Fine")])])
            #expect(result.leftOut.map(\.path) == [try .text("Root/Odd")])
            #expect(result.leftOut.map(\.className) == [""])
            #expect(result.leftOut.map(\.reason) == [.invalid("its class name must be 1 to 256 bytes of UTF-8")])
            #expect(try store.snapshot()?.nodes.map(\.path.description) == ["Root", "Root/Fine"])
        }
    }

    @Test func unusableIdentifierLeavesOnlyThatObjectOut() throws {
        try withTemporaryStore { store in
            let tooLong = String(repeating: "x", count: RestorationPath.maximumIdentifierLength + 1)
            let result = try makeEngine(store).preserve([Probe("Root", [Probe(""), Probe(tooLong), Probe("Fine")])])
            #expect(result.leftOut.count == 2)
            #expect(result.leftOut.allSatisfy { $0.path == (try? RestorationPath.text("Root")) })
            #expect(try store.snapshot()?.nodes.map(\.path.description) == ["Root", "Root/Fine"])
        }
    }
}
