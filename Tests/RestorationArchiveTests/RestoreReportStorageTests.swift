import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

@Suite("Restore report storage")
struct RestoreReportStorageTests {
    /// Reports with every outcome, every node outcome and every reason.
    static func sampleReports() throws -> [RestoreReport] {
        let reasons = SampleArchives.everyRestoreReason
        var nodes = [RestoreReport.Node(path: try RestorationPath("Root"), className: "Root", classVersion: 1, outcome: .restored)]
        for (index, reason) in reasons.enumerated() {
            nodes.append(.init(
                path: try RestorationPath("Root", "n\(index)", "a/b%c"), className: "C\(index)", classVersion: index,
                outcome: index.isMultiple(of: 2) ? .skipped(reason) : .failed(reason)))
        }
        // Texts whose common bytes end inside a character ("é" and "è" share their first
        // byte), and a class name met again after another.
        nodes.append(.init(path: try RestorationPath("Root", "é"), className: "C1", classVersion: 1, outcome: .restored))
        nodes.append(.init(path: try RestorationPath("Root", "è", "x"), className: "C2", classVersion: 1, outcome: .restored))
        let date = Date(timeIntervalSince1970: 1_800_000_000.123)
        return [
            RestoreReport(archive: .main, generation: 7, date: date, outcome: .restored, nodes: nodes),
            RestoreReport(archive: .main, generation: 8, date: date, outcome: .refused(reason: "old"), nodes: []),
            RestoreReport(archive: .main, generation: nil, date: date, outcome: .failed(reason: "damaged"), nodes: []),
            RestoreReport(archive: .main, generation: nil, date: date, outcome: .nothingToRestore, nodes: []),
        ]
    }

    @Test func everyOutcomeAndReasonRoundTripsThroughTheStore() throws {
        try withTemporaryStore { store in
            try store.save([ArchivedNode(path: try RestorationPath("Root"), className: "Root", state: [])], header: SampleArchives.header)
            let reports = try Self.sampleReports()
            for report in reports { try store.recordRestoreReport(report) }
            #expect(try store.restoreReports() == reports.reversed())
        }
    }

    /// Reasons an app's code gives (a gate's refusal, an error's description, a class's name)
    /// are kept cut to ``ArchiveStore/maximumReasonLength`` bytes, each on a whole character.
    @Test func longReasonsAreKeptCut() throws {
        try withTemporaryStore { store in
            try store.save([ArchivedNode(path: try RestorationPath("Root"), className: "Root", state: [])], header: SampleArchives.header)
            let long = String(repeating: "é", count: 600_000)
            let cut = String(repeating: "é", count: (ArchiveStore.maximumReasonLength - 3) / 2) + "…"
            let nodes = [
                RestoreReport.Node(path: try RestorationPath("Root"), className: "Root", classVersion: 1, outcome: .failed(.decodeFailed(long))),
                RestoreReport.Node(path: try RestorationPath("Root", "a"), className: "A", classVersion: 1, outcome: .skipped(.classMismatch(found: long))),
            ]
            let date = Date(timeIntervalSince1970: 1_800_000_000)
            try store.recordRestoreReport(RestoreReport(archive: .main, generation: 1, date: date, outcome: .refused(reason: long), nodes: nodes))
            try store.recordRestoreReport(RestoreReport(archive: .main, generation: 1, date: date, outcome: .failed(reason: long), nodes: []))
            let read = try store.restoreReports()
            #expect(read.map(\.outcome) == [.failed(reason: cut), .refused(reason: cut)])
            #expect(read.last?.nodes.map(\.outcome) == [.failed(.decodeFailed(cut)), .skipped(.classMismatch(found: cut))])
        }
    }

