import CSQLite
import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

@Suite("Damage is detected, never read back as different content")
struct StoreDamageTests {
    /// A store with one archive of 10 nodes (generation 1), closed.
    private func withSavedStore(_ body: (String, [ArchivedNode]) throws -> Void) throws {
        try withTemporaryStorePath { path in
            let nodes = try SampleArchives.tree(count: 10)
            try ArchiveStore(path: path).save(nodes, header: SampleArchives.header)
            try body(path, nodes)
        }
    }

    /// A store with two generations of a 10-node tree, open: the second changes `nodes[4]`'s
    /// state to what `state` makes of it. `nodes` are the first generation's.
    private func withTwoGenerations(
        changing state: (ArchivedNode) -> [UInt8] = { _ in [7] }, _ body: (String, ArchiveStore, [ArchivedNode]) throws -> Void
    ) throws {
        try withTemporaryStorePath { path in
            let nodes = try SampleArchives.tree(count: 10)
            let store = try ArchiveStore(path: path)
            try store.save(nodes, header: SampleArchives.header)
            var changed = nodes[4]
            changed.state = state(nodes[4])
            try store.saveChanges([changed], basedOn: 1, header: SampleArchives.header)
            try body(path, store, nodes)
        }
    }

    /// Rewrites a generation's header as a writer that knew the store's checksums would: its
    /// count, size and digest changed by `change`, its checksum made again. Damage that no
    /// checksum shows is what `check()` looks for beyond them (a bug in a writer).
    private func rewriteHeader(
        of path: String, generation: Generation, _ change: (inout ArchiveRows.GenerationRow) -> Void
    ) throws {
        let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
        let archive = try #require(try ArchiveRows.archive(named: .main, in: connection))
        var row = try #require(try ArchiveRows.generation(generation, of: archive, in: connection))
        change(&row)
        let checksum = ArchiveRows.generationChecksum(archive: .main, row: row)
        try connection.execute(
            """
            UPDATE generation SET node_count = \(row.nodeCount), total_bytes = \(row.totalBytes), \
            node_digest = \(row.nodeDigest), checksum = \(checksum) WHERE generation = \(generation.rawValue)
            """)
    }

    @Test func changedNodeStateIsADamagedNodeErrorNamingItsPath() throws {
        try withSavedStore { path, nodes in
            let target = nodes[3].path
            try tamper(with: path, "UPDATE node SET state = x'00ff' WHERE path = '\(target.description)'")
            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(throws: ArchiveStoreError.damagedNode(.main, target, 1)) { try store.snapshot() }
            #expect(throws: ArchiveStoreError.damagedNode(.main, target, 1)) { try store.node(at: target) }
            #expect(try store.node(at: nodes[2].path) == nodes[2])
        }
    }

