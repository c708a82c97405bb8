import Logging
import Testing
import TestSupport
@testable import RestorationArchive

@Suite("Discarding archives")
struct DiscardTests {
    @Test func discardRemovesNodesMarksTheArchiveAndAllowsSavingAgain() throws {
        try withTemporaryStore { store in
            let header = SampleArchives.header
            try store.save(try SampleArchives.tree(count: 8), header: header)
            try store.save(try SampleArchives.tree(count: 8, fill: 2), header: header)
            let result = try store.discard(reason: "the user quit the app")
            #expect(result.nodesDeleted == 16)
            #expect(result.writeAheadLogTruncated)
            #expect(try store.snapshot() == nil)
            #expect(try store.header() == nil)
            #expect(try store.generations().isEmpty)
            let summary = try #require(try store.summary(of: .main))
            guard case .discarded(let reason, _) = summary.state else {
                Issue.record("expected discarded, got \(summary.state)")
                return
            }
            #expect(reason == "the user quit the app")
            #expect(summary.latestGeneration == 2)
            #expect(throws: ArchiveStoreError.generationNotFound(.main, 2)) {
                try store.saveChanges([], basedOn: 2, header: header)
            }
            // Saving again starts afresh, and generation numbers are never reused.
            let next = try store.save(try SampleArchives.tree(count: 2), header: header)
            #expect(next.generation == 3)
            #expect(try store.summary(of: .main)?.state == .valid)
            #expect(throws: ArchiveStoreError.archiveNotFound(try ArchiveName("never"))) {
                try store.discard(try ArchiveName("never"), reason: "x")
            }
        }
    }

    /// A reason is prose, kept cut rather than refused: the discard it explains must happen.
    @Test func aLongReasonIsKeptCutAfterAWholeCharacter() throws {
        try withTemporaryStore { store in
            let scene = try ArchiveName("scene-2")
            for name in [ArchiveName.main, scene] {
                try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header, in: name)
            }
            // A flag is one character of two scalars, 8 bytes: 1,000 bytes and two flags fit
            // with "…" (1,019 bytes), a third flag does not, nor does half of one (1,023).
            let long = String(repeating: "a", count: 1_000) + String(repeating: "🇰🇷", count: 100_000)
            let exact = String(repeating: "é", count: ArchiveStore.maximumReasonLength / 2)
            try store.discard(reason: long)
            try store.discard(scene, reason: exact)
            let cut = String(repeating: "a", count: 1_000) + "🇰🇷🇰🇷…"
            var reasons: [ArchiveName: String] = [:]
            for name in [ArchiveName.main, scene] {
                if case .discarded(let reason, _)? = try store.summary(of: name)?.state { reasons[name] = reason }
            }
            #expect(reasons == [.main: cut, scene: exact])
            let logged = try store.journal().compactMap { entry -> String? in
                if case .discarded(_, let reason) = entry.kind { reason } else { nil }
            }
            #expect(logged == [cut, exact])
        }
    }

    @Test func discardOneArchiveLeavesTheOthers() throws {
        try withTemporaryStore { store in
            let scene = try ArchiveName("scene-2")
            try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
            try store.save(try SampleArchives.tree(count: 5), header: SampleArchives.header, in: scene)
            try store.discard(scene, reason: "window closed")
            #expect(try store.snapshot()?.nodes.count == 4)
            #expect(try store.snapshot(of: scene) == nil)
        }
    }

    @Test func discardedContentsAreInNoneOfTheStoreFiles() throws {
        try withTemporaryStorePath { path in
            let secret = Array("TOP-SECRET-DRAFT-4242".utf8)
            let store = try ArchiveStore(path: path)
            var nodes = try SampleArchives.tree(count: 20)
            // Small (in-page) and large (overflow pages) state, in every retained generation.
            nodes[3].state = secret
            nodes[4].state = Array((0..<300).flatMap { _ in secret })
            var base = try store.save(nodes, header: SampleArchives.header).generation
            nodes[3].state = secret + [1]
            base = try store.saveChanges([nodes[3]], basedOn: base, header: SampleArchives.header).generation
            let files = [path, path + "-wal", path + "-shm"]
            #expect(files.contains { fileBytes($0)?.contains(bytes: secret) == true })

            let result = try store.discard(reason: "the user quit the app")
            #expect(result.writeAheadLogTruncated)
            for file in files {
                #expect(fileBytes(file)?.contains(bytes: secret) != true, "\(file) still holds discarded state")
            }
        }
    }

    /// A reader holding the log back is no failure: the discard says the log was not
    /// truncated, and logs no warning (one is for a checkpoint that failed).
    @Test func discardReportsWhenAReaderKeepsTheLogFromBeingTruncated() throws {
        try withTemporaryStorePath { path in
            let sink = LogSink()
            let store = try ArchiveStore(
                path: path, configuration: .init(busyTimeout: .milliseconds(50)),
                logger: Logger(label: "test") { _ in sink })
            try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            let result = try reader.withConnection { connection in
                try connection.transaction(.deferred) {
                    _ = try connection.pragmaInteger("SELECT count(*) FROM node")
                    return try store.discard(reason: "quit")
                }
            }
            #expect(!result.writeAheadLogTruncated)
            #expect(sink.messages.last == "Discarded archive 'main': 4 nodes deleted")
            #expect(try store.snapshot() == nil)
        }
    }

    /// State a discard deleted is not left in the file's pages, nor in its log, which the
    /// discard empties (`secure_delete`: this system's SQLite is built with it on, SQLite's
    /// own default is off): an app that discards a signed-out user's archive leaves no copy
    /// of what the user typed for a later reader of the file to find.
    @Test func discardedStateIsNotLeftInTheFile() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let typed = "what the user typed"
            let state = try StateValue.encode(["text": .string(typed)])
            try store.save(
                [ArchivedNode(path: try RestorationPath("Root"), className: "Note", state: state)],
                header: SampleArchives.header)
            func fileHoldsWhatWasTyped() throws -> Bool { try #require(fileBytes(path)).contains(Array(typed.utf8)) }
            #expect(try store.withConnection { try $0.checkpointTruncating() })
            #expect(try fileHoldsWhatWasTyped())
            #expect(try store.discard(reason: "the user signed out").writeAheadLogTruncated)
            #expect(try !fileHoldsWhatWasTyped())
            #expect(fileBytes(path + "-wal")?.isEmpty ?? true)
        }
    }

    /// The rows left in a table of the store at `path`, by a connection of its own.
    private static func rowCount(_ table: String, in path: String) throws -> Int64? {
        let connection = try Connection(filename: path, flags: 1 /* SQLITE_OPEN_READONLY */)
        return try connection.pragmaInteger("SELECT count(*) FROM \(table)")
    }

    /// A window's archive as an app with scenes keeps it: saved, restored once (a restore
    /// report), then discarded when the window closes for good.
    private static func closeWindow(_ name: ArchiveName, _ store: ArchiveStore) throws {
        let engine = try makeEngine(store)
        try engine.preserve([Probe("Root", value: "open", [Probe("list")])], in: name)
        _ = try makeEngine(store).restore([Probe("Root", [Probe("list")])], from: name)
        try store.discard(name, reason: "the window was closed")
    }

    /// An app that gives each window an archive discards one at every window closed, under a
    /// name never used again: the store keeps the newest discarded archives, and their
    /// reports, and forgets older ones, so that it does not grow with every window ever
    /// closed. An archive that holds state is never forgotten.
    @Test func aStoreForgetsArchivesDiscardedBeforeTheNewestItKeeps() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "main", [Probe("a"), Probe("b")])])
            let windows = try (0..<(ArchiveStore.retainedDiscardedArchives + 2)).map {
                try ArchiveName("window-\($0)")
            }
            for window in windows { try Self.closeWindow(window, store) }

            let forgotten = windows.prefix(2)
            let kept = windows.dropFirst(2)
            #expect(try store.archiveNames() == ([.main] + kept).sorted())
            for window in forgotten {
                #expect(try store.summary(of: window) == nil)
                #expect(try store.restoreReports(of: window).isEmpty)
            }
            for window in kept {
                let summary = try #require(try store.summary(of: window))
                guard case .discarded(let reason, _) = summary.state else {
                    Issue.record("\(window): expected discarded, got \(summary.state)")
                    continue
                }
                #expect(reason == "the window was closed")
                #expect(try store.restoreReports(of: window).count == 1)
            }
            // Nothing of the forgotten archives is left behind: each kept window has one
            // report, and only "main" holds nodes and a generation.
            #expect(try Self.rowCount("archive", in: path) == Int64(1 + kept.count))
            #expect(try Self.rowCount("restore_report", in: path) == Int64(kept.count))
            #expect(try Self.rowCount("generation", in: path) == 1)
            #expect(try store.snapshot()?.nodes.count == 3)
            let problems = try store.check()
            #expect(problems.isEmpty, "\(problems)")

            // A forgotten archive is one the store does not have: discarding it again is refused.
            #expect(throws: ArchiveStoreError.archiveNotFound(windows[0])) {
                try store.discard(windows[0], reason: "the window was closed")
            }
            // A save under a forgotten name starts a new archive; a kept one goes on.
            #expect(try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header, in: windows[0]).generation == 1)
            #expect(try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header, in: windows[2]).generation == 2)
        }
    }

    /// Discarding more archives at once than the store remembers keeps
    /// ``ArchiveStore/retainedDiscardedArchives`` of them, all discarded by this call.
    @Test func discardingEveryArchiveKeepsTheNewestDiscarded() throws {
        try withTemporaryStore { store in
            let windows = try (0..<(ArchiveStore.retainedDiscardedArchives + 5)).map { try ArchiveName("w\($0)") }
            for window in windows {
                try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header, in: window)
            }
            let discarded = try store.discardAll(reason: "the user quit the app")
            #expect(discarded.count == windows.count)
            let names = try store.archiveNames()
            #expect(names.count == ArchiveStore.retainedDiscardedArchives)
            #expect(Set(names).isSubset(of: Set(windows)))
            #expect(try store.check().isEmpty)
        }
    }

    /// A discarded archive whose row damage changed is not forgotten: damage that made a live
    /// archive's row read as discarded must not delete it. `check()` names it, and a discard
    /// under its name writes the row again.
    @Test func aDamagedDiscardedArchiveIsNotForgotten() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let damaged = try ArchiveName("window-damaged")
            try Self.closeWindow(damaged, store)
            try tamper(with: path, "UPDATE archive SET discard_reason = 'changed' WHERE name = 'window-damaged'")
            for index in 0..<(ArchiveStore.retainedDiscardedArchives + 1) {
                try Self.closeWindow(try ArchiveName("window-\(index)"), store)
            }
            #expect(try store.archiveNames().contains(damaged))
            #expect(try store.archiveNames().count == ArchiveStore.retainedDiscardedArchives + 1)
            #expect(try store.check().contains { "\($0)".contains("window-damaged") })
            // Discarded again, the row is whole, and the oldest discarded archive is forgotten.
            try store.discard(damaged, reason: "the window was closed")
            #expect(try store.archiveNames().contains(damaged))
            #expect(try !store.archiveNames().contains(try ArchiveName("window-0")))
            #expect(try store.check().isEmpty)
        }
    }

    /// A discard never forgets the archive it discards, whatever the clock says: here the
    /// other archives were discarded with the clock an hour ahead, so that this discard's
    /// time is the oldest of all (as it is once the clock goes back).
    @Test func aDiscardKeepsTheArchiveItDiscardsWhenTheClockWentBack() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let windows = try (0..<ArchiveStore.retainedDiscardedArchives).map { try ArchiveName("window-\($0)") }
            for window in windows { try Self.closeWindow(window, store) }
            let connection = try Connection(filename: path, flags: 2 /* SQLITE_OPEN_READWRITE */)
            try connection.transaction(.immediate) {
                for stored in try ArchiveRows.allStoredArchives(in: connection) {
                    var row = stored.row
                    row.discardedAt = row.discardedAt.map { $0 + 3_600_000 }
                    try ArchiveRows.update(row, in: connection)
                }
            }
            let late = try ArchiveName("window-late")
            try Self.closeWindow(late, store)
            let names = try store.archiveNames()
            #expect(names.contains(late))
            #expect(!names.contains(windows[0]))
            #expect(names.count == ArchiveStore.retainedDiscardedArchives)
            #expect(try store.check().isEmpty)
        }
    }

    /// An engine that saved an archive before it was forgotten saves it again, afresh.
    @Test func anEngineSavesAnArchiveTheStoreForgot() throws {
        try withTemporaryStore { store in
            let window = try ArchiveName("window-old")
            let engine = try makeEngine(store)
            let root = Probe("Root", value: "before", [Probe("list")])
            try engine.preserve([root], in: window)
            try engine.preserve([root], in: window)
            try store.discard(window, reason: "the window was closed")
            for index in 0..<ArchiveStore.retainedDiscardedArchives {
                try Self.closeWindow(try ArchiveName("window-\(index)"), store)
            }
            #expect(try store.summary(of: window) == nil)
            root.value = "after"
            let result = try engine.preserve([root], in: window)
            #expect(result.save?.generation == 1)
            let copy = Probe("Root", [Probe("list")])
            _ = try makeEngine(store).restore([copy], from: window)
            #expect(copy.value == "after")
        }
    }
}