    /// The report is written field by field; its bytes must be those of the tree that
    /// `RestoreReport+Storage.swift` documents, encoded as any state is (built here from the
    /// documentation, not from the library's code).
    @Test(arguments: try sampleReports())
    func theStoredBlobIsTheDocumentedTree(_ report: RestoreReport) throws {
        func reason(_ reason: RestoreReport.Reason) -> StateValue {
            let (kind, text, a, b): (String, String?, Int?, Int?) =
                switch reason {
                case .noRestorationClass: ("noRestorationClass", nil, nil, nil)
                case .declined: ("declined", nil, nil, nil)
                case .classMismatch(let found): ("classMismatch", found, nil, nil)
                case .versionTooNew(let supported): ("versionTooNew", nil, supported, nil)
                case .decodeFailed(let message): ("decodeFailed", message, nil, nil)
                case .parentNotRestored: ("parentNotRestored", nil, nil, nil)
                case .checksumMismatch: ("checksumMismatch", nil, nil, nil)
                case .overBudget(let bytes, let budget): ("overBudget", nil, bytes, budget)
                }
            var fields: [String: StateValue] = ["kind": .string(kind)]
            if let text { fields["text"] = .string(text) }
            if let a { fields["a"] = .int(Int64(a)) }
            if let b { fields["b"] = .int(Int64(b)) }
            return .container(fields)
        }
        // Each path's text: the bytes it shares with the previous one, cut back to a
        // character boundary, then its tail.
        var shared: [StateValue] = [], tails: [StateValue] = []
        var previous: [UInt8] = []
        for node in report.nodes {
            let text = Array(node.path.description.utf8)
            var count = zip(previous, text).prefix { $0 == $1 }.count
            while count > 0 && count < text.count && text[count] & 0b1100_0000 == 0b1000_0000 { count -= 1 }
            shared.append(.int(Int64(count)))
            tails.append(.string(String(decoding: text[count...], as: UTF8.self)))
            previous = text
        }
        var classNames: [String] = []
        let classIndexes = report.nodes.map { node -> StateValue in
            if let known = classNames.firstIndex(of: node.className) { return .int(Int64(known)) }
            classNames.append(node.className)
            return .int(Int64(classNames.count - 1))
        }
        var tree: [String: StateValue] = [
            "archive": .string(report.archive.rawValue), "date": .date(report.date),
            "pathShared": .array(shared), "pathTails": .array(tails),
            "classNames": .array(classNames.map { .string($0) }), "classIndexes": .array(classIndexes),
            "versions": .array(report.nodes.map { .int(Int64($0.classVersion)) }),
        ]
        if let generation = report.generation { tree["generation"] = .int(generation.rawValue) }
        switch report.outcome {
        case .restored: tree["outcome"] = .string("restored")
        case .nothingToRestore: tree["outcome"] = .string("nothing")
        case .refused(let text): tree["outcome"] = .string("refused"); tree["reason"] = .string(text)
        case .failed(let text): tree["outcome"] = .string("failed"); tree["reason"] = .string(text)
        }
        var outcomes: [StateValue] = [], reasons: [StateValue] = []
        for node in report.nodes {
            switch node.outcome {
            case .restored: outcomes.append(.int(0)); reasons.append(.null)
            case .skipped(let why): outcomes.append(.int(1)); reasons.append(reason(why))
            case .failed(let why): outcomes.append(.int(2)); reasons.append(reason(why))
            }
        }
        tree["outcomes"] = .array(outcomes)
        tree["reasons"] = .array(reasons)
        #expect(try report.storedBlob() == StateValue.encode(tree))
        #expect(RestoreReport(storedBlob: try report.storedBlob()) == report)

        // The earlier layout, every path and class name in full, is still read.
        for key in ["pathShared", "pathTails", "classNames", "classIndexes"] { tree[key] = nil }
        tree["paths"] = .array(report.nodes.map { .string($0.path.description) })
        tree["classes"] = .array(report.nodes.map { .string($0.className) })
        #expect(RestoreReport(storedBlob: try StateValue.encode(tree)) == report)
    }

    /// Path and class columns that do not make a path and a class for every node are no
    /// report: shared bytes the previous text does not have, or that end inside a
    /// character; a tail that makes no canonical path; a class index out of range; columns
    /// of different lengths.
    @Test(arguments: [
        ([0, 4], ["Root", "/a"], [0, 0], ["Root", "Root/a"]),
        ([0, 5], ["Root/é", "è"], [0, 0], ["Root/é", "Root/è"]),
        ([0, 5], ["Root", "/a"], [0, 0], nil),
        ([1, 4], ["Root", "/a"], [0, 0], nil),
        ([0, -1], ["Root", "/a"], [0, 0], nil),
        ([0, 6], ["Root/é", "x"], [0, 0], nil),
        ([0, 4], ["Root", "/"], [0, 0], nil),
        ([0, 4], ["Root", "/a"], [0, 1], nil),
        ([0, 4], ["Root", "/a"], [0], nil),
        ([0], ["Root", "/a"], [0, 0], nil),
    ] as [([Int64], [String], [Int64], [String]?)])
    func pathAndClassColumnsMustMakeEveryNode(shared: [Int64], tails: [String], classIndexes: [Int64], paths: [String]?)
        throws
    {
        let blob = try StateValue.encode([
            "archive": .string("main"), "date": .date(Date(timeIntervalSince1970: 0)), "outcome": .string("restored"),
            "pathShared": .array(shared.map { .int($0) }), "pathTails": .array(tails.map { .string($0) }),
            "classNames": .array([.string("Root")]), "classIndexes": .array(classIndexes.map { .int($0) }),
            "versions": .array([.int(1), .int(1)]), "outcomes": .array([.int(0), .int(0)]), "reasons": .array([.null, .null]),
        ])
        let report = RestoreReport(storedBlob: blob)
        #expect(report.map { $0.nodes.map(\.path.description) } == paths)
        #expect(report.map { $0.nodes.map(\.className) } == paths.map { $0.map { _ in "Root" } })
    }