    /// A node whose row damage took away, or moved to another path, is not "no node": a
    /// lookup that finds no row at a path reads the generation whole, and a generation whose
    /// nodes no longer match their header is damaged. A path the generation never had is
    /// still `nil` when the generation is whole.
    @Test(arguments: [
        (
            "DELETE FROM node WHERE path = 'Root/n1'",
            "it holds no node at '%@' that can be read: its nodes do not match the header's count, size and digest"
        ),
        (
            "UPDATE node SET path = 'Root/n9' WHERE path = 'Root/n1'",
            "it holds no node at '%@' that can be read: its damaged node at 'Root/n9' may be that node"
        ),
        (
            "UPDATE node SET path = 'Root/n9' || path WHERE path IN ('Root/n1', 'Root/n2')",
            "it holds no node at '%@' that can be read: one of its 2 damaged nodes ('Root/n9Root/n1', 'Root/n9Root/n2') may be that node"
        ),
        (
            "UPDATE node SET path = 'Root/n9' || path WHERE path IN ('Root/n1', 'Root/n2', 'Root/n3', 'Root/n4')",
            "it holds no node at '%@' that can be read: one of its 4 damaged nodes ('Root/n9Root/n1', 'Root/n9Root/n2', 'Root/n9Root/n3', …) may be that node"
        ),
    ])
    func aLookupThatFindsNoNodeInADamagedGenerationSaysItIsDamaged(sql: String, reason: String) throws {
        try withSavedStore { path, nodes in
            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try store.node(at: .text("Root/n7")) == nil)
            try tamper(with: path, sql)
            let damaged = try ArchiveStore(path: path, mode: .readOnly)
            for asked in ["Root/n1", "Root/n7"] {
                let expected = reason.replacingOccurrences(of: "%@", with: asked)
                #expect(throws: ArchiveStoreError.damagedArchive(.main, 1, expected)) { try damaged.node(at: .text(asked)) }
            }
            // A node found is checked on its own, as before.
            #expect(try damaged.node(at: nodes[5].path) == nodes[5])
        }
    }

    /// Inspection (`restorectl tree` and `show`) reads the generation as a restoration does:
    /// a damaged node is kept, with what the store holds, and named; the others are as saved.
    /// Damage beyond one node still fails the read.
    @Test func anInspectionSnapshotKeepsADamagedNodeAndNamesIt() throws {
        try withSavedStore { path, nodes in
            let target = nodes[3].path
            try tamper(with: path, "UPDATE node SET state = x'00ff' WHERE path = '\(target.description)'")
            let store = try ArchiveStore(path: path, mode: .readOnly)
            let snapshot = try #require(try store.inspectionSnapshot())
            #expect(snapshot.damagedPaths == [target])
            #expect(snapshot.nodeDamage == [target: .damagedNode(.main, target, snapshot.header.generation)])
            #expect(try store.check().first { $0.path == target }?.problem == "its content does not match its checksum")
            let sorted = nodes.sorted { $0.path < $1.path }
            #expect(snapshot.nodes.map(\.path) == sorted.map(\.path))
            #expect(snapshot.nodes.first { $0.path == target }?.state == [0x00, 0xFF])
            #expect(snapshot.nodes.filter { $0.path != target } == sorted.filter { $0.path != target })
            #expect(try store.inspectionSnapshot(generation: 1) == snapshot)

            try tamper(with: path, "DELETE FROM node WHERE path = '\(nodes[4].path.description)'")
            let error = try #require(throws: ArchiveStoreError.self) { try ArchiveStore(path: path, mode: .readOnly).inspectionSnapshot() }
            guard case .damagedArchive = error else {
                Issue.record("expected damagedArchive, got \(error)")
                return
            }
            // Named once under the archive and generation, not again in the error's words.
            #expect(
                try store.check().map(\.description).contains(
                    "archive 'main', generation 1: its nodes do not match the header's count, size and digest"))
        }
    }

    @Test(arguments: [
        "UPDATE node SET class_name = 'Other' WHERE path = 'Root/n1'",
        "UPDATE node SET class_version = 99 WHERE path = 'Root/n1'",
        "UPDATE node SET sibling_order = 3 WHERE path = 'Root/n1'",
        "UPDATE node SET born = 1, path = 'Root/n9' WHERE path = 'Root/n1'",
        "INSERT INTO node SELECT archive_id, epoch, 'Root/n1/x', born, died, class_name, class_version, "
            + "sibling_order, state, checksum FROM node WHERE path = 'Root/n1/n5'",
    ])
    func changedLocatingFieldsAreDetected(sql: String) throws {
        try withSavedStore { path, _ in
            try tamper(with: path, sql)
            let store = try ArchiveStore(path: path, mode: .readOnly)
            let error = try #require(throws: ArchiveStoreError.self) { try store.snapshot() }
            switch error {
            case .damagedNode, .damagedArchive: break
            default: Issue.record("unexpected \(error)")
            }
        }
    }

    /// A node row's columns other than its path are read without checking their storage
    /// class (`STRICT` keeps SQL from changing it; only a damaged file does). A value of
    /// another class is read as SQLite converts it and checked by the node's checksum: damage
    /// to that node alone, or, when it converts to the value saved (the state's bytes as text,
    /// a version of 1.5 read as 1), the node as saved. `check()` reports the column either way.
    @Test(arguments: [
        ("class_version = 'one'", "text", true),
        ("sibling_order = 2.5", "real", true),
        ("checksum = 'none'", "text", true),
        ("class_name = x'4f74686572'", "blob", true),
        ("state = 12", "integer", true),
        ("born = 1.5", "real", false),
        ("class_version = 1.5", "real", false),
        ("checksum = CAST(checksum AS TEXT) || 'x'", "text", false),
        ("state = CAST(state AS TEXT)", "text", false),
        ("class_name = CAST(class_name AS BLOB)", "blob", false),
    ])
    func aNodeColumnOfAnotherStorageClassIsCheckedByTheChecksum(change: String, storedAs: String, damaged: Bool) throws {
        try withSavedStore { path, nodes in
            let target = try RestorationPath("Root", "n1")
            try tamperBypassingStrict(with: path, table: "node", "UPDATE node SET \(change) WHERE path = 'Root/n1'")
            let column = String(change.prefix { $0 != " " })
            let reader = try Connection(filename: path, flags: SQLITE_OPEN_READONLY)
            #expect(try reader.pragmaText("SELECT typeof(\(column)) FROM node WHERE path = 'Root/n1'") == storedAs)
            let store = try ArchiveStore(path: path, mode: .readOnly)
            if damaged {
                #expect(throws: ArchiveStoreError.damagedNode(.main, target, 1)) { try store.snapshot() }
                #expect(throws: ArchiveStoreError.damagedNode(.main, target, 1)) { try store.node(at: target) }
                #expect(try store.node(at: nodes[2].path) == nodes[2])
            } else {
                #expect(try store.snapshot()?.nodes == nodes.sorted { $0.path < $1.path })
            }
            // Either way the file is damaged, and a check says where.
            #expect(try store.check().contains { $0.problem.contains("node.\(column)") })
        }
    }

    /// A row whose `born` damage moved past the newest generation: the newest generation's
    /// query (rows never retired) reads it and its checksum names it; an older generation's
    /// query leaves it out, and the count says the generation lost a node.
    @Test func aRowBornAfterTheNewestGenerationIsDamage() throws {
        try withTwoGenerations { path, _, nodes in
            // Generation 1's row of nodes[3], which generation 2 still reads, born "later".
            try tamper(with: path, "UPDATE node SET born = 9 WHERE path = '\(nodes[3].path.description)'")
            let damaged = try ArchiveStore(path: path, mode: .readOnly)
            #expect(throws: ArchiveStoreError.damagedNode(.main, nodes[3].path, 2)) { try damaged.snapshot() }
            let older = try #require(throws: ArchiveStoreError.self) { try damaged.snapshot(generation: 1) }
            guard case .damagedArchive(.main, 1, _) = older else {
                Issue.record("unexpected \(older)")
                return
            }
        }
    }

    /// A node's current row lost and its earlier row made current again (a damaged page, or a
    /// hand edit, could do both): that row's own checksum still holds, and the generation keeps
    /// its count and size. Only the header's digest of its nodes' checksums tells that
    /// generation 2 would show generation 1's state of the node.
    @Test func anEarlierRowOfANodeInPlaceOfItsCurrentOneIsDamage() throws {
        // The state changed, its size the same.
        try withTwoGenerations(changing: { node in node.state.map { $0 &+ 1 } }) { path, _, nodes in
            let text = nodes[4].path.description
            try tamper(
                with: path,
                "DELETE FROM node WHERE path = '\(text)' AND born = 2; UPDATE node SET died = NULL WHERE path = '\(text)'")
            let damaged = try ArchiveStore(path: path, mode: .readOnly)
            let error = try #require(throws: ArchiveStoreError.self) { try damaged.snapshot() }
            guard case .damagedArchive(.main, 2, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            // Generation 1 did read that row: it is as saved.
            #expect(try damaged.snapshot(generation: 1)?.nodes == nodes.sorted { $0.path < $1.path })
        }
    }

    @Test func checkFindsANodeWhoseParentIsNotInTheGeneration() throws {
        try withSavedStore { path, nodes in
            let child = nodes[9]
            let parent = try #require(nodes.first { $0.path == child.path.parent })
            try tamper(with: path, "DELETE FROM node WHERE path = '\(parent.path.description)'")
            try rewriteHeader(of: path, generation: 1) { row in
                row.nodeCount -= 1
                row.totalBytes -= Int64(parent.state.count)
                row.nodeDigest &-= ArchiveRows.nodeChecksum(archive: .main, node: parent, born: 1)
            }
            let problems = try ArchiveStore(path: path, mode: .readOnly).check()
            #expect(problems.contains {
                $0.generation == 1 && $0.path == child.path && $0.problem == "its parent '\(parent.path)' is not in the generation"
            })
        }
    }

    @Test func checkFindsTwoNodesWithOnePath() throws {
        try withTwoGenerations { path, store, nodes in
            // Generation 1's row of the node, which generation 2 retired, live again beside the new one.
            try tamper(with: path, "UPDATE node SET died = NULL WHERE path = '\(nodes[4].path.description)' AND born = 1")
            try rewriteHeader(of: path, generation: 2) { row in
                row.nodeCount += 1
                row.totalBytes += Int64(nodes[4].state.count)
                row.nodeDigest &+= ArchiveRows.nodeChecksum(archive: .main, node: nodes[4], born: 1)
            }
            let problems = try store.check()
            #expect(problems.contains { $0.generation == 2 && $0.path == nodes[4].path && $0.problem == "two nodes share this path" })
        }
    }

    /// Two nodes of one path in two Unicode forms (a store written directly), with another
    /// path sorting between them by their bytes: `check()` looked only at neighbours in that
    /// order, and called the generation sound.
    @Test func checkFindsOnePathInTwoUnicodeFormsApartInByteOrder() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let state = try StateValue.encode([:])
            let decomposed = ArchivedNode(path: try RestorationPath("cafe\u{301}"), className: "Screen", state: state)
            let between = ArchivedNode(path: try RestorationPath("cafe\u{302}"), className: "Screen", state: state)
            try store.save([decomposed, between], header: SampleArchives.header)
            #expect(try store.check() == [])
            let composed = ArchivedNode(path: try RestorationPath("caf\u{E9}"), className: "Screen", state: state)
            let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
            let archive = try #require(try ArchiveRows.archive(named: .main, in: connection))
            let checksum = try NodeRowWriter(archive: archive, seal: nil, connection: connection).insert(composed, born: 1, epoch: 1)
            try rewriteHeader(of: path, generation: 1) { row in
                row.nodeCount += 1
                row.totalBytes += Int64(state.count)
                row.nodeDigest &+= checksum
            }
            #expect(try store.check() == [StoreProblem(archive: .main, generation: 1, path: composed.path, problem: "two nodes share this path")])
        }
    }

    /// `check()` names what the store's other reads would fail on: an entry of the journal
    /// (`journal()`, `launches()`), a restore report (`restoreReports(of:)`), a crash marker
    /// (a launch's restoration). It found only damage to generations and nodes ("healthy"
    /// while `restorectl events` failed).
    @Test func checkFindsADamagedJournalEntryRestoreReportAndCrashMarker() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.record(.didFinishLaunching)
            try store.record(.didBecomeActive)
            let engine = try makeEngine(store)
            try engine.preserve([Probe("Root", value: "saved")])
            #expect(try engine.restore([Probe("Root")]).isComplete)
            #expect(try !makeEngine(store).restore([SlowScreen("Root")]).isComplete)
            #expect(try store.check() == [])

            // Damage that SQLite's integrity check passes: text that is not UTF-8 and a blob
            // are nothing to it.
            try tamper(
                with: path,
                """
                UPDATE journal SET event = 'discarded', app_state = NULL, archive = CAST(x'ff' AS TEXT), detail = 'x' \
                WHERE id = 1;
                UPDATE restore_report SET report = x'01020304' WHERE sequence = 1
                """)
            #expect(
                try store.check().map(\.description) == [
                    "archive 'main': restore report 1 cannot be read",
                    "journal entry 1: The store's history is damaged: a journal entry names an invalid archive.",
                ])
            // What the other reads say.
            #expect(throws: ArchiveStoreError.damagedHistory("a journal entry names an invalid archive")) {
                try store.journal()
            }
            #expect(throws: ArchiveStoreError.self) { try store.restoreReports() }
            // A marker's damage, which SQLite's check names too (a STRICT column's type).
            try tamperBypassingStrict(with: path, table: "crash_marker", "UPDATE crash_marker SET started_at = 'x'")
            let problems = try store.check().map(\.description)
            #expect(
                problems.contains(
                    "archive 'main': its crash marker is damaged (column 'started_at' holds a value that is not integer): the "
                        + "archive's next launch takes it for a restoration that died"),
                "\(problems)")
            // A report whose sequence is damaged too is named without one.
            try tamperBypassingStrict(
                with: path, table: "restore_report", "UPDATE restore_report SET sequence = 'x', report = x'00'")
            #expect(try store.check().map(\.description).contains("archive 'main': a restore report cannot be read"))
            // An unknown event is named as such, although its row names no archive (a lifecycle
            // event's row names none): it was "names an invalid archive".
            try tamper(with: path, "PRAGMA ignore_check_constraints = ON; UPDATE journal SET event = 'bogus' WHERE id = 2")
            #expect(throws: ArchiveStoreError.damagedHistory("a journal entry has an unknown event")) { try store.journal() }
        }
    }

    /// Damage to the store's history (a journal entry, a restore report) is damage, and not
    /// an unusable store: the launch pattern that erases on ``ArchiveStoreError/isUnusableStore``
    /// lost every archive for an entry of the previous launch that could not be read, since
    /// `previousLaunch()` is asked at each launch. A value of another type, or text that is
    /// not UTF-8, is the same damage as an unknown value.
    @Test(arguments: [
        "app_state = 'bogus'", "at = 'x'", "event = CAST(x'ff' AS TEXT)", "process_id = 1.5",
    ])
    func damageToTheHistoryIsNotAnUnusableStore(_ change: String) throws {
        try withTemporaryStorePath { path in
            do {
                let store = try ArchiveStore(path: path)
                try store.record(.willFinishLaunching)
                try makeEngine(store).preserve([Probe("Root", value: "saved")])
                #expect(try makeEngine(store).restore([Probe("Root")]).isComplete)
                try store.record(.didEnterBackground)
            }
            try tamperBypassingStrict(
                with: path, table: "journal",
                "PRAGMA ignore_check_constraints = ON; UPDATE journal SET \(change) WHERE id = (SELECT max(id) FROM journal)")
            try tamper(with: path, "UPDATE restore_report SET report = x'01020304'")
            let store = try ArchiveStore(path: path)
            try store.record(.willFinishLaunching)
            for read in [{ _ = try store.previousLaunch() }, { _ = try store.journal() }, { _ = try store.restoreReports() }] {
                let error = try #require(throws: ArchiveStoreError.self) { try read() }
                guard case .damagedHistory = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(error.isDamage && !error.isUnusableStore)
            }
            let problems = try store.check().map(\.description)
            #expect(problems.contains("archive 'main': restore report 1 cannot be read"), "\(problems)")
            #expect(problems.contains { $0.contains("journal entry 2: The store's history is damaged: a journal entry") }, "\(problems)")
            let root = Probe("Root")
            #expect(try makeEngine(store).restore([root]).isComplete)
            #expect(root.value == "saved")
        }
    }

    private static let unreadableProcessID =
        "The store's history is damaged: a journal entry cannot be read (column 'process_id' holds a value that is not integer)."

    /// SQLite's own check names a column's damage without its row: rows damaged alike give one
    /// problem, not one line each that says the same. Each entry is still named by its number.
    @Test func checkNamesAProblemOnceHoweverManyRowsSayIt() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            for event in [LifecycleEvent.willFinishLaunching, .didFinishLaunching, .didBecomeActive] {
                try store.record(event)
            }
            try tamperBypassingStrict(with: path, table: "journal", "UPDATE journal SET process_id = 'x' WHERE id <= 3")
            #expect(
                try store.check().map(\.description) == [
                    "SQLite integrity check: non-INTEGER value in journal.process_id",
                    "journal entry 1: \(Self.unreadableProcessID)",
                    "journal entry 2: \(Self.unreadableProcessID)",
                    "journal entry 3: \(Self.unreadableProcessID)",
                ])
        }
    }

    /// A table `check()` cannot read at all (its schema's text damaged: a column renamed) is
    /// named once, whole, rather than stopping the check.
    @Test func checkNamesTheJournalOrTheRestoreReportsWhenItCannotReadThemAtAll() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.record(.didFinishLaunching)
            let engine = try makeEngine(store)
            try engine.preserve([Probe("Root", value: "saved")])
            #expect(try engine.restore([Probe("Root")]).isComplete)
            #expect(try store.check() == [])

            try tamperWithSchema(of: path, table: "journal", replacing: "detail       TEXT", with: "remark       TEXT")
            try tamperWithSchema(
                of: path, table: "restore_report", replacing: "report       BLOB", with: "summary      BLOB")
            let problems = try ArchiveStore(path: path, mode: .readOnly).check().map(\.description)
            #expect(problems.count == 2, "\(problems)")
            #expect(problems.contains { $0.hasPrefix("archive 'main': its restore reports: The store is damaged:") })
            #expect(problems.contains { $0.hasPrefix("the lifecycle journal: The store is damaged:") })
        }
    }

    /// A row retired by the oldest retained generation was last part of the one before it,
    /// which the prune deleted: no retained generation reads it.
    @Test func checkFindsARowThatNoRetainedGenerationReads() throws {
        try withTwoGenerations { path, store, nodes in
            var changed = nodes[5]
            changed.state = [8]
            try store.saveChanges([changed], basedOn: 2, header: SampleArchives.header)
            #expect(try store.generations().map(\.generation) == [3, 2])
            // (The sample states are not blobs: `check()` says so of every node, and that is all.)
            let stray = "a node row (saved in generation 1) belongs to no retained generation"
            #expect(!(try store.check().contains { $0.problem == stray }))
            // Generation 1's row of nodes[4], retired by generation 2, back after the prune.
            try tamper(
                with: path,
                """
                INSERT INTO node SELECT archive_id, epoch, path, 1, 2, class_name, class_version, sibling_order, state, \
                checksum FROM node WHERE path = '\(nodes[4].path.description)' AND born = 2
                """)
            #expect(try store.snapshot()?.header.generation == 3)
            #expect(try store.check().contains { $0.generation == nil && $0.path == nodes[4].path && $0.problem == stray })
        }
    }

    @Test(arguments: [
        "DELETE FROM node WHERE path = 'Root/n1/n5'",
        "UPDATE node SET died = 2 WHERE path = 'Root/n1/n5'",
        "UPDATE node SET epoch = 0 WHERE path = 'Root/n1/n5'",
        "UPDATE generation SET epoch = 0",
        "UPDATE generation SET node_count = 9",
        "UPDATE generation SET app_version = '12.0'",
        "UPDATE generation SET app_values = x'01'",
    ])
    func missingNodesAndChangedHeadersAreDetected(sql: String) throws {
        try withSavedStore { path, _ in
            try tamper(with: path, sql)
            let store = try ArchiveStore(path: path, mode: .readOnly)
            let error = try #require(throws: ArchiveStoreError.self) { try store.snapshot() }
            guard case .damagedArchive(.main, 1, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func aPathStoredInANonCanonicalFormIsDamage() throws {
        try withTemporaryStorePath { path in
            let odd = try RestorationPath("Root", "a/b")
            try ArchiveStore(path: path).save(
                [ArchivedNode(path: try RestorationPath("Root"), className: "R", state: []),
                 ArchivedNode(path: odd, className: "O", state: [])],
                header: SampleArchives.header)
            // Same identifiers, other spelling: lower-case escape.
            try tamper(with: path, "UPDATE node SET path = 'Root/a%2fb' WHERE path = 'Root/a%2Fb'")
            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(throws: ArchiveStoreError.damagedArchive(.main, 1, "a node has an unreadable path")) { try store.snapshot() }
        }
    }

    @Test func aNodeMovedToAnotherArchiveIsDetected() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let other = try ArchiveName("other")
            try store.save(try SampleArchives.tree(count: 3, fill: 1), header: SampleArchives.header)
            try store.save(try SampleArchives.tree(count: 3, fill: 2), header: SampleArchives.header, in: other)
            // Replace main's copy of a node with the other archive's copy of it.
            try tamper(
                with: path,
                """
                DELETE FROM node WHERE archive_id = 1 AND path = 'Root/n1';
                UPDATE node SET archive_id = 1 WHERE archive_id = 2 AND path = 'Root/n1';
                """)
            #expect(throws: ArchiveStoreError.damagedNode(.main, try RestorationPath("Root", "n1"), 1)) {
                try store.snapshot()
            }
        }
    }

    /// The reader reuses the previous row's class name when the stored bytes are the same:
    /// a class name damaged into the previous row's is still caught by the checksum, and one
    /// damaged into invalid UTF-8 after rows of another class is still validated.
    @Test func aClassNameIsCheckedWhenTheReaderReusesThePreviousOne() throws {
        try withSavedStore { path, _ in
            // Root/n1 follows Root in path order: its class becomes Root's bytes.
            try tamper(with: path, "UPDATE node SET class_name = 'Root' WHERE path = 'Root/n1'")
            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(throws: ArchiveStoreError.damagedNode(.main, try RestorationPath("Root", "n1"), 1)) {
                try store.snapshot()
            }
        }
        try withSavedStore { path, _ in
            try tamper(with: path, "UPDATE node SET class_name = CAST(x'c328' AS TEXT) WHERE path = 'Root/n2'")
            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(throws: ArchiveStoreError.damagedNode(.main, try RestorationPath("Root", "n2"), 1)) {
                try store.snapshot()
            }
        }
    }

    @Test func invalidUTF8InAStoredTextIsATypedError() throws {
        // In a generation's header: damage to that generation, as a changed value is (it was
        // damage to the whole store, which an app erases); the next save replaces it.
        for change in ["app_build = CAST(x'31ff32' AS TEXT)", "saved_at = 'noon'"] {
            try withSavedStore { path, nodes in
                try tamperBypassingStrict(with: path, table: "generation", "UPDATE generation SET \(change)")
                let store = try ArchiveStore(path: path, mode: .readOnly)
                let column = change.prefix { $0 != " " }
                let what = change.hasPrefix("app_build") ? "holds text that is not valid UTF-8" : "holds a value that is not integer"
                #expect(throws: ArchiveStoreError.damagedArchive(.main, 1, "its header cannot be read (column '\(column)' \(what))")) {
                    try store.snapshot()
                }
                #expect(try ArchiveStore(path: path).save(nodes, header: SampleArchives.header).generation == 2)
                #expect(try store.snapshot()?.header.generation == 2)
            }
        }
        // A class name that is not UTF-8 is damage to its node alone, as any other change to
        // it is: the other nodes are read and restored. It was damage to the whole store, and
        // a byte of it lost every screen of the archive.
        try withSavedStore { path, nodes in
            let target = nodes[3].path
            try tamper(with: path, "UPDATE node SET class_name = CAST(x'53c328' AS TEXT) WHERE path = '\(target)'")
            let store = try ArchiveStore(path: path, mode: .readOnly)
            let damage = ArchiveStoreError.damagedNode(.main, target, 1)
            #expect(throws: damage) { try store.node(at: target) }
            #expect(throws: damage) { try store.snapshot() }
            #expect(try store.node(at: nodes[2].path) == nodes[2])
            let snapshot = try #require(try store.inspectionSnapshot())
            #expect(snapshot.damagedPaths == [target])
            #expect(snapshot.nodes.first { $0.path == target }?.className == "S\u{FFFD}(")
            #expect(try store.check().map(\.problem).contains { $0.contains("does not match its checksum") })
        }
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", [Probe("A", value: "a"), Probe("B", value: "b")])])
            try tamper(with: path, "UPDATE node SET class_name = CAST(x'50c328' AS TEXT) WHERE path = 'Root/A'")
            let b = Probe("B")
            let result = try makeEngine(store).restore([Probe("Root", [Probe("A"), b])])
            #expect(result.report.outcome == .restored)
            #expect(result.report.nodes.map(\.outcome) == [.restored, .failed(.checksumMismatch), .restored])
            #expect(b.value == "b")
        }
        // A path's bytes, read for all rows before any is checked, are checked as UTF-8 too, and
        // a path stored as another type (its bytes the same) is refused: damage to the
        // generation, whose tree it breaks, as a path in another form is (it was damage to the
        // whole store, which an app erases).
        for change in ["CAST(x'526f6f742f6eff' AS TEXT)", "CAST(path AS BLOB)"] {
            try withSavedStore { path, _ in
                try tamperBypassingStrict(with: path, table: "node", "UPDATE node SET path = \(change) WHERE path = 'Root/n4'")
                let store = try ArchiveStore(path: path, mode: .readOnly)
                #expect(throws: ArchiveStoreError.damagedArchive(.main, 1, "a node has an unreadable path")) {
                    try store.snapshot()
                }
                #expect(throws: ArchiveStoreError.damagedArchive(.main, 1, "a node has an unreadable path")) {
                    try store.inspectionSnapshot()
                }
            }
        }
    }

    /// A header's text or bytes in the other storage class, the same bytes (which the
    /// checksum, taken over the bytes, cannot tell from the saved value), is damage to that
    /// generation too: a header's columns are read only in the class the schema gives them.
    @Test func aHeaderValueInTheOtherStorageClassIsDamage() throws {
        let changes = [
            ("app_values = CAST(app_values AS TEXT)", "app_values", "blob"),
            ("app_version = CAST(app_version AS BLOB)", "app_version", "text"),
        ]
        for (change, column, expected) in changes {
            try withSavedStore { path, _ in
                try tamperBypassingStrict(with: path, table: "generation", "UPDATE generation SET \(change)")
                let store = try ArchiveStore(path: path, mode: .readOnly)
                let reason = "its header cannot be read (column '\(column)' holds a value that is not \(expected))"
                #expect(throws: ArchiveStoreError.damagedArchive(.main, 1, reason)) { try store.snapshot() }
            }
        }
    }

    /// An incremental save of a new path that is not ASCII reads the generation's other paths
    /// that are not (for one in another Unicode form): one of them damaged (another type, or
    /// not UTF-8) is damage to the generation there too, which the engine answers with a full
    /// save; it was damage to the whole store, which an app erases.
    @Test(arguments: ["CAST(x'52c3a92fff' AS TEXT)", "CAST(path AS BLOB)"])
    func anIncrementalSaveMeetingAnUnreadablePathCallsItDamageToTheGeneration(change: String) throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let nodes = try ["R\u{E9}", "R\u{E9}/a\u{E9}", "R\u{E9}/b\u{E9}"].map {
                ArchivedNode(path: try RestorationPath(parsing: $0), className: "Screen", state: [1])
            }
            try store.save(nodes, header: SampleArchives.header)
            try tamperBypassingStrict(with: path, table: "node", "UPDATE node SET path = \(change) WHERE path = 'R\u{E9}/b\u{E9}'")
            let added = ArchivedNode(path: try RestorationPath(parsing: "R\u{E9}/c\u{E9}"), className: "Screen", state: [2])
            #expect(throws: ArchiveStoreError.damagedArchive(.main, 1, "a node has an unreadable path")) {
                try store.saveChanges([added], basedOn: 1, header: SampleArchives.header)
            }
            #expect(try store.save(nodes, header: SampleArchives.header).generation == 2)
        }
    }

    /// A generation's number or epoch that damage made a real (SQLite compares it as a
    /// number, so the rows around it still find it) is damage to that generation. It was
    /// damage to the whole store: listing the generations threw it, and every save of the
    /// archive, a full one too, whose prune read every generation's numbers, so that an app
    /// erased all its archives; the saves after it now prune the row.
    @Test(arguments: ["generation", "epoch"], [Generation(1), 2])
    func aGenerationsNumberOfAnotherTypeIsDamageToThatGeneration(_ column: String, _ damaged: Generation) throws {
        try withTwoGenerations { path, store, nodes in
            try tamperBypassingStrict(
                with: path, table: "generation",
                "UPDATE generation SET \(column) = \(column) + 0.5 WHERE generation = \(damaged.rawValue)")
            let unreadable = ArchiveStoreError.damagedArchive(
                .main, damaged, "its header cannot be read (column '\(column)' holds a value that is not integer)")
            #expect(throws: unreadable) { try store.generations() }
            if damaged == 1 {
                #expect(try store.snapshot()?.header.generation == 2)
            } else {
                // A number of 2.5 is generation 2 as SQLite converts it, as the list names it.
                #expect(throws: unreadable) { try store.snapshot() }
                if column == "generation" {
                    // Nor generation 3, the newest at or below which it is (it read as damage
                    // to the whole store).
                    #expect(throws: ArchiveStoreError.generationNotFound(.main, 3)) { try store.snapshot(generation: 3) }
                }
            }
            #expect(try store.save(nodes, header: SampleArchives.header).generation == 3)
            // A number of 2.5 is no generation to report as pruned.
            let pruned: [Generation] = damaged == 2 && column == "generation" ? [] : [2]
            #expect(try store.save(nodes, header: SampleArchives.header).prunedGenerations == pruned)
            #expect(try store.generations().map(\.generation) == [4, 3])
            // (The sample states are not blobs: `check()` says so of every node.)
            #expect(try store.check().filter { $0.path == nil }.isEmpty)
        }
    }

    /// A generation pruned whose epoch damage made a real has an epoch the prune cannot read:
    /// the rows of every epoch older than the oldest retained generation's are deleted, its
    /// own among them, rather than left to no retained generation (`check()` names such rows)
    /// until a later prune.
    @Test func theRowsOfAPrunedGenerationWhoseEpochCannotBeReadAreDeleted() throws {
        try withTemporaryStorePath { path in
            let nodes = try SampleArchives.tree(count: 10)
            let store = try ArchiveStore(path: path)
            try store.save(nodes, header: SampleArchives.header)
            try store.save(nodes, header: SampleArchives.header)
            try tamperBypassingStrict(with: path, table: "generation", "UPDATE generation SET epoch = 1.5 WHERE generation = 1")
            #expect(try store.save(nodes, header: SampleArchives.header).prunedGenerations == [1])
            let stray = try store.check().filter { $0.problem.contains("belongs to no retained generation") }
            #expect(stray.isEmpty, "\(stray)")
        }
    }

    /// A retained generation older than the newest whose header cannot be read is named in
    /// the archive's summary, which lists the others. It made the whole archive read as
    /// damaged (`summary(of:)`, `archives()`: `restorectl info` showed nothing of it) while
    /// its newest generation restored, and `check()` stopped at it, leaving every generation's
    /// nodes unchecked. Damage to the newest generation's header is still the archive's.
    @Test(arguments: [
        ("app_version = '12.0'", "its header does not match its checksum"),
        ("generation = 1.5", "its header cannot be read (column 'generation' holds a value that is not integer)"),
    ])
    func anOlderGenerationsDamagedHeaderIsNamedAndTheRestRead(change: String, reason: String) throws {
        try withTwoGenerations { path, store, nodes in
            try tamperBypassingStrict(with: path, table: "generation", "UPDATE generation SET \(change) WHERE generation = 1")
            // And the row of a node only the newest generation reads, which check() must reach.
            try tamper(with: path, "UPDATE node SET state = x'0102' WHERE path = '\(nodes[4].path)' AND born = 2")
            let damage = ArchiveStoreError.damagedArchive(.main, 1, reason)
            let summary = try #require(try store.summary(of: .main))
            #expect(summary.generations.map(\.generation) == [2])
            #expect(summary.damagedGenerations == [1: reason])
            #expect(summary.header?.generation == 2 && summary.state == .valid)
            #expect(try store.archives() == [summary])
            #expect(throws: damage) { try store.generations() }
            #expect(throws: damage) { try store.snapshot(generation: 1) }
            let problems = try store.check()
            #expect(problems.contains(StoreProblem(archive: .main, generation: 1, problem: reason)), "\(problems)")
            #expect(
                problems.contains { $0.generation == 2 && $0.path == nodes[4].path && $0.problem.contains("checksum") },
                "\(problems)")
            try tamper(with: path, "UPDATE generation SET app_version = '12.0' WHERE generation = 2")
            let newest = ArchiveStoreError.damagedArchive(.main, 2, "its header does not match its checksum")
            #expect(throws: newest) { try store.summary(of: .main) }
            #expect(throws: newest) { try store.archives() }
        }
    }

    /// A number damage made a real that SQLite converts to the newest generation's number
    /// (generation 1's made 2.5, beside an intact 2) is damage to that row alone. It comes
    /// first, newest first, and read as the newest generation it kept the newest from being
    /// read and restored (a first form of the lookup that takes reals as SQLite converts them).
    @Test func aRowWhoseDamagedNumberConvertsToTheNewestsLeavesTheNewestReadable() throws {
        try withTwoGenerations { path, store, _ in
            try tamperBypassingStrict(with: path, table: "generation", "UPDATE generation SET generation = 2.5 WHERE generation = 1")
            #expect(try store.snapshot()?.header.generation == 2)
            #expect(try store.snapshot(generation: 2)?.header.generation == 2)
            #expect(try store.prepareRestoration(of: .main).snapshot?.header.generation == 2)
            let summary = try #require(try store.summary(of: .main))
            #expect(summary.generations.map(\.generation) == [2] && summary.damagedGenerations.isEmpty)
            let unreadable = "its header cannot be read (column 'generation' holds a value that is not integer)"
            #expect(throws: ArchiveStoreError.damagedArchive(.main, 2, unreadable)) { try store.generations() }
            #expect(try store.check().contains(StoreProblem(archive: .main, generation: 2, problem: unreadable)))
        }
    }

    /// Found by `scripts/torture` (damage): these used to read as "nothing to restore", so a
    /// launch silently started afresh.
    @Test func aNewestGenerationWithoutItsHeaderIsDamageNotNothingToRestore() throws {
        try withSavedStore { path, _ in
            try tamper(with: path, "DELETE FROM generation")
            let store = try ArchiveStore(path: path)
            let damage = ArchiveStoreError.damagedArchive(.main, 1, "the header of its newest generation is missing")
            #expect(damage.isDamage)
            #expect(!ArchiveStoreError.readOnly.isDamage && !ArchiveStoreError.archiveNotFound(.main).isDamage)
            #expect(throws: damage) { () throws -> Void in _ = try store.snapshot() }
            #expect(throws: damage) { () throws -> Void in _ = try store.header() }
            // The summaries, which `restorectl info` shows, too: they called it valid, with no
            // generation retained.
            #expect(throws: damage) { () throws -> Void in _ = try store.summary(of: .main) }
            #expect(throws: damage) { () throws -> Void in _ = try store.archives() }
            #expect(try store.check().contains { $0.generation == 1 && $0.problem.contains("newest generation is missing") })
            let engine = try RestorationEngine(
                store: store, app: AppIdentity(version: "1", build: "1"), registry: RestorationRegistry())
            // The engine reports damage as a failed restoration, never as nothing to restore.
            #expect(try engine.restore([]).report.outcome == .failed(reason: damage.description))
        }
    }

    /// A full save replaces a damaged generation, or a damaged archive row: it reads nothing
    /// of the previous generation, and writes the row again, so damage there never stops the
    /// app from saving again (every save read the row, which once stopped them all).
    @Test(arguments: [
        "UPDATE generation SET app_version = '12.0'",
        "UPDATE generation SET epoch = 7",
        "DELETE FROM generation",
        "UPDATE node SET state = x'00ff' WHERE path = 'Root/n1'",
        "UPDATE archive SET created_at = created_at + 1",
        "UPDATE archive SET generation = 0",
        "PRAGMA ignore_check_constraints = ON; UPDATE archive SET generation = -3",
        "UPDATE archive SET generation = 9223372036854775807",
        // As a row written before v0005, without a checksum: the numbers alone tell.
        "PRAGMA ignore_check_constraints = ON; UPDATE archive SET generation = -3, checksum = NULL",
        "UPDATE archive SET generation = 9223372036854775807, checksum = NULL",
        "UPDATE archive SET discarded_at = 5, discard_reason = 'x'",
    ])
    func aFullSaveReplacesDamage(sql: String) throws {
        try withSavedStore { path, nodes in
            try tamper(with: path, sql)
            let store = try ArchiveStore(path: path)
            let error = #expect(throws: ArchiveStoreError.self) { () throws -> Void in _ = try store.snapshot() }
            #expect(error?.isDamage == true)
            var saved = nodes
            saved[0].state = [7]
            let result = try store.save(saved, header: SampleArchives.header)
            #expect(result.generation == 2)
            #expect(try store.snapshot()?.nodes == saved.sorted { $0.path < $1.path })
            // The row is whole again: another connection reads it, and saves after it.
            let reopened = try ArchiveStore(path: path)
            #expect(try reopened.snapshot()?.header.generation == 2)
            #expect(try reopened.saveChanges([saved[1]], basedOn: 2, header: SampleArchives.header).generation == 3)
        }
    }

    /// A damaged archive row's newest generation cannot be trusted: the save after it takes
    /// a generation above every one the store still names for the archive (here one damaged to 0
    /// after generations 1 and 2 were discarded, each row below naming a higher one), so that
    /// no marker, report, journal entry or row is taken for the new generation's.
    @Test(arguments: [
        ("INSERT INTO restore_report (archive_id, sequence, generation, reported_at, outcome, report) "
            + "VALUES (1, 99, 7, 0, 'failed', x'00')", 8),
        ("INSERT INTO journal (at, process_id, event, archive, generation, detail) "
            + "VALUES (0, 1, 'invalidated', 'main', 9, 'x')", 10),
        ("INSERT INTO crash_marker (archive_id, generation, started_at, process_id) VALUES (1, 11, 0, 1)", 12),
        ("INSERT INTO node (archive_id, epoch, path, born, died, class_name, class_version, sibling_order, state, "
            + "checksum) VALUES (1, 13, 'Root', 1, 14, 'C', 1, 0, x'00', 0)", 15),
    ])
    func aSaveAfterADamagedArchiveRowTakesANewGeneration(sql: String, expected: Int64) throws {
        try withSavedStore { path, nodes in
            let store = try ArchiveStore(path: path)
            try store.save(nodes, header: SampleArchives.header)
            try store.discard(reason: "test")
            try tamper(with: path, "\(sql); UPDATE archive SET generation = 0")
            #expect(throws: ArchiveStoreError.self) { () throws -> Void in _ = try store.summary(of: .main) }
            #expect(try store.save(nodes, header: SampleArchives.header).generation == Generation(expected))
        }
    }

    /// A number of another type among those a damaged archive's rows name (text, which
    /// SQLite's `max` takes over any number, or a real) names no generation: it does not stop
    /// the save that replaces the archive, which said the whole store was damaged (which an
    /// app erases).
    @Test(arguments: [
        ("crash_marker", "INSERT INTO crash_marker (archive_id, generation, started_at, process_id) VALUES (1, 'x', 0, 1)"),
        ("crash_marker", "INSERT INTO crash_marker (archive_id, generation, started_at, process_id) VALUES (1, 5.5, 0, 1)"),
        ("restore_report", "INSERT INTO restore_report (archive_id, sequence, generation, reported_at, outcome, report) "
            + "VALUES (1, 99, 'x', 0, 'failed', x'00')"),
        ("journal", "INSERT INTO journal (at, process_id, event, archive, generation, detail) "
            + "VALUES (0, 1, 'invalidated', 'main', 5.5, 'x')"),
        ("generation", "UPDATE generation SET generation = 'x'"),
        ("node", "UPDATE node SET epoch = 5.5 WHERE path = 'Root'"),
    ])
    func aNumberOfAnotherTypeBesideADamagedArchiveRowNamesNoGeneration(table: String, sql: String) throws {
        try withSavedStore { path, nodes in
            try tamperBypassingStrict(with: path, table: table, sql)
            try tamper(with: path, "UPDATE archive SET created_at = created_at + 1")
            let store = try ArchiveStore(path: path)
            #expect(try store.save(nodes, header: SampleArchives.header).generation == 2)
            let snapshot = try #require(try store.snapshot())
            #expect(snapshot.header.generation == 2 && Set(snapshot.nodes) == Set(nodes))
        }
    }

    /// The highest generation a damaged archive's rows name may be the highest there is:
    /// then no new one can be numbered, and the save says the store is damaged rather than
    /// overflowing.
    @Test func aDamagedArchiveWhoseRowsNameTheLastGenerationIsDamage() throws {
        try withSavedStore { path, nodes in
            try tamper(
                with: path,
                """
                INSERT INTO crash_marker (archive_id, generation, started_at, process_id) VALUES (1, 9223372036854775807, 0, 1);
                UPDATE archive SET created_at = created_at + 1
                """)
            let store = try ArchiveStore(path: path)
            #expect(
                throws: ArchiveStoreError.damagedStore(
                    "archive 'main' holds a row of generation 9223372036854775807, after which no generation can be numbered")
            ) { try store.save(nodes, header: SampleArchives.header) }
        }
    }

    /// A row without a checksum (as written before v0005) is taken at its word, up to one
    /// below the highest generation: a save then writes the highest, and pruning what it
    /// retired, up to one past it, overflowed (one generation retained). Reads then find
    /// the row damaged, as for any row at the highest generation: none can follow it.
    @Test(arguments: [false, true])
    func aSaveOfTheHighestGenerationPrunesWithoutOverflowing(incrementally: Bool) throws {
        try withSavedStore { path, nodes in
            try tamper(with: path, "UPDATE archive SET generation = 9223372036854775805, checksum = NULL")
            let store = try ArchiveStore(path: path, configuration: .init(retainedGenerations: 1))
            var saved = nodes
            saved[0].state = [7]
            #expect(try store.save(saved, header: SampleArchives.header).generation == Generation(.max - 1))
            saved[1].state = [8]
            let highest =
                incrementally
                ? try store.saveChanges([saved[1]], basedOn: Generation(.max - 1), header: SampleArchives.header)
                : try store.save(saved, header: SampleArchives.header)
            #expect(highest.generation == Generation(.max))
            // Pruned: the generation before it, and the rows it retired.
            let rows = try store.withConnection { connection in
                try connection.pragmaInteger("SELECT count(*) FROM node") ?? -1
            }
            let generations = try store.withConnection { connection in
                try connection.pragmaInteger("SELECT count(*) FROM generation") ?? -1
            }
            #expect(rows == Int64(nodes.count) && generations == 1)
            let error = #expect(throws: ArchiveStoreError.self) { () throws -> Void in _ = try store.snapshot() }
            #expect(error?.isDamage == true, "no generation can follow it")
        }
    }

    /// Damage elsewhere in the row leaves its generation as good a guess as any: when it is
    /// higher than every one the store names (numbers of discarded generations are named by
    /// nothing but it), the next save comes after it.
    @Test func aDamagedArchiveRowsOwnGenerationCountsWhenHigher() throws {
        try withSavedStore { path, nodes in
            let store = try ArchiveStore(path: path)
            try store.save(nodes, header: SampleArchives.header)
            try store.discard(reason: "test")
            try tamper(with: path, "UPDATE archive SET created_at = created_at + 1")
            #expect(try store.save(nodes, header: SampleArchives.header).generation == 3)
        }
    }

    /// A discard does not read what it deletes: a damaged archive row does not stop it (an
    /// explicit quit must leave no state behind), and the archive is whole again after it.
    @Test func aDiscardReplacesADamagedArchiveRow() throws {
        for all in [false, true] {
            try withSavedStore { path, nodes in
                try tamper(with: path, "UPDATE archive SET generation = 0, discarded_at = 5, discard_reason = 'x'")
                let store = try ArchiveStore(path: path)
                if all {
                    #expect(try store.discardAll(reason: "quit")[.main]?.nodesDeleted == nodes.count)
                } else {
                    #expect(try store.discard(reason: "quit").nodesDeleted == nodes.count)
                }
                #expect(try store.snapshot() == nil)
                let summary = try #require(try store.summary(of: .main))
                guard case .discarded(let reason, _) = summary.state else {
                    Issue.record("\(summary.state), not discarded")
                    return
                }
                #expect(reason == "quit" && summary.generations.isEmpty)
                #expect(try store.check() == [])
                #expect(try store.save(nodes, header: SampleArchives.header).generation == 2)
            }
        }
    }

    /// An archive row whose discard reason is not UTF-8, or which holds a value of another
    /// type, is damage to that archive alone, as a changed value is: the other archives are
    /// still invalidated after a death on screen, `check()` lists it, and a discard of every
    /// archive replaces it. It was damage to the whole store (which an app erases), and every
    /// read of the list of archives failed on it.
    @Test(arguments: [
        "discard_reason = CAST(x'71ff' AS TEXT)", "created_at = 'yesterday'", "checksum = 'none'",
    ])
    func anArchiveRowThatCannotBeReadIsDamageToThatArchiveAlone(change: String) throws {
        try withSavedStore { path, nodes in
            let policy = ArchiveStore.Configuration(crashPolicy: .discardAfterForegroundDeath)
            let scene = try ArchiveName("scene-1")
            do {
                // A launch that dies on screen once the scene's window was closed for good.
                let store = try ArchiveStore(path: path, configuration: policy)
                try store.save(nodes, header: SampleArchives.header, in: scene)
                try store.discard(scene, reason: "closed")
                try store.record(.willFinishLaunching)
                try store.record(.didBecomeActive)
            }
            try tamperBypassingStrict(with: path, table: "archive", "UPDATE archive SET \(change) WHERE name = 'scene-1'")
            let column = change.prefix { $0 != " " }
            let problem = "its archive row cannot be read (column '\(column)' "
                + (change.hasPrefix("discard") ? "holds text that is not valid UTF-8)" : "holds a value that is not integer)")
            let problems = try ArchiveStore(path: path, mode: .readOnly).check()
            #expect(problems.filter { $0.archive == scene }.map(\.problem) == [problem])
            #expect(throws: ArchiveStoreError.damagedArchive(scene, 1, problem)) {
                try ArchiveStore(path: path, mode: .readOnly).archives()
            }

            // The next launch invalidates what it can, and a discard of every archive replaces it.
            let next = try ArchiveStore(path: path, configuration: policy)
            try next.record(.willFinishLaunching)
            guard case .invalidated? = try next.summary(of: .main)?.state else {
                Issue.record("main was not invalidated: \(String(describing: try next.summary(of: .main)))")
                return
            }
            #expect(try next.discardAll(reason: "quit").keys.sorted() == [.main, scene])
            #expect(try next.archives().map(\.name) == [.main, scene])
            #expect(try next.check().filter { $0.path == nil && $0.generation == nil }.isEmpty)
        }
    }

    /// An archive row whose name damage made no valid archive name (bytes that are not text,
    /// text that is not UTF-8, an empty or a control character) names no archive: it is left
    /// out of every list of the archives, and `check()` names it. It was damage to the whole
    /// store (which an app erases): the list of archives, the crash markers, a discard of
    /// every archive and the crash policy's invalidation of them all at the next launch threw.
    @Test(arguments: ["x'0102'", "CAST(x'73ff' AS TEXT)", "''", "'scene' || char(7)"])
    func anArchiveRowWhoseNameIsNoArchiveNameIsLeftOutOfTheLists(name: String) throws {
        try withSavedStore { path, nodes in
            let policy = ArchiveStore.Configuration(crashPolicy: .discardAfterForegroundDeath)
            do {
                // A launch that dies on screen with two scenes' archives saved.
                let store = try ArchiveStore(path: path, configuration: policy)
                try store.save(nodes, header: SampleArchives.header, in: try ArchiveName("scene-1"))
                try store.record(.willFinishLaunching)
                try store.record(.didBecomeActive)
            }
            try tamperBypassingStrict(with: path, table: "archive", "UPDATE archive SET name = \(name) WHERE name = 'scene-1'")
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            // (SQLite's own check names a blob in a text column too.)
            #expect(
                try reader.check().filter { $0.path == nil && !$0.problem.hasPrefix("SQLite") }.map(\.description) == [
                    "an archive row (id 2) has a name that is not a valid archive name: its archive cannot be read, "
                        + "saved or discarded, and its rows stay until the store is erased"
                ])
            #expect(try reader.archiveNames() == [.main])
            #expect(try reader.archives().map(\.name) == [.main])
            #expect(try reader.crashMarkers() == [])

            let next = try ArchiveStore(path: path, configuration: policy)
            try next.record(.willFinishLaunching)
            guard case .invalidated? = try next.summary(of: .main)?.state else {
                Issue.record("main was not invalidated: \(String(describing: try next.summary(of: .main)))")
                return
            }
            #expect(try next.discardAll(reason: "quit").keys.sorted() == [.main])
            #expect(try next.save(nodes, header: SampleArchives.header).generation == 2)
            try ArchiveStore.erase(at: path)
            #expect(try next.check() == [])
        }
    }

    /// An archive row whose generation damage made negative (the sign bit flipped) is damage
    /// to that archive, as any other changed value of the row: it was damage to the whole
    /// store (which an app erases). The next save replaces the row, numbering on from what
    /// the store names.
    @Test func aNegativeGenerationInAnArchiveRowIsDamageToThatArchive() throws {
        try withSavedStore { path, nodes in
            try tamper(with: path, "PRAGMA ignore_check_constraints = ON; UPDATE archive SET generation = -9223372036854775807")
            let store = try ArchiveStore(path: path)
            let damage = ArchiveStoreError.damagedArchive(.main, Generation(-9223372036854775807), "its archive row holds a negative generation")
            #expect(throws: damage) { try store.snapshot() }
            #expect(throws: damage) { try store.archives() }
            #expect(try store.save(nodes, header: SampleArchives.header).generation == 2)
            #expect(try store.check().filter { $0.path == nil }.isEmpty)
        }
    }

    /// An engine whose incremental save meets damage (in the generation it is based on, or in
    /// the archive's row) saves in full instead, which reads nothing damaged and replaces it:
    /// the app's next preservation is not lost to it.
    @Test(arguments: ["UPDATE generation SET app_version = '12.0'", "UPDATE archive SET created_at = created_at + 1"])
    func anEngineSavesInFullWhenAnIncrementalSaveMeetsDamage(sql: String) throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let engine = try makeEngine(store)
            let tree = { (value: String) in [Probe("Root", value: "r", [Probe("A", value: value), Probe("B", value: "b")])] }
            try engine.preserve(tree("a"))
            try tamper(with: path, sql)
            let result = try engine.preserve(tree("changed"))
            #expect(result.save?.kind == .full && result.save?.generation == 2)
            let node = try #require(try store.node(at: RestorationPath("Root", "A")))
            #expect(try StateDecoder(blob: node.state).decode(String.self, forKey: "value") == "changed")
            // And incrementally again after it.
            #expect(try engine.preserve(tree("again")).save?.kind == .incremental)
        }
    }

    /// A node restoration left out as damaged is written again at the next save, even when
    /// the app's object there encodes what the damaged row holds: the damage was elsewhere in
    /// the row (here its generation of birth), and an incremental save that kept the row
    /// would leave it failing its checksum at every launch after. So too when the engine that
    /// restores is the one that saved the generation: what it saved is no longer what the
    /// store holds.
    @Test(arguments: [false, true])
    func aNodeFoundDamagedAtRestorationIsWrittenAgain(byTheEngineThatSavedIt: Bool) throws {
        try withTemporaryStorePath { path in
            let tree = { (value: String) in [Probe("Root", value: "r", [Probe("A", value: value), Probe("B", value: "b")])] }
            let saving = try makeEngine(try ArchiveStore(path: path))
            try saving.preserve(tree("a"))
            try tamper(with: path, "UPDATE node SET born = born + 1000 WHERE path = 'Root/B'")

            let engine = byTheEngineThatSavedIt ? saving : try makeEngine(try ArchiveStore(path: path))
            let damaged = try engine.restore(tree("")).report
            #expect(damaged.nodes.map(\.outcome) == [.restored, .restored, .failed(.checksumMismatch)])
            try engine.preserve(tree("changed"))

            let next = try makeEngine(try ArchiveStore(path: path)).restore(tree("")).report
            #expect(next.nodes.map(\.outcome) == [.restored, .restored, .restored])
            // The damaged generation is retained as the previous one; the newest is whole.
            let problems = try ArchiveStore(path: path).check()
            #expect(!problems.isEmpty && problems.allSatisfy { $0.generation != 2 }, "\(problems.map(\.description))")
        }
    }

    /// `check` names a damaged archive row as its archive's problem and goes on: the other
    /// archives, and the damaged one's generations, are checked all the same.
    @Test func checkListsADamagedArchiveRowAndGoesOn() throws {
        try withSavedStore { path, nodes in
            let scene = try ArchiveName("scene-2")
            try ArchiveStore(path: path).save(nodes, header: SampleArchives.header, in: scene)
            try tamper(
                with: path,
                """
                UPDATE archive SET generation = 0 WHERE name = 'main';
                UPDATE generation SET app_version = '12.0' WHERE archive_id = (SELECT id FROM archive WHERE name = 'main');
                UPDATE generation SET idiom = 'pad' WHERE archive_id = (SELECT id FROM archive WHERE name = 'scene-2')
                """)
            let problems = try ArchiveStore(path: path, mode: .readOnly).check().filter { $0.path == nil }
            #expect(
                problems.map(\.description) == [
                    "archive 'main': its archive row does not match its checksum",
                    "archive 'main', generation 1: its header does not match its checksum",
                    "archive 'scene-2', generation 1: its header does not match its checksum",
                ])
        }
    }

    /// Damage to the schema's text (which SQLite's `quick_check` does not look at) made every
    /// save fail with a plain database error, one an app takes as worth a retry. A statement
    /// that names what the migrations made but the schema lacks, or a `CHECK` that refuses what
    /// the library writes, is the store's damage.
    @Test(arguments: [
        ("generation", "platform", "platfrom"),
        ("node", "class_version", "class_versiom"),
        ("generation", "restored_cleanly IN (0, 1)", "restored_cleanly IN (6, 1)"),
        ("generation", "CHECK (generation > 0)", "CHECK (abz(generation) > 0)"),
        ("generation", "REFERENCES archive(id)", "REFERENCES archive(ie)"),
    ])
    func aDamagedSchemaIsDamage(table: String, from: String, to: String) throws {
        try withSavedStore { path, nodes in
            try tamperWithSchema(of: path, table: table, replacing: from, with: to)
            let store = try ArchiveStore(path: path)
            let error = #expect(throws: ArchiveStoreError.self) { () throws -> Void in
                try store.save(nodes, header: SampleArchives.header)
            }
            guard case .damagedStore(let reason)? = error else {
                Issue.record("\(String(describing: error)), not damagedStore")
                return
            }
            #expect(reason.hasPrefix("its schema"), "\(reason)")
        }
    }

    /// A header whose file format write version is over 2 makes SQLite open the file
    /// read-only: every save failed as if the file were read-only, an error an app retries.
    /// The save (or, for the read version, the opening) says it is damage; a read-only open
    /// still reads a store whose write version is damaged.
    @Test(arguments: [(18, UInt8(3), "write"), (18, 255, "write"), (19, 200, "read")])
    func aHeaderWithAFormatVersionSQLiteDoesNotWriteIsDamage(offset: Int, value: UInt8, which: String) throws {
        try withSavedStore { path, nodes in
            var bytes = try #require(fileBytes(path))
            bytes[offset] = value
            try Data(bytes).write(to: URL(filePath: path))
            #expect(
                throws: ArchiveStoreError.damagedStore(
                    "its header's file format \(which) version is \(value), which SQLite does not write")
            ) { try ArchiveStore(path: path).save(nodes, header: SampleArchives.header) }
            if which == "write" {
                #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes == nodes.sorted { $0.path < $1.path })
            }
        }
    }

    /// Reading the header to tell that damage from a read-only file keeps the locks the
    /// store's connection holds on the file. A descriptor of the library's own, once closed,
    /// released them all (POSIX locks belong to the process and the file): another process's
    /// connection could then take the file for its own alone, as when it closes as the last
    /// one, and delete the log the app still writes to.
    @Test func tellingAFormatVersionFromAReadOnlyFileKeepsTheStoresLocks() throws {
        try withSavedStore { path, nodes in
            var bytes = try #require(fileBytes(path))
            bytes[18] = 3
            try Data(bytes).write(to: URL(filePath: path))
            let store = try ArchiveStore(path: path)
            _ = try store.snapshot()
            let held = try #require(locksHeldByThisProcess(on: path))
            #expect(!held.isEmpty, "the store's connection holds no lock on the file")
            #expect(throws: ArchiveStoreError.damagedStore("its header's file format write version is 3, which SQLite does not write")) {
                try store.save(nodes, header: SampleArchives.header)
            }
            #expect(locksHeldByThisProcess(on: path) == held)
        }
    }

    /// A full save starts its epoch from nothing: a node row damaged into a later epoch was
    /// read as one of the new generation's (its digest then failed), and a generation row
    /// damaged into a later number made the new header's insertion fail.
    @Test(arguments: [
        "INSERT INTO node SELECT archive_id, 2, path || '/x', 2, NULL, class_name, class_version, sibling_order, state, checksum FROM node LIMIT 1",
        "UPDATE generation SET generation = 2",
    ])
    func aFullSaveStartsItsEpochFromNothing(sql: String) throws {
        try withSavedStore { path, nodes in
            try tamper(with: path, sql)
            let store = try ArchiveStore(path: path)
            #expect(try store.save(nodes, header: SampleArchives.header).generation == 2)
            #expect(try store.snapshot()?.nodes == nodes.sorted { $0.path < $1.path })
        }
    }

    /// A damaged `DEFAULT` in the schema's text gave each new generation a restoration state
    /// its checksum did not cover: every save wrote a generation that read as damaged.
    @Test func aDamagedDefaultInTheSchemaDoesNotDamageNewGenerations() throws {
        try withSavedStore { path, nodes in
            try tamperWithSchema(
                of: path, table: "generation", replacing: "restore_attempts INTEGER NOT NULL DEFAULT 0",
                with: "restore_attempts INTEGER NOT NULL DEFAULT 4")
            let store = try ArchiveStore(path: path)
            try store.save(nodes, header: SampleArchives.header)
            #expect(try store.snapshot()?.nodes == nodes.sorted { $0.path < $1.path })
        }
    }

    /// An archive whose row the table lost is damage to the store: to a lookup by name, and to
    /// a list of the archives, which left it out without a word (`restorectl info` said "(no
    /// archives)").
    @Test func generationsOfALostArchiveAreDamageNotANewArchive() throws {
        try withSavedStore { path, nodes in
            try tamper(with: path, "PRAGMA foreign_keys = OFF; DELETE FROM archive")
            let store = try ArchiveStore(path: path)
            let lost = ArchiveStoreError.damagedStore("the archive table or its name index lost or mixed up archives")
            #expect(throws: lost) { () throws -> Void in _ = try store.snapshot() }
            #expect(throws: lost) { () throws -> Void in _ = try store.archiveNames() }
            #expect(throws: lost) { () throws -> Void in _ = try store.archives() }
            #expect(throws: lost) { () throws -> Void in try store.save(nodes, header: SampleArchives.header) }
        }
    }

    /// A list of the archives reads them in name order, through the name index: an archive
    /// whose entry the index lost was left out of it without a word, though its row and its
    /// generations are there (and a lookup of it by name throws).
    @Test func anArchiveTheNameIndexLostIsDamageNotLeftOutOfTheList() throws {
        try withSavedStore { path, nodes in
            let scene = try ArchiveName("scene-2")
            try ArchiveStore(path: path).save(nodes, header: SampleArchives.header, in: scene)
            try dropLastEntry(ofIndex: "sqlite_autoindex_archive_1", at: path)
            let store = try ArchiveStore(path: path, mode: .readOnly)
            let lost = ArchiveStoreError.damagedStore("the archive table or its name index lost or mixed up archives")
            #expect(throws: lost) { () throws -> Void in _ = try store.summary(of: scene) }
            #expect(throws: lost) { () throws -> Void in _ = try store.archiveNames() }
            #expect(throws: lost) { () throws -> Void in _ = try store.archives() }
            #expect(try store.summary(of: .main)?.generations.map(\.nodeCount) == [nodes.count])
        }
    }

    /// SQLite reads an archive's name from the name index when it walks the index (a list, in
    /// name order; a lookup by name), not from its row: an entry whose name damage changed
    /// (one flipped bit: `scene-3` read as `Scene-3`) named the archive wrongly, and `restorectl
    /// info` left it out without a word, exit 0; an entry whose row damage changed (`scene-3`'s
    /// pointing at `scene-2`'s row) was looked up as `scene-3`, and a full save of `scene-3`
    /// wrote into `scene-2`'s row. Each is the index mixing up archives.
    @Test(arguments: [
        ("a name changed", Array("scene-3".utf8) + [3], Array("Scene-3".utf8) + [3]),
        ("the row pointed at changed", Array("scene-3".utf8) + [3], Array("scene-3".utf8) + [2]),
    ])
    func anArchiveTheNameIndexMixedUpIsDamageNotAnotherArchive(damage: String, from: [UInt8], to: [UInt8]) throws {
        try withSavedStore { path, nodes in
            let (two, three) = (try ArchiveName("scene-2"), try ArchiveName("scene-3"))
            let store = try ArchiveStore(path: path)
            try store.save(nodes, header: SampleArchives.header, in: two)
            try store.save(Array(nodes.prefix(3)), header: SampleArchives.header, in: three)
            try changeEntry(ofIndex: "sqlite_autoindex_archive_1", from: from, to: to, at: path)
            let damaged = try ArchiveStore(path: path)
            let lost = ArchiveStoreError.damagedStore("the archive table or its name index lost or mixed up archives")
            #expect(throws: lost, "\(damage)") { () throws -> Void in _ = try damaged.archiveNames() }
            #expect(throws: lost, "\(damage)") { () throws -> Void in _ = try damaged.archives() }
            #expect(throws: lost, "\(damage)") { () throws -> Void in _ = try damaged.summary(of: three) }
            #expect(throws: lost, "\(damage)") { () throws -> Void in
                try damaged.save(nodes, header: SampleArchives.header, in: three)
            }
            // `check()` names the archive under its own name, its row as sound (the sample
            // states are not the keyed coder's: their nodes are left out here).
            let problems = try damaged.check().filter { $0.archive != nil && $0.path == nil }
            #expect(problems == [StoreProblem(archive: three, problem: ArchiveStore.misindexedArchive)], "\(damage)")
            // The others are whole: scene-2's row was not written by scene-3's save.
            let sorted = nodes.sorted { $0.path < $1.path }
            #expect(try damaged.snapshot(of: two)?.nodes == sorted, "\(damage)")
            #expect(try damaged.snapshot(of: .main)?.nodes == sorted, "\(damage)")
        }
    }

    /// The archive name index damaged past reading (its page's type): `check()` reads the
    /// archive rows alone, names the index's damage, and checks each archive all the same;
    /// a list of the archives, which looks each row up in the index, and a lookup by name
    /// say the store is damaged, as for an index that mixed archives up.
    @Test func aNameIndexSQLiteCannotReadIsNamedAndEachArchiveChecked() throws {
        try withSavedStore { path, nodes in
            let two = try ArchiveName("scene-2")
            try ArchiveStore(path: path).save(nodes, header: SampleArchives.header, in: two)
            let target = nodes[3].path
            try tamper(
                with: path,
                "UPDATE node SET state = x'00ff' WHERE path = '\(target.description)' "
                    + "AND archive_id = (SELECT id FROM archive WHERE name = 'scene-2')")
            try damagePageType(ofIndex: "sqlite_autoindex_archive_1", at: path)
            let store = try ArchiveStore(path: path)
            let problems = try store.check()
            let named = problems.filter { $0.problem.hasPrefix("the name index of archives: ") }
            #expect(named.count == 1)
            #expect(
                named.first?.problem.hasPrefix(
                    "the name index of archives: The store is damaged: SQLite finds the file malformed") == true,
                "\(named)")
            #expect(named.first?.archive == nil)
            // The archives were checked all the same: scene-2's changed node is named, and not
            // main's (the sample states are not the keyed coder's: each node's decoding fails).
            let changed = "its content does not match its checksum"
            #expect(problems.contains { $0.archive == two && $0.path == target && $0.problem == changed })
            #expect(!problems.contains { $0.archive == .main && $0.problem == changed })
            for call in [{ _ = try store.archiveNames() }, { _ = try store.snapshot(of: .main) }] as [() throws -> Void] {
                let error = #expect(throws: ArchiveStoreError.self) { try call() }
                #expect(error?.isDamage == true, "\(String(describing: error))")
            }
        }
    }

    /// Also found by the torture suite: these columns were covered by no checksum.
    @Test(arguments: [
        ("UPDATE archive SET created_at = created_at + 1", "its archive row does not match its checksum"),
        ("UPDATE archive SET generation = 0", "its archive row does not match its checksum"),
        ("UPDATE archive SET discard_reason = 'x'", "its archive row does not match its checksum"),
        ("UPDATE generation SET invalidated_at = 5, invalidated_reason = 'x'", "its restoration state does not match its checksum"),
        ("UPDATE generation SET restore_attempts = 3", "its restoration state does not match its checksum"),
        ("UPDATE generation SET restored_cleanly = 1", "its restoration state does not match its checksum"),
    ])
    func changedArchiveRowsAndRestorationStatesAreDetected(sql: String, problem: String) throws {
        try withSavedStore { path, _ in
            try tamper(with: path, sql)
            let store = try ArchiveStore(path: path, mode: .readOnly)
            let error = #expect(throws: ArchiveStoreError.self) { () throws -> Void in _ = try store.snapshot() }
            guard case .damagedArchive(.main, _, let reason) = error else {
                Issue.record("\(String(describing: error)), not damagedArchive")
                return
            }
            #expect(reason == problem)
        }
    }

    @Test func rowsWrittenBeforeTheirChecksumsExistedAreReadAndSealedByTheNextWrite() throws {
        try withSavedStore { path, nodes in
            // What a store migrated from schema version 4 holds.
            try tamper(with: path, "UPDATE archive SET checksum = NULL; UPDATE generation SET state_checksum = NULL")
            let store = try ArchiveStore(path: path)
            #expect(try store.snapshot()?.nodes == nodes.sorted { $0.path < $1.path })
            try store.save(nodes, header: SampleArchives.header)
            try store.discard(reason: "test")
            try store.save(nodes, header: SampleArchives.header)
            #expect(try store.snapshot()?.header.generation == 3)
            try tamper(with: path, "UPDATE archive SET created_at = created_at + 1")
            #expect(throws: ArchiveStoreError.self) { () throws -> Void in _ = try store.snapshot() }
        }
    }

    @Test func aMalformedPageIsADamagedStoreAndCheckListsItAndGoesOn() throws {
        try withSavedStore { path, _ in
            // Zero the page of the node table's root, behind SQLite's back.
            let connection = try Connection(filename: path, flags: SQLITE_OPEN_READONLY)
            let (page, pageSize) = try withExtendedLifetime(connection) { () throws -> (Int, Int) in
                let schema = try connection.statement(
                    "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM sqlite_schema WHERE name = 'node'")
                defer { schema.reset() }
                try #require(try schema.step())
                return (Int(try schema.int64(0)), Int(try schema.int64(1)))
            }
            var bytes = try #require(fileBytes(path))
            try #require(bytes.count >= page * pageSize)
            bytes.replaceSubrange((page - 1) * pageSize..<page * pageSize, with: [UInt8](repeating: 0, count: pageSize))
            try Data(bytes).write(to: URL(filePath: path))

            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try store.archives().count == 1)  // the archive table is intact
            let error = #expect(throws: ArchiveStoreError.self) { () throws -> Void in _ = try store.snapshot() }
            guard case .damagedStore(let reason)? = error else {
                Issue.record("expected damagedStore, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("malformed"))
            let problems = try store.check()
            #expect(problems.contains { $0.problem.hasPrefix("SQLite integrity check: ") })
            #expect(problems.contains { $0.archive == .main && $0.problem.contains("malformed") })
            // The store stays usable for what is intact, after the damage was met.
            #expect(try store.archives().map(\.name) == [.main])
        }
    }

    /// A file cut short (a copy stopped part-way, a full disk) is named so, where SQLite
    /// said only "malformed"; ``ArchiveStore/check()`` names it too, first, even when SQLite
    /// reads the cut page's missing bytes as zeros and finds only what they broke.
    @Test func aFileCutShortIsNamedSo() throws {
        try withSavedStore { path, nodes in
            let bytes = try #require(fileBytes(path))
            let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
            let pages = bytes.count / pageSize
            try #require(pages >= 4 && bytes.count == pages * pageSize)
            func cut(to count: Int) -> String {
                "the file is cut short: its header counts \(pages) pages of \(pageSize) bytes (\(bytes.count) bytes), and the "
                    + "file holds \(count) (a copy or a write that stopped part-way, a full disk)"
            }
            let half = pages / 2 * pageSize
            try Data(bytes[..<half]).write(to: URL(filePath: path))
            #expect(throws: ArchiveStoreError.damagedStore(cut(to: half))) {
                try ArchiveStore(path: path, mode: .readOnly).snapshot()
            }
            #expect(throws: ArchiveStoreError.damagedStore(cut(to: half))) {
                try ArchiveStore(path: path).save(nodes, header: SampleArchives.header)
            }
            let most = bytes.count - 100
            try Data(bytes[..<most]).write(to: URL(filePath: path))
            let problems = try ArchiveStore(path: path, mode: .readOnly).check()
            #expect(problems.first == StoreProblem(problem: cut(to: most)))
            // Whole again, nothing is said of it.
            try Data(bytes).write(to: URL(filePath: path))
            let whole = try ArchiveStore(path: path, mode: .readOnly).check()
            #expect(!whole.contains { $0.problem.hasPrefix("the file is cut short") })
            // A log with a frame may hold the pages a checkpoint killed part-way had yet to copy;
            // one no longer than its header holds none.
            try Data(bytes[..<half]).write(to: URL(filePath: path))
            #expect(StoreLocation.cutShort(path: path, header: Array(bytes[..<100])) == cut(to: half))
            try Data(count: 32).write(to: URL(filePath: path + "-wal"))
            #expect(StoreLocation.cutShort(path: path, header: Array(bytes[..<100])) == cut(to: half))
            try Data(count: 32 + 24 + pageSize).write(to: URL(filePath: path + "-wal"))
            #expect(StoreLocation.cutShort(path: path, header: Array(bytes[..<100])) == nil)
            // A count SQLite does not trust (its change counter, bytes 24 to 27, not the one the
            // count was written for, 92 to 95), SQLite does not read: the file's size is its size.
            try FileManager.default.removeItem(atPath: path + "-wal")
            var untrusted = Array(bytes[..<100])
            untrusted[27] &+= 1
            #expect(StoreLocation.cutShort(path: path, header: untrusted) == nil)
        }
    }

    @Test func checksumsCatchSingleBitFlipsInState() throws {
        let archive = ArchiveName.main
        let node = ArchivedNode(path: try RestorationPath("A"), className: "A", state: Array(repeating: 0x5A, count: 100))
        let original = ArchiveRows.nodeChecksum(archive: archive, node: node, born: 1)
        for bit in 0..<(100 * 8) {
            var flipped = node
            flipped.state[bit / 8] ^= UInt8(1 << (bit % 8))
            #expect(ArchiveRows.nodeChecksum(archive: archive, node: flipped, born: 1) != original)
        }
        #expect(ArchiveRows.nodeChecksum(archive: archive, node: node, born: 2) != original)
    }
}