    /// A path or class column holding a value of another type is no report either.
    @Test(arguments: [
        ("pathShared", StateValue.array([.int(0), .string("4")])),
        ("pathTails", .array([.string("Root"), .int(1)])),
        ("classNames", .array([.bytes([0x52])])),
        ("classIndexes", .array([.int(0), .null])),
        ("pathTails", .string("Root/a")),
    ])
    func aColumnOfAnotherTypeIsNoReport(key: String, value: StateValue) throws {
        var tree: [String: StateValue] = [
            "archive": .string("main"), "date": .date(Date(timeIntervalSince1970: 0)), "outcome": .string("restored"),
            "pathShared": .array([.int(0), .int(4)]), "pathTails": .array([.string("Root"), .string("/a")]),
            "classNames": .array([.string("Root")]), "classIndexes": .array([.int(0), .int(0)]),
            "versions": .array([.int(1), .int(1)]), "outcomes": .array([.int(0), .int(0)]), "reasons": .array([.null, .null]),
        ]
        #expect(RestoreReport(storedBlob: try StateValue.encode(tree))?.nodes.count == 2)
        tree[key] = value
        #expect(RestoreReport(storedBlob: try StateValue.encode(tree)) == nil)
    }

    /// A node outcome the layout does not define is no report: an unknown code, or a skipped
    /// or failed node without its reason.
    @Test(arguments: [(Int64(3), StateValue.null), (1, .null), (2, .null), (1, .container(["kind": .string("nonsense")]))])
    func anUndefinedNodeOutcomeIsNoReport(code: Int64, reason: StateValue) throws {
        func blob(code: Int64, reason: StateValue) throws -> [UInt8] {
            try StateValue.encode([
                "archive": .string("main"), "date": .date(Date(timeIntervalSince1970: 0)), "outcome": .string("restored"),
                "paths": .array([.string("Root")]), "classes": .array([.string("Root")]), "versions": .array([.int(1)]),
                "outcomes": .array([.int(code)]), "reasons": .array([reason]),
            ])
        }
        #expect(RestoreReport(storedBlob: try blob(code: 0, reason: .null)) != nil)
        #expect(RestoreReport(storedBlob: try blob(code: code, reason: reason)) == nil)
    }

    @Test func damagedReportIsAnErrorNotAWrongReport() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save([ArchivedNode(path: try RestorationPath("Root"), className: "Root", state: [])], header: SampleArchives.header)
            try store.recordRestoreReport(RestoreReport(archive: .main, generation: 1, date: Date(), outcome: .restored, nodes: []))
            try tamper(with: path, "UPDATE restore_report SET report = x'01020304'")
            #expect(throws: ArchiveStoreError.damagedHistory("a restore report of archive 'main' cannot be read")) {
                try store.restoreReports()
            }
        }
    }

    /// A damaged report row made keeping the next report fail, and with it the end of every
    /// restoration: the marker stayed, and the next launch took each restoration for a crash
    /// and invalidated the generation it restored. The damaged reports are replaced instead.
    /// A sequence at the highest integer (which the schema's `CHECK (sequence > 0)` lets
    /// through) made the next one overflow: the process trapped at the end of every
    /// restoration, at every launch. One below zero broke that `CHECK` at every insertion.
    @Test(arguments: ["'x'", "9223372036854775807", "-5"])
    func aDamagedReportDoesNotTurnARestorationIntoACrash(sequence: String) throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "saved")])
            #expect(try makeEngine(store).restore([Probe("Root")]).isComplete)
            try tamperBypassingStrict(
                with: path, table: "restore_report",
                "PRAGMA ignore_check_constraints = ON; UPDATE restore_report SET sequence = \(sequence)")
            let restored = try makeEngine(try ArchiveStore(path: path)).restore([Probe("Root")])
            #expect(restored.isComplete && restored.report.outcome == .restored)
            #expect(try !store.hasCrashMarker())
            let next = Probe("Root")
            #expect(try makeEngine(try ArchiveStore(path: path)).restore([next]).report.outcome == .restored)
            #expect(next.value == "saved")
            #expect(try store.restoreReports().count == 2, "the damaged one replaced by the first, then the second")
        }
    }

    /// A report keeps each class name once, and `String` finds two Unicode forms of one name
    /// equal: the second node's class name came back in the first's form, other bytes than
    /// the store holds for it. The names are searched in order up to 16, and in a dictionary
    /// beyond: the two forms come among the first names, or after 20 others.
    @Test(arguments: [0, 15, 16, 20])
    func classNamesComeBackAsTheirBytes(othersFirst: Int) throws {
        let composed = "Caf\u{E9}", decomposed = "Cafe\u{301}"
        let others = (0..<othersFirst).map { "Other\($0)" }
        let names = others + [composed, decomposed, "Other0", composed, decomposed, decomposed] + others.reversed()
        let nodes = try names.enumerated().map { index, name in
            RestoreReport.Node(
                path: try RestorationPath("Root", "n\(index)"), className: name, classVersion: 0, outcome: .restored)
        }
        let report = RestoreReport(
            archive: .main, generation: 1, date: Date(timeIntervalSince1970: 1_800_000_000), outcome: .restored,
            nodes: nodes)
        let blob = try report.storedBlob()
        let read = try #require(RestoreReport(storedBlob: blob))
        #expect(read.nodes.map { Array($0.className.utf8) } == nodes.map { Array($0.className.utf8) })
        let stored = try StateDecoder(blob: blob).decode([String].self, forKey: "classNames")
        #expect(stored.map { Array($0.utf8) } == (others + [composed, decomposed] + (othersFirst == 0 ? ["Other0"] : [])).map { Array($0.utf8) })
    }

    /// A report of more nodes than an array of the blob format holds when read was written all
    /// the same (12.6 MB for 1,048,577 nodes), and could never be read back: `report`, `events`
    /// and `check` met a damaged report, one more at each launch, 16 kept. It is not recorded;
    /// the restoration's end is, and the reports before it stay.
    @Test func aReportTooLargeToReadBackIsNotRecordedAndTheRestorationStillEnds() throws {
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            try engine.preserve([Probe("Root")])
            _ = try engine.restore([Probe("Root")])
            let kept = try store.restoreReports()
            #expect(kept.count == 1)

            let snapshot = try #require(try store.prepareRestoration(of: .main).snapshot)
            let generation = snapshot.header.generation
            let start = try store.beginRestoration(of: .main, generation: generation, nodeDigest: snapshot.nodeDigest)
            guard case .began(let token) = start else {
                Issue.record("the restoration did not begin: \(start)")
                return
            }
            #expect(try store.hasCrashMarker())
            let limit = DecodingLimits.default.maximumElementCount
            let root = try RestorationPath("Root")
            let nodes = try (0...limit).map { index in
                RestoreReport.Node(
                    path: try root.appending(String(index, radix: 36)), className: "Probe", classVersion: 0,
                    outcome: .restored)
            }
            let report = RestoreReport(archive: .main, generation: generation, date: Date(), outcome: .restored, nodes: nodes)
            let refusal = ArchiveStoreError.reportNotRecorded(
                "the report lists \(limit + 1) nodes; a stored report holds at most \(limit)")
            #expect(throws: refusal) { try store.recordRestoreReport(report) }
            #expect(throws: refusal) {
                try store.finishRestoration(
                    of: .main, generation: generation, nodeDigest: snapshot.nodeDigest, token: token, report: report)
            }
            #expect(try !store.hasCrashMarker(), "the end is recorded without the report")
            #expect(try store.generations().first?.restoredCleanly == true)
            #expect(try store.restoreReports() == kept)
            #expect(try store.check().isEmpty)
        }
    }

    /// A store holding more reports than the window (kept by a library that retained more)
    /// is brought back to it by the next report, not only the one report that falls out.
    @Test func reportsBeyondTheWindowArePrunedAll() throws {
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            try engine.preserve([Probe("Root")])
            let window = Int64(ArchiveStore.retainedRestoreReports)
            for _ in 0..<(window + 4) { _ = try engine.restore([Probe("Root")]) }
            func sequences() throws -> [Int64] {
                try store.withConnection { connection in
                    let statement = try connection.statement("SELECT sequence FROM restore_report ORDER BY sequence")
                    var found: [Int64] = []
                    while try statement.step() { found.append(try statement.int64(0)) }
                    return found
                }
            }
            #expect(try sequences() == Array(5...(window + 4)))
            // Four older reports, as a library that kept 20 would have left them.
            try store.withConnection { connection in
                try connection.execute(
                    """
                    INSERT INTO restore_report (archive_id, sequence, generation, reported_at, outcome, report) \
                    SELECT archive_id, sequence - 4, generation, reported_at, outcome, report FROM restore_report \
                    WHERE sequence BETWEEN 5 AND 8
                    """)
            }
            #expect(try sequences() == Array(1...(window + 4)))
            _ = try engine.restore([Probe("Root")])
            #expect(try sequences() == Array(6...(window + 5)))
            #expect(try store.restoreReports().count == ArchiveStore.retainedRestoreReports)
        }
    }
}
