import ArgumentParser
import Foundation
@testable import RestorationArchive
import Testing
import TestSupport
@testable import restorectl

/// tree, markers, events, diff, check, export, discard and erase, on the demo's store and on bad
/// input.
@Suite("restorectl: inspecting and managing a store")
struct InspectionCommandTests {
    let restorectl = builtProduct("restorectl")

    private func run(_ arguments: [String]) throws -> ProcessOutcome { try runProcess(restorectl, arguments) }

    /// Runs `statements` on the store in one transaction of a plain connection (python3's
    /// sqlite3), as damage or another program would write them, `CHECK` constraints off.
    private func tamper(_ path: String, _ statements: String...) throws {
        let outcome = try runSQLite(on: path, statements)
        #expect(outcome.status == 0, "\(outcome.standardError)")
    }

    /// A store after the demo's story and one more saving launch: generations 3 and 4.
    private func withDemoStore(_ body: (String) throws -> Void) throws {
        try withTemporaryStorePath { path in
            #expect(try run(["demo", "--db", path]).status == 0)
            #expect(try run(["demo", "--step", "save", "--db", path]).status == 0)
            try body(path)
        }
    }

    @Test func helpCoversEverySubcommandAndOption() {
        let root = RestoreCtl.helpMessage()
        let commands: [(any ParsableCommand.Type, [String])] = [
            (InfoCommand.self, ["<db>", "--archive", "--format"]),
            (TreeCommand.self, ["<db>", "--archive", "--generation", "--format", "dot"]),
            (ShowCommand.self, ["<db>", "<path>", "--generation", "--format"]),
            (MarkersCommand.self, ["<db>", "--archive", "--format", "crash marker"]),
            (EventsCommand.self, ["<db>", "--archive", "--limit", "--format"]),
            (ReportCommand.self, ["<db>", "--archive", "--all", "--format"]),
            (DiffCommand.self, ["<db>", "--archive", "--from", "--to", "--format"]),
            (CheckCommand.self, ["<db>", "--archive", "--format", "Exit status"]),
            (ExportCommand.self, ["<db>", "--archive", "--output", "--force", "0600"]),
            (DiscardCommand.self, ["<db>", "--archive", "--reason"]),
            (EraseCommand.self, ["<db>", "--yes"]),
            (DemoCommand.self, ["<db>", "--db", "--step", "--crash-policy", "background-kill", "foreground-crash"]),
        ]
        for (command, texts) in commands {
            let name = command.configuration.commandName ?? ""
            #expect(root.contains(name), "the root help lacks \(name)")
            let help = RestoreCtl.helpMessage(for: command)
            for text in texts + ["-h, --help"] {
                #expect(help.contains(text), "\(name)'s help lacks \(text)")
            }
        }
    }

    @Test func treeShowsTheRestorationTreeAsTextJSONAndDot() throws {
        try withDemoStore { path in
            let text = try run(["tree", path])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(text.standardOutput.contains("Archive main, generation 4 (12 nodes"))
            #expect(text.standardOutput.contains("\n      MenuItemDetail  MenuItemDetail v2, "))
            #expect(text.standardOutput.contains("\n        Presented  WebPage v0, "))
            let older = try run(["tree", path, "--generation", "3", "--format", "json"])
            let document = try older.jsonObject()
            #expect(document["generation"] as? Int == 3)
            let nodes = try #require(document["nodes"] as? [[String: Any]])
            #expect(nodes.count == 12)
            #expect(nodes.contains { $0["path"] as? String == "Tabs/Pages/MILK_webview/Presented" && $0["parent"] as? String == "Tabs/Pages/MILK_webview" })
            let dot = try run(["tree", path, "--format", "dot"])
            #expect(dot.standardOutput.hasPrefix("digraph \"main generation 4\" {"))
            #expect(dot.standardOutput.contains("\"Tabs/Pages\" -> \"Tabs/Pages/COFFEE_webview\";"))
            let gone = try run(["tree", path, "--generation", "1"])
            #expect(gone.status == 1 && gone.standardError.split(separator: "\n").count == 1)
        }
    }

    /// A negative generation (perhaps meant as "the one before") is a number, not an option:
    /// the store does not retain it. It was read as an option ("Missing value for
    /// '--generation'").
    @Test func aNegativeGenerationIsOneTheStoreDoesNotRetain() throws {
        try withDemoStore { path in
            for arguments in [
                ["tree", path, "--generation", "-1"], ["show", path, "Tabs", "--generation", "-1"],
                ["diff", path, "--from", "-1", "--to", "4"], ["diff", path, "--from", "3", "--to=-1"],
            ] {
                let outcome = try run(arguments)
                #expect(outcome.status == 1, "\(arguments)")
                #expect(outcome.standardError == "restorectl: error: Archive 'main' does not retain generation -1.\n")
            }
            // An option where its value belongs is still no value.
            let option = try run(["tree", path, "--generation", "--format", "json"])
            #expect(option.status == 64)
            #expect(option.standardError.contains("The value '--format' is invalid for '--generation <generation>'"))
        }
    }

    @Test func diffNamesTheChangedNodeAndKeys() throws {
        try withDemoStore { path in
            let text = try run(["diff", path, "--from", "3", "--to", "4"])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(text.standardOutput.contains("changed Tabs/OrderNavigation/Order (OrderScreen)"))
            #expect(text.standardOutput.contains("keys changed: order"))
            let document = try run(["diff", path, "--from", "3", "--to", "4", "--format", "json"]).jsonObject()
            let changes = try #require(document["changes"] as? [[String: Any]])
            #expect(changes.count == 1)
            #expect(changes.first?["change"] as? String == "changed")
            let same = try run(["diff", path, "--from", "4", "--to", "4"])
            #expect(same.standardOutput.contains("no node changed"))
            #expect(try run(["diff", path, "--from", "1", "--to", "4"]).status == 1)
        }
    }

    /// `events --archive` shows that archive's events: not another archive's, nor the app's
    /// lifecycle events, which concern every archive. Without it, a launch heads its events
    /// once (the launch's event, then its discards, with the saves between them).
    @Test func eventsOfOneArchiveLeaveOutTheOthersAndTheLifecycle() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.record(.willFinishLaunching)
            for name in ["main", "scene-2"] {
                let archive = try ArchiveName(name)
                try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header, in: archive)
                try store.discard(archive, reason: "the window \(name) was closed")
            }
            let all = try run(["events", path])
            #expect(all.standardOutput.contains("willFinishLaunching"), "\(all.standardOutput)")
            #expect(all.standardOutput.contains("discarded  archive scene-2: the window scene-2 was closed\n"))
            #expect(all.standardOutput.components(separatedBy: "\nlaunch 1:\n").count == 2, "\(all.standardOutput)")
            let main = try run(["events", path, "--archive", "main"])
            #expect(main.status == 0, "\(main.standardError)")
            #expect(main.standardOutput.contains("discarded  archive main: the window main was closed\n"), "\(main.standardOutput)")
            #expect(!main.standardOutput.contains("scene-2") && !main.standardOutput.contains("willFinishLaunching"))
        }
    }

    /// The store forgets archives discarded before the newest it keeps; the journal's entry
    /// of such a discard is still an event of the store, and `events` lists it, while `info`
    /// lists only the archives the store has.
    @Test func eventsListTheDiscardsOfArchivesTheStoreForgot() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            for index in 0...ArchiveStore.retainedDiscardedArchives {
                let window = try ArchiveName("window-\(index)")
                try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header, in: window)
                try store.discard(window, reason: "the window was closed")
            }
            let events = try run(["events", path, "--limit", "500"])
            #expect(events.status == 0, "\(events.standardError)")
            #expect(events.standardOutput.contains("discarded  archive window-0: the window was closed"))
            #expect(events.standardOutput.contains("discarded  archive window-1: the window was closed"))
            let info = try run(["info", path])
            #expect(info.status == 0, "\(info.standardError)")
            #expect(!info.standardOutput.contains("window-0") && info.standardOutput.contains("window-1"))
            // Asked for by name, a forgotten archive is one the store does not have.
            let named = try run(["events", path, "--archive", "window-0"])
            #expect(
                named.status == 1
                    && named.standardError
                        == "restorectl: error: No archive named 'window-0': it was never saved, or it was discarded and the store has since forgotten it.\n",
                "\(named.standardError)")
        }
    }

    @Test func eventsMergeTheJournalSavesRestoresAndDiscards() throws {
        try withDemoStore { path in
            let text = try run(["events", path, "--limit", "500"])
            #expect(text.status == 0, "\(text.standardError)")
            for line in [
                "didEnterBackground: app background", "willTerminate: app terminated",
                "discarded  archive main: the user quit the app explicitly",
                "saved  archive main generation 4: incremental save, 12 nodes",
                "restored  archive main generation 3: restored 12 of 12 nodes",
                "invalidated  archive main generation 2: the app died while restoring it",
                "restored  archive main: refused: generation 2 was invalidated: the app died while restoring it",
            ] {
                #expect(text.standardOutput.contains(line), "events lack \(line)")
            }
            let document = try run(["events", path, "--limit", "3", "--format", "json"]).jsonObject()
            let events = try #require(document["events"] as? [[String: Any]])
            #expect(events.count == 3)
            #expect(events.last?["kind"] as? String == "saved" || events.last?["kind"] as? String == "didEnterBackground")
            // A negative limit is a number, and refused as one: it was read as an option
            // ("Missing value for '--limit <limit>'").
            for limit in ["0", "-5"] {
                let refused = try run(["events", path, "--limit", limit])
                #expect(refused.status == 64 && refused.standardError.contains("--limit must be at least 1"), "\(refused.standardError)")
            }
        }
    }

    @Test func markersShowARestorationThatDied() throws {
        try withDemoStore { path in
            let none = try run(["markers", path])
            #expect(none.standardOutput.contains("(no crash markers"))
            let crash = try run(["demo", "--step", "restore-crash", "--db", path])
            #expect(crash.wasSignalled)
            let text = try run(["markers", path])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(text.standardOutput.contains("archive main, generation 4"))
            #expect(text.standardOutput.contains("the restoration died: the next launch applies its crash policy to generation 4"))
            let markers = try #require(try run(["markers", path, "--format", "json"]).jsonObject()["markers"] as? [[String: Any]])
            #expect(markers.first?["process_running"] as? Bool == false)
        }
    }

    /// A crash marker whose values cannot be read (a value of another type: damage) is shown
    /// as the next launch takes it, a restoration of the newest generation that died, and
    /// named on stderr (exit status 1). It stopped `markers` and `info` with "the store is
    /// damaged", which it is not beyond that row.
    @Test func aDamagedMarkerIsShownAndNamed() throws {
        try withDemoStore { path in
            try ArchiveStore(path: path).save(
                try SampleArchives.tree(count: 3), header: SampleArchives.header, in: try ArchiveName("scene-2"))
            #expect(try run(["demo", "--step", "restore-crash", "--db", path]).wasSignalled)
            // A plain connection, with the table's STRICT taken off while it writes.
            let damage = """
                import sqlite3
                def run(sql):
                    c = sqlite3.connect('\(path)'); c.isolation_level = None; c.executescript(sql); c.close()
                def schema(a, b):
                    run("PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = replace(sql, '%s', '%s') "
                        "WHERE name = 'crash_marker'; PRAGMA writable_schema = OFF;" % (a, b))
                schema(") STRICT", ") /*STRICT*/")
                run("UPDATE crash_marker SET started_at = 'x'")
                schema(") /*STRICT*/", ") STRICT")
                """
            #expect(try runProcess("/usr/bin/env", ["python3", "-c", damage]).status == 0)
            // Damage to that row, in `check`'s words, not to the store (which an app erases).
            let named = "restorectl: error: archive 'main': its crash marker is damaged (its values cannot be read or do not match its checksum): "
                + "the archive's next launch takes it for a restoration that died.\n"
            let meaning = "the next launch takes it for a restoration that died, and applies its crash policy to generation 4"

            let markers = try run(["markers", path])
            #expect(markers.status == 1 && markers.standardError == named)
            #expect(markers.standardOutput.contains("archive main, generation 4: damaged, its values cannot be read or do not match its checksum\n    \(meaning)\n"))
            let document = try run(["markers", path, "--format", "json"]).jsonObject()
            let marker = try #require((document["markers"] as? [[String: Any]])?.first)
            #expect(marker["damaged"] as? Bool == true && marker["generation"] as? Int == 4)

            let info = try run(["info", path])
            #expect(info.status == 1 && info.standardError == named)
            #expect(info.standardOutput.contains("crash marker:  generation 4, damaged (its values cannot be read or do not match its checksum): \(meaning)\n"))
            #expect(info.standardOutput.contains("valid; 1 restoration begun since one completed, never restored cleanly\n"))
            // Another archive's listing does not meet it.
            let other = try run(["info", path, "--archive", "scene-2"])
            #expect(other.status == 0 && other.standardOutput.contains("crash marker:  none"), "\(other.standardError)")
        }
    }

    /// A generation restored cleanly once whose next restoration died: counted, and said to
    /// have been restored cleanly before (a crash policy that falls back to an older
    /// generation takes only one that was).
    @Test func infoSaysAGenerationWasRestoredCleanlyBeforeARestorationDied() throws {
        try withDemoStore { path in
            #expect(try run(["demo", "--step", "restore", "--db", path]).status == 0)
            #expect(try run(["demo", "--step", "restore-crash", "--db", path]).wasSignalled)
            let info = try run(["info", path])
            #expect(
                info.standardOutput.contains("  valid; 1 restoration begun since one completed, restored cleanly before\n"),
                "\(info.standardOutput)")
        }
    }

    @Test func infoShowsTheCrashPolicyStatus() throws {
        try withDemoStore { path in
            let healthy = try run(["info", path])
            #expect(healthy.status == 0, "\(healthy.standardError)")
            #expect(healthy.standardOutput.contains("crash marker:  none (no restoration in progress or died)"))
            #expect(healthy.standardOutput.contains("ended in the background (state is meant to be restored)"))
            #expect(healthy.standardOutput.contains("713 bytes  valid; restored cleanly\n"))

            #expect(try run(["demo", "--step", "restore-crash", "--db", path]).wasSignalled)
            let crashed = try run(["info", path])
            #expect(crashed.standardOutput.contains(": died in the foreground\n"))
            #expect(crashed.standardOutput.contains("crash marker:  generation 4, begun "))
            #expect(crashed.standardOutput.contains("the restoration died: the next launch applies its crash policy to generation 4"))
            #expect(crashed.standardOutput.contains("valid; 1 restoration begun since one completed, never restored cleanly\n"))
            let document = try run(["info", path, "--format", "json"]).jsonObject()
            #expect((document["last_launch"] as? [String: Any])?["ended"] as? String == "foreground")
            let archive = try #require((document["archives"] as? [[String: Any]])?.first)
            let marker = try #require(archive["crash_marker"] as? [String: Any])
            #expect(marker["generation"] as? Int == 4)
            #expect(marker["process_running"] as? Bool == false)
            let generations = try #require(archive["generations"] as? [[String: Any]])
            #expect(generations.map { $0["restore_attempts"] as? Int } == [1, 0])
            #expect(generations.map { $0["restored_cleanly"] as? Bool } == [false, true])

            // The next launch applies the default policy: generation 4 invalidated, marker gone.
            #expect(try run(["demo", "--step", "restore", "--db", path]).status == 0)
            let after = try run(["info", path, "--format", "json"]).jsonObject()
            let archiveAfter = try #require((after["archives"] as? [[String: Any]])?.first)
            #expect(archiveAfter["crash_marker"] == nil)
            let newest = try #require((archiveAfter["generations"] as? [[String: Any]])?.first)
            #expect((newest["state"] as? [String: Any])?["kind"] as? String == "invalidated")
        }
    }

    @Test func checkPassesAHealthyStoreAndListsDamage() throws {
        try withDemoStore { path in
            let healthy = try run(["check", path])
            #expect(healthy.status == 0, "\(healthy.standardOutput)\(healthy.standardError)")
            #expect(healthy.standardOutput.hasSuffix(": healthy\n"))
            let unknown = try run(["check", path, "--archive", "scene-9"])
            #expect(unknown.status == 2 && unknown.standardOutput.isEmpty)
            #expect(unknown.standardError == "restorectl: error: No archive named 'scene-9': it was never saved, or it was discarded and the store has since forgotten it.\n")
            // Damage: one node's state changed behind the store's back, and an orphan row.
            try tamper(path, "UPDATE node SET state = X'01' WHERE path = 'Tabs/Profile' AND died IS NULL")
            let broken = try run(["check", path])
            #expect(broken.status == 1)
            #expect(broken.standardOutput.contains("node 'Tabs/Profile': its content does not match its checksum"))
            let document = try run(["check", path, "--format", "json"]).jsonObject()
            #expect(document["healthy"] as? Bool == false)
            let problems = try #require(document["problems"] as? [[String: Any]])
            #expect(problems.contains { $0["path"] as? String == "Tabs/Profile" && $0["generation"] as? Int == 4 })
        }
    }

    /// `check --archive` lists that archive's problems and the store's own (here a damaged
    /// journal entry), not another archive's.
    @Test func checkOfOneArchiveLeavesOutAnotherArchivesDamage() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let nodes = try SampleArchives.tree(count: 3).map { node in
                var node = node
                node.state = try StateValue.encode(["x": .int(1)])
                return node
            }
            try store.save(nodes, header: SampleArchives.header)
            try store.save(nodes, header: SampleArchives.header, in: try ArchiveName("scene-2"))
            try tamper(
                path, "UPDATE node SET state = X'0102' WHERE path = 'Root' AND archive_id = (SELECT id FROM archive WHERE name = 'scene-2')")
            let whole = try run(["check", path])
            #expect(whole.status == 1 && whole.standardOutput.hasPrefix("Store \(path): 1 problem\n"), "\(whole.standardOutput)")
            #expect(whole.standardOutput.contains("archive 'scene-2', generation 1, node 'Root': "))
            let main = try run(["check", path, "--archive", "main"])
            #expect(main.status == 0 && main.standardOutput.hasSuffix(": healthy\n"), "\(main.standardOutput)")
            let other = try run(["check", path, "--archive", "scene-2", "--format", "json"])
            #expect(other.status == 1)
            let problems = try #require(try other.jsonObject()["problems"] as? [[String: Any]])
            #expect(problems.map { $0["archive"] as? String } == ["scene-2"] && problems.first?["path"] as? String == "Root")
            // A problem of the store's own is listed whichever archive is asked for.
            try store.record(.willFinishLaunching)
            try tamper(path, "UPDATE journal SET event = 'bogus'")
            let withJournal = try run(["check", path, "--archive", "main"])
            #expect(withJournal.status == 1 && withJournal.standardOutput.hasPrefix("Store \(path): 1 problem\n"))
            #expect(withJournal.standardOutput.contains("\n  journal entry "), "\(withJournal.standardOutput)")
            #expect(!withJournal.standardOutput.contains("scene-2"))
        }
    }

    /// `show` of a node whose row damage took away says the generation is damaged, not that
    /// the archive has no node there; a node still whole is shown.
    @Test func showOfANodeThatDamageTookAwaySaysTheGenerationIsDamaged() throws {
        try withDemoStore { path in
            try tamper(path, "DELETE FROM node WHERE path = 'Tabs/Profile' AND died IS NULL")
            let gone = try run(["show", path, "Tabs/Profile"])
            #expect(gone.status == 1 && gone.standardOutput.isEmpty)
            #expect(
                gone.standardError
                    == "restorectl: error: Archive 'main' generation 4 is damaged: it holds no node at 'Tabs/Profile' that can be read: its nodes do not match the header's count, size and digest.\n")
            let whole = try run(["show", path, "Tabs/OrderNavigation/Order"])
            #expect(whole.status == 0 && whole.standardOutput.contains("checksum:  ok"), "\(whole.standardError)")
        }
    }

    /// `info` of an archive whose newest generation's row damage took away names the damage,
    /// as `tree` and `check` do; it said "state: valid", "generation: 4 (none retained)".
    @Test func infoOfAnArchiveWhoseNewestHeaderIsGoneSaysItIsDamaged() throws {
        try withDemoStore { path in
            try tamper(path, "DELETE FROM generation WHERE generation = 4")
            let named = "Archive 'main' generation 4 is damaged: the header of its newest generation is missing."
            let info = try run(["info", path])
            #expect(info.status == 1 && info.standardError == "restorectl: error: \(named)\n")
            #expect(info.standardOutput.contains("\nArchive main\n  state:         damaged: \(named)\n"))
            let tree = try run(["tree", path])
            #expect(tree.status == 1 && tree.standardError == "restorectl: error: \(named)\n")
        }
    }

    /// A store whose table of archives lost rows (here all: the demo's one archive) says so,
    /// where `info` said "(no archives)" and exit 0, and `tree` that the store had no archive
    /// 'main'; the commands show what they read without the list (the journal, the last
    /// launch), and exit 1 naming the damage once.
    @Test func aStoreThatLostItsArchivesSaysSoAndShowsTheRest() throws {
        try withDemoStore { path in
            try tamper(path, "DELETE FROM archive")
            let lost = "The store is damaged: the archive table or its name index lost or mixed up archives."
            let info = try run(["info", path])
            #expect(info.status == 1 && info.standardError == "restorectl: error: \(lost)\n")
            #expect(info.standardOutput.contains("\n  archives:      cannot be listed: \(lost) (restorectl check lists"))
            #expect(info.standardOutput.contains("\n  last launch:   launch "))
            #expect(!info.standardOutput.contains("(no archives)"))
            let selected = try run(["info", path, "--archive", "main"])
            #expect(selected.status == 1 && selected.standardError == "restorectl: error: \(lost)\n")
            #expect(
                selected.standardOutput.contains(
                    "\n  state:         damaged: \(lost)\n  crash marker:  none (no restoration in progress or died)\n"
                        + "  (restorectl check lists the store's problems; an app erases such a store and starts afresh)\n"),
                "\(selected.standardOutput)")
            let json = try run(["info", path, "--format", "json"])
            #expect(json.status == 1 && json.standardOutput.contains("\"archives_error\" : \"\(lost)\""))
            let events = try run(["events", path])
            #expect(events.status == 1 && events.standardError == "restorectl: error: \(lost)\n")
            #expect(events.standardOutput.contains("willFinishLaunching"))
            for command in ["markers", "report"] {
                let result = try run([command, path])
                #expect(result.status == 1 && result.standardError == "restorectl: error: \(lost)\n", "\(command)")
            }
            let tree = try run(["tree", path])
            #expect(tree.status == 1 && tree.standardError == "restorectl: error: \(lost)\n")
        }
    }

    /// A name index whose entry for `main` damage changed (`Main`): the list of archives
    /// cannot be made, and `markers` shows every marker the store holds, under its archive's
    /// own name, then names the damage. It listed the marker as `Main`'s, exit 0. With
    /// `--archive`, only that archive's markers, the list or not.
    @Test func markersOfAStoreWhoseNameIndexMixedUpArchivesAreAllShown() throws {
        try withDemoStore { path in
            try ArchiveStore(path: path).save(
                try SampleArchives.tree(count: 3), header: SampleArchives.header, in: try ArchiveName("scene-2"))
            #expect(try run(["demo", "--step", "restore-crash", "--db", path]).wasSignalled)
            // The index's entry changed in place, as a flipped bit does (SQL would move it).
            let damage = """
                import sqlite3
                c = sqlite3.connect('\(path)'); c.execute('PRAGMA wal_checkpoint(TRUNCATE)')
                root = c.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'sqlite_autoindex_archive_1'").fetchone()[0]
                size = c.execute('PRAGMA page_size').fetchone()[0]; c.close()
                with open('\(path)', 'r+b') as f:
                    f.seek((root - 1) * size); page = bytearray(f.read(size))
                    assert page.count(b'main') == 1
                    at = page.index(b'main'); page[at] = ord('M')
                    f.seek((root - 1) * size); f.write(page)
                """
            #expect(try runProcess("/usr/bin/env", ["python3", "-c", damage]).status == 0)
            let markers = try run(["markers", path])
            #expect(
                markers.standardError
                    == "restorectl: error: The store is damaged: the archive table or its name index lost or mixed up archives.\n")
            #expect(markers.status == 1)
            #expect(markers.standardOutput.contains("\n  archive main, generation 4, begun "), "\(markers.standardOutput)")
            #expect(!markers.standardOutput.contains("Main"))
            let selected = try run(["markers", path, "--archive", "scene-2"])
            #expect(selected.status == 1 && selected.standardOutput.contains("(no crash markers"), "\(selected.standardOutput)")
        }
    }

    /// A damaged archive's crash marker is shown with it, in text and JSON, as a readable
    /// archive's is.
    @Test func aDamagedArchiveIsShownWithItsCrashMarker() throws {
        try withDemoStore { path in
            #expect(try run(["demo", "--step", "restore-crash", "--db", path]).wasSignalled)
            try tamper(path, "UPDATE archive SET generation = generation + 7 WHERE name = 'main'")
            let info = try run(["info", path])
            #expect(info.status == 1)
            #expect(
                info.standardOutput.contains(try Regex("\n  state:         damaged: [^\n]+\n  crash marker:  generation 4, begun ")),
                "\(info.standardOutput)")
            let document = try run(["info", path, "--format", "json"]).jsonObject()
            let damaged = try #require((document["damaged_archives"] as? [[String: Any]])?.first)
            #expect(damaged["name"] as? String == "main")
            #expect((damaged["crash_marker"] as? [String: Any])?["generation"] as? Int == 4)
        }
    }

    /// One archive's damaged row hides nothing else: `info` shows the other archives and names
    /// the damaged one, `events` the journal and the other archives' saves, `markers` and
    /// `report` work, each that met the damage exits 1 naming it, and a discard replaces it.
    @Test func anArchiveWithADamagedRowHidesNothingElse() throws {
        try withDemoStore { path in
            let scene = try ArchiveName("scene-2")
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 3), header: SampleArchives.header, in: scene)
            try tamper(path, "UPDATE archive SET generation = generation + 7 WHERE name = 'main'")
            let named = "restorectl: error: Archive 'main' generation 11 is damaged: its archive row does not match its checksum.\n"

            let info = try run(["info", path])
            #expect(info.status == 1 && info.standardError == named)
            #expect(info.standardOutput.contains("\nArchive main\n  state:         damaged: Archive 'main' generation 11 is damaged"))
            #expect(info.standardOutput.contains("\nArchive scene-2\n  state:         valid\n"))
            let document = try run(["info", path, "--format", "json"]).jsonObject()
            #expect((document["archives"] as? [[String: Any]])?.map { $0["name"] as? String } == ["scene-2"])
            #expect((document["damaged_archives"] as? [[String: Any]])?.map { $0["name"] as? String } == ["main"])

            let events = try run(["events", path, "--limit", "500"])
            #expect(events.status == 1 && events.standardError == named)
            #expect(events.standardOutput.contains("willFinishLaunching: app inactive"))
            #expect(events.standardOutput.contains("saved  archive scene-2 generation 1: full save, 3 nodes"))
            #expect(events.standardOutput.contains("restored  archive main generation"))
            #expect(!events.standardOutput.contains("saved  archive main"))

            let markers = try run(["markers", path])
            #expect(markers.status == 0, "\(markers.standardError)")
            let report = try run(["report", path, "--archive", "main"])
            #expect(report.status == 0 && report.standardOutput.contains("Archive main, restoration at"))
            let check = try run(["check", path])
            #expect(check.status == 1 && check.standardOutput.contains("archive 'main': its archive row does not match its checksum"))

            #expect(try run(["discard", path, "--archive", "main", "--reason", "damaged"]).status == 0)
            let after = try run(["info", path])
            #expect(after.status == 0, "\(after.standardError)")
            #expect(after.standardOutput.contains("\nArchive main\n  state:         discarded at "))
        }
    }

    /// A damaged journal entry hides only the journal: `info` shows the archives and says the
    /// last launch cannot be read, `events` shows the saves and reports; both exit 1.
    @Test func aDamagedJournalEntryHidesOnlyTheJournal() throws {
        try withDemoStore { path in
            try tamper(path, "UPDATE journal SET event = 'bogus' WHERE id = (SELECT max(id) FROM journal)")
            let info = try run(["info", path])
            #expect(info.status == 1 && info.standardError.hasPrefix("restorectl: error: The store's history is damaged: a journal entry"))
            #expect(info.standardOutput.contains("  last launch:   cannot be read: The store's history is damaged: a journal entry"))
            #expect(info.standardOutput.contains("\nArchive main\n  state:         valid\n"))
            let document = try run(["info", path, "--format", "json"]).jsonObject()
            #expect((document["journal_error"] as? String)?.hasPrefix("The store's history is damaged: a journal entry") == true)
            #expect(document["last_launch"] == nil && (document["archives"] as? [Any])?.count == 1)
            let events = try run(["events", path])
            #expect(events.status == 1 && events.standardError.hasPrefix("restorectl: error: The store's history is damaged: a journal entry"))
            #expect(events.standardOutput.contains("saved  archive main generation 4"))
            #expect(events.standardOutput.contains("restored  archive main"))
        }
    }

    /// An older damaged journal entry hides only the entries before it: `events` shows the
    /// newer ones (it showed none), names the damage and exits 1.
    @Test func aDamagedJournalEntryHidesOnlyTheEntriesBeforeIt() throws {
        try withDemoStore { path in
            let journal = try ArchiveStore(path: path, mode: .readOnly).journal()
            let (count, first) = (journal.count, try #require(journal.first).sequence)
            try tamper(path, "UPDATE journal SET event = 'bogus' WHERE id = \(first + 6)")
            let document = try run(["events", path, "--format", "json", "--limit", "500"]).jsonObject()
            let launches = (document["events"] as? [[String: Any]] ?? []).compactMap { $0["launch"] as? Int }
            // The entries after the damaged one (id first + 6), the newest included.
            #expect(launches.count == count - 7)
            #expect(launches.allSatisfy { $0 > first })
            let events = try run(["events", path, "--limit", "500"])
            #expect(events.status == 1 && events.standardError == "restorectl: error: The store's history is damaged: a journal entry has an unknown event.\n")
            #expect(!events.standardOutput.contains("launch \(first):\n"))
            #expect(events.standardOutput.contains("didEnterBackground: app background"))
        }
    }

    /// A damaged restore report hides only its archive's older reports: `events` and `report
    /// --all` show the journal, the saves and the newer reports, name it and exit 1 (they
    /// showed none of the archive's reports). `report` alone reads the newest report only.
    @Test func aDamagedRestoreReportHidesOnlyTheOlderReportsOfItsArchive() throws {
        try withDemoStore { path in
            let kept = try ArchiveStore(path: path, mode: .readOnly).restoreReports()
            #expect(kept.count >= 3)
            try tamper(path, "UPDATE restore_report SET report = x'00' WHERE sequence = (SELECT max(sequence) - 1 FROM restore_report)")
            let named = "restorectl: error: The store's history is damaged: a restore report of archive 'main' cannot be read.\n"
            func count(_ text: String, in output: String) -> Int { output.components(separatedBy: text).count - 1 }

            let events = try run(["events", path, "--limit", "500"])
            #expect(events.status == 1 && events.standardError == named)
            #expect(events.standardOutput.contains("willFinishLaunching: app inactive"))
            #expect(events.standardOutput.contains("saved  archive main generation"))
            #expect(count("restored  archive main", in: events.standardOutput) == 1)
            let all = try run(["report", path, "--all"])
            #expect(all.status == 1 && all.standardError == named)
            #expect(count("Archive main, restoration at", in: all.standardOutput) == 1)
            let newest = try run(["report", path, "--format", "json"])
            #expect(newest.status == 0 && newest.standardError.isEmpty, "\(newest.standardError)")
            let reports = try #require(try newest.jsonObject()["reports"] as? [[String: Any]])
            #expect(reports.count == 1)

            // The newest damaged too: nothing of the archive's reports reads.
            try tamper(path, "UPDATE restore_report SET report = x'00' WHERE sequence = (SELECT max(sequence) FROM restore_report)")
            for arguments in [["report", path, "--all"], ["report", path]] {
                let report = try run(arguments)
                #expect(report.status == 1 && report.standardError == named)
                #expect(report.standardOutput.contains("(no restore reports)"))
            }
        }
    }

    /// A store saved by an earlier version of the library (schema 6) is inspected as it is,
    /// through a migrated copy, and left unchanged; its saves of one millisecond are listed in
    /// the order they were made (they came newest first).
    @Test func aStoreOfAnOlderSchemaIsInspectedAndLeftAsItIs() throws {
        try withTemporaryStorePath { path in
            let fixture = URL(filePath: #filePath).deletingLastPathComponent()
                .appending(path: "../RestorationArchiveTests/Fixtures/schema-v6.sqlite").standardized
            try FileManager.default.copyItem(atPath: fixture.path, toPath: path)
            let before = fileBytes(path)
            for command in ["info", "check", "tree"] {
                let outcome = try run([command, path])
                #expect(outcome.status == 0, "\(command): \(outcome.standardError)")
            }
            // The copy's size is the migrated store's: the file's length differs, and no log
            // explains it.
            let file = try #require(before?.count)
            let info = try run(["info", path]).standardOutput
            let size = try #require(info.split(separator: "\n").first { $0.hasPrefix("  size:") })
            #expect(size.contains("(its file \(file) bytes); write-ahead log 0 bytes"), "\(size)")
            let events = try run(["events", path])
            #expect(events.status == 0, "\(events.standardError)")
            let expected = ["main generation 2", "main generation 3", "scene-2 generation 1", "scene-2 generation 2"]
            #expect(
                events.standardOutput.split(separator: "\n").filter { $0.contains("  saved  ") }.map { line in
                    expected.first { line.contains("archive " + $0 + ":") } ?? String(line)
                } == expected, "\(events.standardOutput)")
            #expect(fileBytes(path) == before && !fileExists(path + "-wal"))
        }
    }

    @Test func exportWritesAnOwnerOnlyDocumentAndRefusesToOverwrite() throws {
        try withDemoStore { path in
            let output = path + ".json"
            let exported = try run(["export", path, "--output", output])
            #expect(exported.status == 0, "\(exported.standardError)")
            let attributes = try FileManager.default.attributesOfItem(atPath: output)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let document = try #require(
                try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(filePath: output))) as? [String: Any])
            #expect((document["header"] as? [String: Any])?["generation"] as? Int == 4)
            let nodes = try #require(document["nodes"] as? [[String: Any]])
            #expect(nodes.count == 12)
            let order = try #require(nodes.first { $0["path"] as? String == "Tabs/OrderNavigation/Order" })
            #expect((order["state"] as? [String: Any])?["order"] != nil)

            let again = try run(["export", path, "--output", output])
            #expect(again.status == 1)
            #expect(again.standardError.contains("the file exists (use --force to replace it)"))
            #expect(try run(["export", path, "--output", output, "--force"]).status == 0)
            let link = path + ".link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: output)
            let throughLink = try run(["export", path, "--output", link, "--force"])
            #expect(throughLink.status == 1)
            #expect(throughLink.standardError.contains("symbolic link"))

            // `-` is standard output, with the same document and nothing else; no file named `-`.
            let piped = try run(["export", path, "--output", "-"])
            #expect(piped.status == 0 && piped.standardError.isEmpty, "\(piped.standardError)")
            #expect(piped.standardOutput == (try String(contentsOfFile: output, encoding: .utf8)))
            #expect(!fileExists(FileManager.default.currentDirectoryPath + "/-"))
        }
    }

    /// The output must be a regular file. A pipe without a reader made the export wait
    /// forever (opening it for writing blocks), and `--force` truncated what it opened and
    /// changed its mode: a device failed with "Invalid argument", after opening it.
    @Test func exportWritesOnlyARegularFile() throws {
        try withDemoStore { path in
            let pipe = path + ".fifo"
            #expect(mkfifo(pipe, 0o600) == 0)
            let folder = path + ".folder"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            let nullMode = try #require(try FileManager.default.attributesOfItem(atPath: "/dev/null")[.posixPermissions] as? Int)
            for output in [pipe, "/dev/null", folder] {
                for force in [false, true] {
                    let outcome = try runProcess(
                        restorectl, ["export", path, "--output", output] + (force ? ["--force"] : []), timeout: 20)
                    #expect(outcome.status == 1 && !outcome.wasSignalled, "\(output): \(outcome.standardError)")
                    #expect(
                        outcome.standardError
                            == "restorectl: error: cannot write '\(output)': it is not a regular file (use --output - for standard output)\n")
                }
            }
            #expect(try FileManager.default.attributesOfItem(atPath: "/dev/null")[.posixPermissions] as? Int == nullMode)
            var info = stat()
            #expect(lstat(pipe, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        }
    }

    /// An export that runs out of space part-way (here the file size limit, `ulimit -f`)
    /// left what it had written at the output path, which the next export then refused to
    /// replace, and `--force` had truncated the file it replaced: now the path holds the
    /// whole document or what it held before, and nothing is left beside it. The document
    /// is over 3 MiB and the limit 2 MiB: ThreadSanitizer's runtime needs about 512 KiB of
    /// file to start.
    @Test func anExportThatFailsPartWayLeavesThePathAsItWas() throws {
        try withTemporaryStorePath { path in
            let state = try StateValue.encode(["text": .string(String(repeating: "x", count: 3 << 20))])
            try ArchiveStore(path: path).save(
                [ArchivedNode(path: try RestorationPath("Root"), className: "Screen", state: state)],
                header: SampleArchives.header)
            let folder = (path as NSString).deletingLastPathComponent
            let output = path + ".json"
            func exportWithLittleSpace(_ arguments: [String]) throws -> ProcessOutcome {
                // SIGXFSZ ignored: the write past the limit fails with EFBIG instead of killing.
                try runProcess(
                    "/bin/bash",
                    ["-c", "trap '' XFSZ; ulimit -f 2048; exec \"$@\"", "bash", restorectl, "export", path, "--output", output]
                        + arguments)
            }
            let failed = try exportWithLittleSpace([])
            #expect(failed.status == 1)
            #expect(failed.standardError == "restorectl: error: cannot write '\(output)': File too large\n")
            #expect(!fileExists(output))
            #expect(try run(["export", path, "--output", output]).status == 0)
            let whole = try Data(contentsOf: URL(filePath: output))
            #expect(whole.count > 3 << 20)
            #expect(try exportWithLittleSpace(["--force"]).status == 1)
            #expect(try Data(contentsOf: URL(filePath: output)) == whole)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).allSatisfy { !$0.contains("restorectl-export") })
        }
    }

    /// The export's temporary file goes beside the output, in the folder before its last "/",
    /// and is renamed into place. That "/" was looked for as a character, and one followed by
    /// a combining mark (a name starting with U+0301) is not that character: the temporary
    /// file went to the folder before, and where the output's folder is on another file
    /// system (here through a link to a folder in `/dev/shm`, a memory file system, when
    /// there is one), the rename failed ("Invalid cross-device link").
    @Test func anExportWhoseNameStartsWithACombiningMarkIsWrittenBesideIt() throws {
        try withDemoStore { path in
            let folder = (path as NSString).deletingLastPathComponent
            var elsewhere = folder + "/elsewhere"
            if FileManager.default.fileExists(atPath: "/dev/shm") {
                elsewhere = "/dev/shm/restorectl-test-\(UUID().uuidString)"
            }
            try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(atPath: elsewhere) }
            #expect(symlink(elsewhere, folder + "/link") == 0)
            let output = folder + "/link/\u{301}export.json"
            let exported = try run(["export", path, "--output", output])
            #expect(exported.status == 0, "\(exported.standardError)")
            #expect(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(filePath: output))) is [String: Any])
            for place in [folder, elsewhere] {
                #expect(try FileManager.default.contentsOfDirectory(atPath: place).allSatisfy { !$0.contains("restorectl-export") })
            }
        }
    }

    /// Terminated while it writes its document (`kill`, or Ctrl-C at a terminal), `export`
    /// left the file it was writing beside the output: part of the archive's state, under a
    /// hidden name. It removes it now and dies of the signal as before. A signal the process
    /// ignores (SIGINT in a background job) stays ignored: the export completes. Each signal
    /// is sent while the process is stopped with the file there, so that it lands in the write.
    @Test func anExportStoppedAsItWritesLeavesNoFileBehind() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let text = String(repeating: "state ", count: 400)
            let nodes = try (0..<3_000).map { index in
                ArchivedNode(
                    path: try RestorationPath("Root").appending("n\(index)"), className: "Screen",
                    state: try StateValue.encode(["text": .string(text)]))
            }
            let root = ArchivedNode(path: try RestorationPath("Root"), className: "Root", state: try StateValue.encode([:]))
            try ArchiveStore(path: path).save([root] + nodes, header: SampleArchives.header)
            let output = directory + "/out/export.json"
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: false)
            func leftBehind() -> [String] {
                ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/out")) ?? []).filter {
                    $0.hasPrefix(".restorectl-export-")
                }
            }
            // SIGINT as a shell's background job has it: ignored (`trap '' INT`).
            for (signal, ignored) in [(SIGTERM, false), (SIGHUP, false), (SIGINT, true)] {
                var caught = false
                for _ in 0..<20 where !caught {
                    // Each case on its own: none left by the one before (as before the fix).
                    for name in [output] + leftBehind().map({ directory + "/out/" + $0 }) {
                        try? FileManager.default.removeItem(atPath: name)
                    }
                    let trap = ignored ? "trap '' INT; " : ""
                    let pid = try spawnWithSignalsUnblocked(
                        ["/bin/sh", "-c", trap + #"exec "$0" export "$1" --output "$2" > /dev/null"#, restorectl, path, output])
                    var status: Int32 = 0
                    var ended = false
                    let started = ContinuousClock.now
                    while leftBehind().isEmpty && !ended && ContinuousClock.now - started < .seconds(60) {
                        ended = waitpid(pid, &status, WNOHANG) == pid
                        if !ended { usleep(200) }
                    }
                    // Done before the file was seen (and reaped: its id may be another's now).
                    if ended { continue }
                    kill(pid, SIGSTOP)
                    caught = !leftBehind().isEmpty
                    if caught { kill(pid, signal) }
                    kill(pid, SIGCONT)
                    waitpid(pid, &status, 0)
                    guard caught else { continue }
                    // `waitpid`'s status: the signal in its low 7 bits, or the exit status above.
                    if ignored {
                        #expect(status & 0x7F == 0 && status >> 8 & 0xFF == 0, "\(signal): status \(status)")
                        #expect(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(filePath: output))) is [String: Any])
                    } else {
                        #expect(status & 0x7F == signal, "\(signal): status \(status)")
                        #expect(!FileManager.default.fileExists(atPath: output), "\(signal)")
                    }
                    #expect(leftBehind().isEmpty, "\(signal): \(leftBehind())")
                }
                #expect(caught, "\(signal): the export was never stopped as it wrote")
            }
        }
    }

    /// An export whose document cannot be made beside its output (in a folder that does not
    /// exist; at a path longer than the system takes, which is said before any file is
    /// tried) says why, exits 1 and makes nothing.
    @Test func anExportWhoseFileCannotBeMadeSaysWhy() throws {
        try withDemoStore { path in
            let folder = URL(filePath: path).deletingLastPathComponent().path
            let listing = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
            let tooLong = folder + "/" + String(repeating: "d/", count: Int(PATH_MAX) / 2) + "x.json"
            for (output, reason) in [(folder + "/missing/x.json", "No such file or directory"), (tooLong, "File name too long")] {
                let outcome = try run(["export", path, "--output", output])
                #expect(outcome.status == 1)
                #expect(outcome.standardError == "restorectl: error: cannot write '\(output)': \(reason)\n", "\(reason)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == listing)
        }
    }

    /// `restorectl` with `arguments`, run by the shell between `before` (a `ulimit`) and
    /// `after` (redirections): what only a shell sets up for the process.
    private func runThroughShell(_ arguments: [String], before: String = "", after: String = "") throws -> ProcessOutcome {
        try runProcess("/bin/sh", ["-c", before + #" exec "$0" "$@" "# + after, restorectl] + arguments)
    }

    /// Starts `arguments` (the executable's path first) with no signal blocked, and SIGINT,
    /// SIGTERM and SIGHUP as their default: a child of the test runner started by `Process`
    /// inherits a mask that blocks SIGTERM and SIGHUP, which then never reach it, and a runner
    /// started by `nohup` or in a shell's background ignores SIGHUP or SIGINT.
    private func spawnWithSignalsUnblocked(_ arguments: [String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var (none, defaults) = (sigset_t(), sigset_t())
        sigemptyset(&none)
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        try #require(posix_spawn(&pid, arguments[0], nil, &attributes, &argv, environ) == 0)
        return pid
    }

    /// Standard output that cannot be written (a full disk behind `> file`; `/dev/full` is
    /// one): the lost output went without a word and the command exited 0, so that an export
    /// to standard output left a document cut short that looked complete. Both a write larger
    /// than the stream's buffer (the export) and one within it (`info`) are caught.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func standardOutputThatCannotBeWrittenFailsTheCommand() throws {
        try withDemoStore { path in
            for arguments in [["export", path, "--output", "-"], ["info", path], ["events", path]] {
                let outcome = try runThroughShell(arguments, after: "> /dev/full")
                #expect(outcome.status == 1, "\(arguments[0])")
                #expect(
                    outcome.standardError.hasPrefix("restorectl: error: cannot write standard output: ")
                        && outcome.standardError.hasSuffix("; what was printed is incomplete\n"),
                    "\(arguments[0]): \(outcome.standardError)")
            }
            #expect(try run(["info", path]).status == 0)
        }
    }

    /// Standard error that cannot be written (closed, or a full disk behind it) loses the
    /// command's error and warning lines, as any program's, and the exit status still says how
    /// the command ended: a missing store 2, bad usage 64, a warning 0, standard output lost
    /// too 1. `restorectl` died of signal 4 at the first line it wrote there.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func standardErrorThatCannotBeWrittenLeavesTheExitStatus() throws {
        try withDemoStore { path in
            let hardLink = path + ".hard"
            #expect(link(path, hardLink) == 0)
            defer { unlink(hardLink) }
            let cases: [([String], String, Int32)] = [
                (["info", path + ".missing"], "", 2), (["info", path, "--bogus"], "", 64),
                (["info", hardLink], "> /dev/null", 0), (["info", path], "> /dev/full", 1),
            ]
            for (arguments, standardOutput, status) in cases {
                for standardError in ["2>&-", "2> /dev/full"] {
                    let outcome = try runThroughShell(arguments, after: standardOutput + " " + standardError)
                    #expect(outcome.status == status, "\(arguments) \(standardError)")
                }
            }
            // What the warning case writes when standard error takes it.
            #expect(try run(["info", hardLink]).standardError.hasPrefix("restorectl: warning: "))
        }
    }

    /// `--force` replaced whatever the output path named: the store itself, the app's saved
    /// state, became the JSON document. Whatever path names the store or its write-ahead log
    /// files (by another name, a hard link, too), the export refuses it and leaves the file as
    /// it was.
    @Test func exportNeverWritesOverTheStoreOrItsLog() throws {
        try withDemoStore { path in
            let hardLink = path + ".hard"
            #expect(link(path, hardLink) == 0)
            let store = try #require(sizeAndChange(path))
            let url = URL(filePath: path)
            let sameFile = url.deletingLastPathComponent().path + "/./" + url.lastPathComponent
            for output in [path, sameFile, hardLink] {
                let outcome = try run(["export", path, "--output", output, "--force"])
                #expect(outcome.status == 1)
                #expect(outcome.standardError.contains("cannot write '\(output)': it is the store being exported"), "\(outcome.standardError)")
                #expect(sizeAndChange(path) == store)
            }
            // A store with two names is never opened read-write (the app's open below).
            #expect(unlink(hardLink) == 0)
            // While the app has the store open, its log and the log's index exist. (Sizes and
            // times of change tell: a descriptor of the test's own to read the files would
            // release the app's locks on them once closed.)
            let app = try ArchiveStore(path: path)
            _ = try app.snapshot()
            for (suffix, what) in [("-wal", "the store's write-ahead log"), ("-shm", "the store's write-ahead log index")] {
                let before = try #require(sizeAndChange(path + suffix))
                let outcome = try run(["export", path, "--output", path + suffix, "--force"])
                #expect(outcome.status == 1)
                #expect(outcome.standardError.contains("it is \(what)"), "\(outcome.standardError)")
                #expect(sizeAndChange(path + suffix) == before)
            }
            // By another name (a hard link), the log is the log still.
            let logLink = path + ".log-link"
            #expect(link(path + "-wal", logLink) == 0)
            let log = try #require(sizeAndChange(path + "-wal"))
            let linked = try run(["export", path, "--output", logLink, "--force"])
            #expect(linked.status == 1 && linked.standardError.contains("it is the store's write-ahead log"), "\(linked.standardError)")
            #expect(sizeAndChange(path + "-wal") == log)
            #expect(unlink(logLink) == 0)
            #expect(try app.snapshot()?.nodes.count == 12)
            #expect(try run(["export", path, "--output", path + ".json", "--force"]).status == 0)
        }
        // With the app closed, no log is there: a document by its name was taken by SQLite
        // for the log, and the store read as one needing recovery until the app opened it.
        try withDemoStore { path in
            let url = URL(filePath: path)
            let sameFolder = url.deletingLastPathComponent().path + "/./" + url.lastPathComponent
            for (output, what) in [
                (path + "-wal", "the store's write-ahead log"), (sameFolder + "-shm", "the store's write-ahead log index"),
                (path + "-journal", "the store's rollback journal"),
            ] {
                #expect(!fileExists(output))
                let outcome = try run(["export", path, "--output", output])
                #expect(outcome.status == 1)
                #expect(outcome.standardError == "restorectl: error: cannot write '\(output)': it is \(what)\n")
                #expect(!fileExists(output))
            }
            #expect(try run(["info", path]).status == 0)
        }
    }

    /// A file's size and the time its content last changed, in nanoseconds.
    private func sizeAndChange(_ path: String) -> [Int]? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return [Int(info.st_size), info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec]
    }

    @Test func discardIsRecordedAndNeverCreatesAStore() throws {
        try withDemoStore { path in
            let discarded = try run(["discard", path, "--archive", "main", "--reason", "support asked for it"])
            #expect(discarded.status == 0, "\(discarded.standardError)")
            #expect(discarded.standardOutput.contains("Discarded archive main"))
            #expect(try run(["info", path]).standardOutput.contains("discarded at"))
            #expect(try run(["events", path]).standardOutput.contains("discarded  archive main: support asked for it"))
            #expect(try run(["discard", path, "--archive", "scene-9", "--reason", "x"]).status == 1)
            #expect(try run(["discard", path, "--archive", "main"]).status != 0, "a reason is required")
        }
        // A blank reason: refused by the command; given through the library, it says so
        // rather than printing nothing after a colon.
        try withDemoStore { path in
            let blank = try run(["discard", path, "--archive", "main", "--reason", " "])
            #expect(blank.status == 64)
            #expect(blank.standardError.contains("--reason must say why"), "\(blank.standardError)")
            #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot() != nil)
            _ = try ArchiveStore(path: path).discard(.main, reason: "")
            #expect(try run(["info", path]).standardOutput.contains(": no reason given\n"))
            #expect(try run(["events", path]).standardOutput.contains("discarded  archive main: no reason given\n"))
            let tree = try run(["tree", path])
            #expect(tree.standardError == "restorectl: error: Archive 'main' was discarded (no reason given): it retains no generation.\n")
        }
        try withTemporaryDirectory { directory in
            let missing = directory + "/none.sqlite"
            let outcome = try run(["discard", missing, "--archive", "main", "--reason", "x"])
            #expect(outcome.status == 2)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    /// A discard that leaves most of the store free says the file gave the space back.
    @Test func discardSaysWhenTheStoreWasCompacted() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let large = try ArchiveName("large")
            try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            try store.save(try SampleArchives.tree(count: 4_000, stateSize: 400), header: SampleArchives.header, in: large)
            let small = try run(["discard", path, "--archive", "main", "--reason", "closed"])
            #expect(small.status == 0, "\(small.standardError)")
            #expect(!small.standardOutput.contains("compacted"), "\(small.standardOutput)")
            let before = try #require(fileSize(path))
            let outcome = try run(["discard", path, "--archive", "large", "--reason", "closed"])
            #expect(outcome.status == 0, "\(outcome.standardError)")
            let after = try #require(fileSize(path))
            #expect(after < before / 10)
            #expect(
                outcome.standardOutput == """
                    Discarded archive large: 4000 node rows deleted.
                    The store was compacted to give the space back: its file went from \(before) to \(after) bytes.

                    """)
        }
    }

    /// `info` says what the store takes on disk, free pages included, as the files and
    /// SQLite's counts have it.
    @Test func infoShowsTheStoresSizeAndItsFreePages() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 4_000, stateSize: 400), header: SampleArchives.header)
            // Two small saves prune the large generation: its pages are free. The checkpoint
            // copies the log back: the file is the store's size.
            for _ in 0..<2 { try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header) }
            #expect(try store.withConnection { try $0.checkpointTruncating() })
            let pages = try store.withConnection { try $0.pageCounts() }
            let free = Int(pages.freeBytes)
            #expect(free > 1_000_000)
            let (file, log) = (try #require(fileSize(path)), try #require(fileSize(path + "-wal")))
            #expect(file == Int(pages.bytes) && log == 0)
            let text = try run(["info", path])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(
                text.standardOutput.contains(
                    "\n  size:          \(file) bytes, \(free) of them free; write-ahead log 0 bytes\n"),
                "\(text.standardOutput)")
            let size = try #require(try run(["info", path, "--format", "json"]).jsonObject()["size"] as? [String: Int])
            #expect(size == ["file_bytes": file, "store_bytes": file, "free_bytes": free, "log_bytes": 0])
        }
    }

    /// While the log holds saves not yet copied back (an app killed, or running, with them
    /// there), `info` gives the store's size as it reads, which its free pages are part of,
    /// and the file's own length beside it (a killed app's file may be shorter than its free
    /// pages alone).
    @Test func infoGivesTheSizeTheStoreReadsWhileItsLogHoldsItsSaves() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            // The opening's first save leaves the log as it finds it (empty): the save is in
            // the log, and the file holds the store as its creation left it.
            try store.save(try SampleArchives.tree(count: 400, stateSize: 400), header: SampleArchives.header)
            let pages = try store.withConnection { try $0.pageCounts() }
            let (file, log) = (try #require(fileSize(path)), try #require(fileSize(path + "-wal")))
            #expect(file < Int(pages.bytes) / 4, "the save is in the log")
            let text = try run(["info", path])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(
                text.standardOutput.contains(
                    "\n  size:          \(pages.bytes) bytes, \(pages.freeBytes) of them free "
                        + "(its file \(file) bytes until the write-ahead log is copied back); "
                        + "write-ahead log \(log) bytes\n"),
                "\(text.standardOutput)")
            let size = try #require(try run(["info", path, "--format", "json"]).jsonObject()["size"] as? [String: Int])
            #expect(
                size == [
                    "file_bytes": file, "store_bytes": Int(pages.bytes), "free_bytes": Int(pages.freeBytes),
                    "log_bytes": log,
                ])
        }
    }

    /// A reader that holds the log back: the discard says the log is not truncated yet, and
    /// the compacted store's file shrinks at the checkpoint that truncates it.
    @Test func discardSaysWhenAReaderHoldsTheCompactedStoreInTheLog() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 4_000, stateSize: 400), header: SampleArchives.header)
            // The discard waits its busy timeout (5 seconds) for the reader to end.
            let outcome = try ArchiveStore(path: path, mode: .readOnly).withConnection { connection in
                try connection.readTransaction {
                    _ = try connection.pragmaInteger("SELECT count(*) FROM node")
                    return try run(["discard", path, "--archive", "main", "--reason", "closed"])
                }
            }
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(
                outcome.standardOutput == """
                    Discarded archive main: 4000 node rows deleted.
                    The write-ahead log was not truncated (another connection was reading it, or the checkpoint failed, as a warning then says): it may still hold discarded content until the app's next checkpoint.
                    The store was compacted to give the space back: its file shrinks at that checkpoint.

                    """)
            #expect(outcome.standardError.isEmpty, "a reader is no failure: \(outcome.standardError)")
            // The log still holds the archive, which the reader may read.
            #expect(try #require(fileSize(path + "-wal")) > 1_000_000)
            #expect(try store.withConnection { try $0.checkpointTruncating() })
            #expect(fileSize(path + "-wal") == 0)
            #expect(try #require(fileSize(path)) < 100_000)
        }
    }

    @Test func aNodeWithAnUndecodableBlobIsNamedByEveryCommandThatDecodesIt() throws {
        try withTemporaryStorePath { path in
            let good = StateEncoder()
            try good.encode("Caffè Latte", forKey: "title")
            // Format version 7: stored intact (its checksum matches) but no reader can decode it.
            try ArchiveStore(path: path).save(
                [
                    ArchivedNode(path: try RestorationPath("Root"), className: "Root", state: try good.encodedBlob()),
                    ArchivedNode(path: try RestorationPath(parsing: "Root/Broken"), className: "Broken", state: [0x07, 0xFF, 0x00]),
                ], header: SampleArchives.header)
            // What only lists nodes works, and says what it can.
            for arguments in [["info", path], ["tree", path], ["markers", path], ["events", path], ["report", path]] {
                let outcome = try run(arguments)
                #expect(outcome.status == 0 && outcome.standardError.isEmpty, "\(arguments[0]): \(outcome.standardError)")
            }
            #expect(try run(["show", path, "Root"]).standardOutput.contains("title: string \"Caffè Latte\""))
            // What decodes the node names it and the problem, and fails.
            let show = try run(["show", path, "Root/Broken"])
            #expect(show.status == 1 && !show.wasSignalled)
            #expect(show.standardOutput.contains("cannot be decoded: The blob is in format version 7"))
            let check = try run(["check", path])
            #expect(check.status == 1)
            #expect(check.standardOutput.contains("node 'Root/Broken': its state cannot be decoded: The blob is in format version 7"))
            // export keeps every node: the undecodable one with why instead of its values.
            let export = try run(["export", path, "--output", path + ".json"])
            #expect(export.status == 0, "\(export.standardError)")
            defer { try? FileManager.default.removeItem(atPath: path + ".json") }
            let document = try String(contentsOfFile: path + ".json", encoding: .utf8)
            #expect(document.contains("\"state_error\" : \"The blob is in format version 7"))
            #expect(document.contains("\"Caffè Latte\""))
        }
    }

    /// Damaged nodes are named on stderr in the tree's order, as `tree` shows them, by every
    /// command that names them, not in the order of a dictionary of them.
    @Test func damagedNodesAreNamedInTheTreesOrder() throws {
        try withDemoStore { path in
            // The rows of generation 4, of which generation 3 shares all but one.
            try tamper(path, "UPDATE node SET state = X'01' WHERE died IS NULL AND path != 'Tabs'")
            let store = try ArchiveStore(path: path, mode: .readOnly)
            func damaged(in generation: Int64) throws -> [String] {
                let snapshot = try #require(try store.inspectionSnapshot(generation: Generation(rawValue: generation)))
                return snapshot.nodes.filter { snapshot.nodeDamage[$0.path] != nil }.map(\.path.description)
            }
            let newest = try damaged(in: 4)
            #expect(newest.count == 11)
            // `info` names each retained generation's, the oldest first.
            let expected = [("tree", newest), ("export", newest), ("info", try damaged(in: 3) + newest)]
            for (command, inOrder) in expected {
                let outcome = try run(command == "export" ? [command, path, "--output", "-"] : [command, path])
                #expect(outcome.status == 1, "\(command)")
                let named = outcome.standardError.split(separator: "\n").compactMap { line in
                    line.firstRange(of: "The node at '").map { line[$0.upperBound...].prefix { $0 != "'" } }.map(String.init)
                }
                #expect(named == inOrder, "\(command): \(outcome.standardError)")
            }
        }
    }

    /// A node whose checksum does not match is shown where it is and marked, with what the
    /// store holds but not its state; the command names it on stderr and exits 1. The other
    /// nodes are shown as saved.
    @Test func aNodeWhoseChecksumFailsIsMarkedByTreeShowExportAndDiff() throws {
        try withDemoStore { path in
            let damage = """
                import sqlite3
                c = sqlite3.connect('\(path)')
                c.execute("UPDATE node SET state = zeroblob(length(state)) WHERE path = 'Tabs/OrderNavigation/Order' AND died IS NULL")
                c.commit()
                """
            #expect(try runProcess("/usr/bin/env", ["python3", "-c", damage]).status == 0)
            let named = "restorectl: error: The node at 'Tabs/OrderNavigation/Order' in archive 'main' (generation 4) is damaged"

            let tree = try run(["tree", path])
            #expect(tree.status == 1)
            #expect(tree.standardOutput.contains("\n      Order  OrderScreen v0, 172 bytes  DAMAGED\n"), "\(tree.standardOutput)")
            #expect(tree.standardOutput.contains("\n    Profile  ProfileForm v0, 50 bytes\n"))
            #expect(tree.standardError.hasPrefix(named), "\(tree.standardError)")
            let json = try run(["tree", path, "--format", "json"])
            #expect(json.status == 1)
            let nodes = try #require(try json.jsonObject()["nodes"] as? [[String: Any]])
            #expect(nodes.count == 12)
            #expect(nodes.filter { $0["damaged"] as? Bool == true }.map { $0["path"] as? String } == ["Tabs/OrderNavigation/Order"])
            #expect(try run(["tree", path, "--format", "dot"]).standardOutput.contains("OrderScreen v0, 172 bytes\\nDAMAGED"))

            let show = try run(["show", path, "Tabs/OrderNavigation/Order"])
            #expect(show.status == 1)
            #expect(show.standardOutput.contains("  checksum:  does not match: the node is damaged\n  state:     not shown: it is not what was saved\n"))
            #expect(show.standardError.hasPrefix(named))
            let shown = try run(["show", path, "Tabs/OrderNavigation/Order", "--format", "json"]).jsonObject()
            #expect(shown["checksum"] as? String == "mismatch" && shown["state"] == nil)
            let intact = try run(["show", path, "Tabs/Profile"])
            #expect(intact.status == 0 && intact.standardOutput.contains("  checksum:  ok\n"))

            // export writes every node, the damaged one without its state, then names it.
            let export = try run(["export", path, "--output", path + ".json"])
            #expect(export.status == 1 && export.standardError.hasPrefix(named), "\(export.standardError)")
            #expect(export.standardOutput.contains("(12 nodes, 1 of them damaged and exported without its state)"))
            let document = try #require(
                try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(filePath: path + ".json"))) as? [String: Any])
            let exported = try #require(document["nodes"] as? [[String: Any]])
            #expect(exported.count == 12)
            let order = try #require(exported.first { $0["path"] as? String == "Tabs/OrderNavigation/Order" })
            #expect(order["checksum"] as? String == "mismatch" && order["state"] == nil)
            #expect(exported.filter { $0["state"] != nil }.count == 11)

            // diff lists it as damaged in the generation whose row was damaged (the demo's last
            // save wrote a new row for it), then names it.
            let diff = try run(["diff", path, "--from", "3", "--to", "4"])
            #expect(diff.status == 1 && diff.standardError.hasPrefix(named), "\(diff.standardError)")
            #expect(diff.standardOutput.contains(
                "\n  damaged Tabs/OrderNavigation/Order (OrderScreen)\n           damaged in generation 4: what changed cannot be told\n"),
                "\(diff.standardOutput)")
            let same = try run(["diff", path, "--from", "4", "--to", "4", "--format", "json"])
            #expect(same.status == 1 && same.standardError.split(separator: "\n").count == 1, "\(same.standardError)")
            let changes = try #require(try same.jsonObject()["changes"] as? [[String: Any]])
            #expect(changes.map { $0["change"] as? String } == ["damaged"])
            // One generation compared with itself: its damage is told once.
            #expect(changes.map { $0["details"] as? [String] } == [["damaged in generation 4: what changed cannot be told"]])

            // info reads every retained generation's nodes: the header says valid, the
            // generation's line says what is damaged.
            let info = try run(["info", path])
            #expect(info.status == 1 && info.standardError.hasPrefix(named), "\(info.standardError)")
            let lines = info.standardOutput.split(separator: "\n")
            #expect(lines.contains { $0.hasPrefix("    4  saved ") && $0.hasSuffix("; DAMAGED: 1 node") }, "\(info.standardOutput)")
            #expect(lines.contains { $0.hasPrefix("    3  saved ") && !$0.contains("DAMAGED") })
            let generations = try #require(
                (try run(["info", path, "--format", "json"]).jsonObject()["archives"] as? [[String: Any]])?.first?[
                    "generations"] as? [[String: Any]])
            #expect(generations.map { $0["damaged_nodes"] as? [String] } == [["Tabs/OrderNavigation/Order"], nil])
            // A node lost from generation 3 (the row only it uses) keeps it from being read.
            let loss = """
                import sqlite3
                c = sqlite3.connect('\(path)')
                c.execute("DELETE FROM node WHERE path = 'Tabs/OrderNavigation/Order' AND died IS NOT NULL")
                c.commit()
                """
            #expect(try runProcess("/usr/bin/env", ["python3", "-c", loss]).status == 0)
            let lost = try run(["info", path])
            #expect(lost.status == 1 && lost.standardError.split(separator: "\n").count == 2, "\(lost.standardError)")
            #expect(lost.standardOutput.split(separator: "\n").contains {
                $0.hasPrefix("    3  saved ") && $0.contains("; DAMAGED: Archive 'main' generation 3 is damaged")
            }, "\(lost.standardOutput)")
            let unread = try #require(
                (try run(["info", path, "--format", "json"]).jsonObject()["archives"] as? [[String: Any]])?.first?[
                    "generations"] as? [[String: Any]])
            #expect((unread.last?["error"] as? String)?.hasPrefix("Archive 'main' generation 3 is damaged") == true)
        }
    }

    /// Older generations whose headers cannot be read are listed newest first in JSON, as
    /// the retained generations are and as the text lists them.
    @Test func damagedGenerationsAreListedNewestFirst() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path, configuration: .init(retainedGenerations: 3))
            for _ in 1...3 { try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header) }
            try tamper(path, "UPDATE generation SET app_version = '12.0' WHERE generation IN (1, 2)")
            let info = try run(["info", path, "--format", "json"])
            #expect(info.status == 1)
            let archive = try #require((try info.jsonObject()["archives"] as? [[String: Any]])?.first)
            let damaged = try #require(archive["damaged_generations"] as? [[String: Any]])
            #expect(damaged.map { $0["generation"] as? Int } == [2, 1])
        }
    }

    /// A retained generation older than the newest whose header cannot be read is listed as
    /// damaged under its number, and the archive shown as the app restores it. The whole
    /// archive read as damaged ("the app's next full save writes it afresh"), with nothing of
    /// its newest generation, and `events` left out every save of the archive.
    @Test func anOlderGenerationWhoseHeaderIsDamagedIsNamedAndTheArchiveShown() throws {
        try withDemoStore { path in
            try tamper(path, "UPDATE generation SET app_version = '12.0' WHERE generation = 3")
            let named = "restorectl: error: Archive 'main' generation 3 is damaged: its header does not match its checksum.\n"
            let info = try run(["info", path])
            #expect(info.status == 1 && info.standardError == named, "\(info.standardError)")
            let lines = info.standardOutput.split(separator: "\n")
            #expect(lines.contains("  state:         valid") && lines.contains { $0.hasPrefix("  generation:    4, saved ") })
            #expect(lines.contains { $0.hasPrefix("    4  saved ") } && lines.last == "    3  DAMAGED: its header does not match its checksum",
                "\(info.standardOutput)")
            let archive = try #require((try run(["info", path, "--format", "json"]).jsonObject()["archives"] as? [[String: Any]])?.first)
            #expect((archive["generations"] as? [[String: Any]])?.map { $0["generation"] as? Int } == [4])
            let damaged = try #require(archive["damaged_generations"] as? [[String: Any]])
            #expect(damaged.count == 1 && damaged.first?["generation"] as? Int == 3)
            #expect(damaged.first?["error"] as? String == "its header does not match its checksum")

            let events = try run(["events", path])
            #expect(events.status == 1 && events.standardError == named, "\(events.standardError)")
            #expect(events.standardOutput.contains("  saved  archive main generation 4: "), "\(events.standardOutput)")
            #expect(!events.standardOutput.contains("  saved  archive main generation 3: "))
            for command in [["tree", path, "--generation", "3"], ["diff", path, "--from", "3", "--to", "4"], ["check", path]] {
                let outcome = try run(command)
                #expect(outcome.status == 1, "\(command[0])")
                #expect((outcome.standardError + outcome.standardOutput).contains("generation 3"), "\(command[0])")
            }
        }
    }

    /// info reads the archives' summaries, then each retained generation's nodes, in separate
    /// reads: a generation the app's saves pruned in between is left out, not an error.
    @Test func infoLeavesOutAGenerationPrunedAfterItsSummaryWasRead() throws {
        try withTemporaryStorePath { path in
            let app = try ArchiveStore(path: path)
            try app.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
            try app.save(try SampleArchives.tree(count: 5), header: SampleArchives.header)
            let inspector = try ArchiveStore(path: path, mode: .readOnly)
            let summary = try #require(try inspector.summary(of: .main))
            #expect(summary.generations.map(\.generation) == [2, 1])
            // Two more saves retire both generations the summary lists.
            try app.save(try SampleArchives.tree(count: 6), header: SampleArchives.header)
            try app.save(try SampleArchives.tree(count: 7), header: SampleArchives.header)
            #expect(try InfoCommand.generationDamage(of: summary, in: inspector).isEmpty)
            #expect(throws: ArchiveStoreError.generationNotFound(.main, 1)) {
                try inspector.inspectionSnapshot(of: .main, generation: 1)
            }
        }
    }

    @Test func eraseAsksForYesAndKeepsTheFilesMode() throws {
        try withDemoStore { path in
            let unconfirmed = try run(["erase", path])
            #expect(unconfirmed.status == 64)
            #expect(unconfirmed.standardError.contains("pass --yes to erase it"), "\(unconfirmed.standardError)")
            #expect(try run(["info", path]).standardOutput.contains("generation:    4, "), "left as it was")

            try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
            let erased = try run(["erase", path, "--yes"])
            #expect(erased.status == 0, "\(erased.standardError)")
            #expect(erased.standardOutput == "Erased '\(path)': it is an empty store now.\n")
            #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o640)
            let info = try run(["info", path, "--format", "json"]).jsonObject()
            #expect((info["archives"] as? [Any])?.isEmpty == true && info["last_launch"] == nil)
            #expect(try run(["check", path]).status == 0)
            // The app goes on with the empty store.
            let saved = try run(["demo", "--step", "save", "--db", path])
            #expect(saved.status == 0, "\(saved.standardError)")
        }
    }

    /// What the erase does beside erasing, it says, where it used to remove files without a
    /// word: a link at the path of the store's rollback journal, and a second name of the
    /// store's file, which keeps the file while this name gets a new store. A command that
    /// inspects through a name of such a file warns of it.
    @Test func eraseSaysWhatItRemovedBesideTheStore() throws {
        try withDemoStore { path in
            let other = path + ".copy"
            #expect(link(path, other) == 0)
            let inspected = try run(["info", other])
            #expect(inspected.status == 0)
            #expect(inspected.standardError == """
                restorectl: warning: The store's file at '\(other)' has 2 names (hard links): this read-only open \
                reads what was saved through this name, not what another name's write-ahead log holds, and a \
                read-write open refuses the store

                """)
            let target = path + ".notes"
            #expect(FileManager.default.createFile(atPath: target, contents: Data("notes".utf8)))
            #expect(symlink(target, path + "-journal") == 0)
            let erased = try run(["erase", path, "--yes"])
            #expect(erased.status == 0, "\(erased.standardError)")
            #expect(erased.standardOutput == """
                Removed a symbolic link at '\(path)-journal', which SQLite never makes beside a store.
                Gave '\(path)' a file of its own: the file it named is left as it was to its other name (a hard link).
                Erased '\(path)': it is an empty store now.

                """)
            #expect(try run(["info", other]).standardOutput.contains("generation:    4, "), "left as it was")
            let info = try run(["info", path, "--format", "json"]).jsonObject()
            #expect((info["archives"] as? [Any])?.isEmpty == true)
            #expect(fileBytes(target) == Array("notes".utf8), "the link's target is left as it was")
        }
    }

    @Test func eraseGivesUpOnAStoreWhoseWriteLockIsHeldForMoreThanFiveSeconds() throws {
        try withDemoStore { path in
            let held = try withSQLiteHolder(of: path, having: "BEGIN IMMEDIATE") {
                let started = ContinuousClock.now
                let outcome = try run(["erase", path, "--yes"])
                #expect(ContinuousClock.now - started >= .seconds(4))
                #expect(outcome.status == 1)
                #expect(
                    outcome.standardError
                        == "restorectl: error: '\(path)' is busy: another connection held its write lock for more than 5 seconds (the app saving?); try again\n")
            }
            #expect(held, "the lock was never held")
            #expect(try run(["info", path]).standardOutput.contains("generation:    4, "), "left as it was")
        }
    }

    /// A discard waits, as an erase does, for a save in progress, and gives up in the same
    /// words: before, it printed SQLite's "database is locked" and the statement it ran.
    @Test func discardGivesUpOnAStoreWhoseWriteLockIsHeldForMoreThanFiveSeconds() throws {
        try withDemoStore { path in
            let held = try withSQLiteHolder(of: path, having: "BEGIN IMMEDIATE") {
                let started = ContinuousClock.now
                let outcome = try run(["discard", path, "--archive", "main", "--reason", "support asked for it"])
                #expect(ContinuousClock.now - started >= .seconds(4))
                #expect(outcome.status == 1)
                #expect(
                    outcome.standardError
                        == "restorectl: error: '\(path)' is busy: another connection held its write lock for more than 5 seconds (the app saving?); try again\n")
                #expect(outcome.standardOutput.isEmpty)
            }
            #expect(held, "the lock was never held")
            #expect(try run(["info", path]).standardOutput.contains("generation:    4, "), "left as it was")
        }
    }

    /// Whether this machine lets the tests make a file immutable (`chattr +i`: root with
    /// CAP_LINUX_IMMUTABLE, on a file system that keeps the flag), the one way a test running
    /// as root has to make a store it cannot write.
    static let canMakeFilesImmutable: Bool = {
        (try? withTemporaryDirectory { directory in
            let file = directory + "/probe"
            guard FileManager.default.createFile(atPath: file, contents: nil),
                (try? runProcess("/usr/bin/env", ["chattr", "+i", file]))?.status == 0
            else { return false }
            return (try? runProcess("/usr/bin/env", ["chattr", "-i", file]))?.status == 0
        }) ?? false
    }()

    /// A store the user may not write (here an immutable file) is refused by `discard` and
    /// `erase` with the system's words and the file's path (status 1), and left as it was.
    @Test(.enabled(if: canMakeFilesImmutable))
    func discardAndEraseSayWhyAStoreCannotBeWritten() throws {
        try withDemoStore { path in
            let before = fileBytes(path)
            #expect(try runProcess("/usr/bin/env", ["chattr", "+i", path]).status == 0)
            defer { _ = try? runProcess("/usr/bin/env", ["chattr", "-i", path]) }
            for arguments in [["discard", path, "--archive", "main", "--reason", "support asked for it"], ["erase", path, "--yes"]] {
                let outcome = try run(arguments)
                #expect(outcome.status == 1, "\(arguments[0])")
                #expect(
                    outcome.standardError
                        == "restorectl: error: open for writing failed for '\(path)': Operation not permitted (errno 1).\n",
                    "\(arguments[0])")
            }
            #expect(fileBytes(path) == before)
        }
    }

    /// What no other command can open, `erase` empties, but for what is not a store's file:
    /// nothing, a folder, another program's database and a symbolic link are left as they are.
    @Test(arguments: Self.badInputs)
    func eraseEmptiesWhatCannotBeOpenedAndRefusesWhatIsNotAStore(kind: String) throws {
        try withBadInput(kind) { path, directory in
            let listing = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
            // The file's bytes, or the link's target's. Only a file is read: Foundation's
            // `Data(contentsOf:)` leaks its buffer when it fails (on a folder, say), which
            // LeakSanitizer reports.
            let file = URL(filePath: path).resolvingSymlinksInPath()
            let bytes = ["foreign", "symlink"].contains(kind) ? try Data(contentsOf: file) : nil
            let outcome = try run(["erase", path, "--yes"])
            #expect(!outcome.wasSignalled)
            if ["missing", "directory", "foreign", "symlink", "dangling-symlink"].contains(kind) {
                #expect(outcome.status == 2, "\(kind): status \(outcome.status)")
                #expect(outcome.standardOutput.isEmpty)
                #expect(outcome.standardError.hasPrefix("restorectl: error: ") && outcome.standardError.split(separator: "\n").count == 1,
                    "\(kind): \(outcome.standardError)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == listing)
                if let bytes { #expect(try Data(contentsOf: file) == bytes, "\(kind): changed") }
                if kind == "missing" {
                    // As the other commands say it.
                    #expect(outcome.standardError == "restorectl: error: No archive store exists at '\(path)'.\n")
                }
                if kind.hasSuffix("symlink") {
                    // A link is refused as a link, whether or not there is a file where it points.
                    #expect(
                        outcome.standardError
                            == "restorectl: error: The store path '\(path)' is a symbolic link; stores are never opened through one.\n",
                        "\(kind): \(outcome.standardError)")
                }
            } else {
                #expect(outcome.status == 0, "\(kind): \(outcome.standardError)")
                let check = try run(["check", path])
                #expect(check.status == 0, "\(kind): \(check.standardOutput)\(check.standardError)")
                let info = try run(["info", path, "--format", "json"]).jsonObject()
                #expect((info["archives"] as? [Any])?.isEmpty == true, "\(kind)")
            }
        }
    }

    /// A killed app's store read by a process that runs out of file descriptors as SQLite
    /// opens the log's index (`ulimit -n`, from too few to plenty): the opening took the failure
    /// for an index removed under it, looked again four times, and said "the store changed
    /// under 5 reads in a row (an app is writing it); try again" of a store nothing wrote.
    /// SQLite's own error is said now (exit status 2); with enough descriptors, `info` reads
    /// the store.
    @Test func aProcessOutOfFileDescriptorsIsToldSo() throws {
        try withTemporaryStorePath { path in
            #expect(try run(["demo", "--step", "background-kill", "--db", path]).wasSignalled)
            #expect(fileExists(path + "-shm") && framesInWriteAheadLog(path + "-wal") > 0)
            var outcomes: [(limit: Int, outcome: ProcessOutcome)] = []
            for limit in 4...32 {
                let outcome = try runThroughShell(["info", path], before: "ulimit -n \(limit) &&")
                #expect(!outcome.standardError.contains("changed under"), "\(limit): \(outcome.standardError)")
                outcomes.append((limit, outcome))
            }
            let outOfDescriptors = outcomes.filter {
                $0.outcome.standardError.contains("SQLite error 14: unable to open database file (Too many open files)")
            }
            #expect(!outOfDescriptors.isEmpty, "some limit runs out as the index is opened")
            for (limit, outcome) in outOfDescriptors { #expect(outcome.status == 2, "\(limit)") }
            #expect(outcomes.last?.outcome.status == 0, "\(outcomes.last?.outcome.standardError ?? "")")
        }
    }

    /// A killed app's write-ahead log without its index (`-shm`: removed, or not copied with
    /// the store, as some backups leave it): SQLite reads such a log only through a
    /// connection that writes the index, and `restorectl` reads the file and the log replayed
    /// in memory instead, as the app's next open recovers them. Every command that inspects
    /// prints what it prints once the app's store has opened and recovered the log (the same
    /// status, output and errors), and makes or changes no file but the one `export` is told
    /// to write; `discard`, which writes, recovers the log as the app does.
    @Test func aLogWithoutItsIndexIsReadAsTheAppWillRecoverIt() throws {
        try withTemporaryStorePath { path in
            let killed = try run(["demo", "--step", "background-kill", "--db", path])
            #expect(killed.wasSignalled, "the step's child kills itself in the background")
            #expect(framesInWriteAheadLog(path + "-wal") > 0)
            try FileManager.default.removeItem(atPath: path + "-shm")
            let directory = URL(filePath: path).deletingLastPathComponent().path
            let listing = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
            let (file, log) = (fileBytes(path), fileBytes(path + "-wal"))
            let inspecting = Self.commands.filter { $0[0] != "discard" }
            func outcomes() throws -> [String] {
                try inspecting.map { command in
                    let outcome = try run(Self.arguments(of: command, path: path))
                    let exported = command[0] == "export" ? String(decoding: fileBytes(path + ".json") ?? [], as: UTF8.self) : ""
                    try? FileManager.default.removeItem(atPath: path + ".json")
                    return "\(command[0]): \(outcome.status)\n\(outcome.standardOutput)\(outcome.standardError)\(exported)"
                }
            }
            let replayed = try outcomes()
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == listing)
            #expect(fileBytes(path) == file && fileBytes(path + "-wal") == log, "no file changed")
            #expect(replayed.first { $0.hasPrefix("tree: 0\n") } != nil, "\(replayed)")
            // The log grown to 40 GiB past its frames (a sparse file of zeros): read as it was.
            let length = try #require(log?.count)
            #expect(truncate(path + "-wal", 40 << 30) == 0)
            let tree = try run(["tree", path])
            let treeRead = try #require(replayed.first { $0.hasPrefix("tree: ") })
            #expect("tree: \(tree.status)\n\(tree.standardOutput)\(tree.standardError)" == treeRead)
            #expect(truncate(path + "-wal", off_t(length)) == 0 && fileBytes(path + "-wal") == log)

            let app = try ArchiveStore(path: path)
            #expect(fileExists(path + "-shm"), "the app's store rebuilt the index")
            let recovered = try outcomes()
            for (before, after) in zip(replayed, recovered) { #expect(before == after) }
            let generation = try #require(try app.snapshot()).header.generation
            #expect(recovered.contains { $0.contains("generation \(generation)") })
            let discard = try run(Self.arguments(of: try #require(Self.commands.first { $0[0] == "discard" }), path: path))
            #expect(discard.status == 0, "\(discard.standardError)")
        }
    }

    /// `command` (one of ``commands``) run on the store at `path`: `@` stands for it, and
    /// without one the path comes last.
    static func arguments(of command: [String], path: String) -> [String] {
        let arguments = command.map { $0.replacingOccurrences(of: "@", with: path) }
        return command.contains("@") ? arguments : arguments + [path]
    }

    static let commands: [[String]] = [
        ["info"], ["tree"], ["show", "@", "Tabs"], ["markers"], ["events"], ["report"], ["diff", "@", "--from", "1", "--to", "2"],
        ["check"], ["export", "@", "--output", "@.json"], ["discard", "@", "--archive", "main", "--reason", "x"],
    ]

    /// The bad inputs every command is tried on: nothing, a folder, files that are not a
    /// store or a damaged one, another program's database, a newer store, a symbolic link.
    static let badInputs = [
        "missing", "directory", "empty", "random", "text", "truncated", "damaged", "foreign", "newer-schema", "symlink",
        "dangling-symlink",
    ]

    /// Runs `body` with the bad input `kind` (one of ``badInputs``) at `path`, in a temporary
    /// `directory`.
    private func withBadInput(_ kind: String, _ body: (_ path: String, _ directory: String) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/input.sqlite"
            try makeBadInput(kind, at: path, in: directory)
            try body(path, directory)
        }
    }

    /// Puts the bad input `kind` at `path`, in `directory`.
    private func makeBadInput(_ kind: String, at path: String, in directory: String) throws {
        switch kind {
        case "missing": break
        case "directory": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case "empty": #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        case "random":
            #expect(FileManager.default.createFile(atPath: path, contents: Data((0..<8192).map { _ in UInt8.random(in: 0...255) })))
        case "text": #expect(FileManager.default.createFile(atPath: path, contents: Data("not a database\n".utf8)))
        case "truncated":
            #expect(try run(["demo", "--step", "save", "--db", path]).status == 0)
            let bytes = try Data(contentsOf: URL(filePath: path))
            try bytes.prefix(bytes.count / 2).write(to: URL(filePath: path))
        case "damaged":
            // The page holding the archive table overwritten with random bytes: every
            // command reads it.
            #expect(try run(["demo", "--step", "save", "--db", path]).status == 0)
            let damage = """
                import random, sqlite3
                c = sqlite3.connect('\(path)')
                page = c.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'archive'").fetchone()[0]
                size = c.execute("PRAGMA page_size").fetchone()[0]
                c.close()
                random.seed(7)
                with open('\(path)', 'r+b') as f:
                    f.seek((page - 1) * size); f.write(bytes(random.randrange(256) for _ in range(size)))
                """
            #expect(try runProcess("/usr/bin/env", ["python3", "-c", damage]).status == 0)
        case "foreign":
            let made = try runProcess(
                "/usr/bin/env", ["python3", "-c", "import sqlite3; c = sqlite3.connect('\(path)'); c.execute('create table t(x)'); c.commit()"])
            #expect(made.status == 0, "\(made.standardError)")
        case "newer-schema":
            try ArchiveStore(path: path).save([], header: SampleArchives.header)
            let made = try runProcess(
                "/usr/bin/env", ["python3", "-c", "import sqlite3; c = sqlite3.connect('\(path)'); c.execute('pragma user_version = 999'); c.commit()"])
            #expect(made.status == 0, "\(made.standardError)")
        case "dangling-symlink":
            // A link to where there is nothing: no store is made there either.
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: directory + "/nothing.sqlite")
        default:
            try ArchiveStore(path: directory + "/real.sqlite").save([], header: SampleArchives.header)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: directory + "/real.sqlite")
        }
    }

    @Test(arguments: Self.badInputs)
    func everyCommandOnBadInputFailsWithAShortMessage(kind: String) throws {
        try withBadInput(kind) { path, directory in
            let before = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
            for command in Self.commands {
                let arguments = Self.arguments(of: command, path: path)
                let outcome = try run(arguments)
                #expect(outcome.status != 0 && !outcome.wasSignalled, "\(kind) \(command[0]): status \(outcome.status)")
                if kind == "damaged" && command[0] == "check" {
                    // check lists what SQLite finds as problems, on stdout.
                    #expect(outcome.status == 1 && outcome.standardError.isEmpty, "\(outcome.standardError)")
                    #expect(outcome.standardOutput.contains("SQLite integrity check: "))
                    continue
                }
                let lines = outcome.standardError.split(separator: "\n")
                #expect((1...3).contains(lines.count), "\(kind) \(command[0]): \(outcome.standardError)")
                #expect(outcome.standardError.hasPrefix("restorectl: error: "), "\(kind) \(command[0])")
                if kind == "damaged" {
                    // discard looks for the archive as it opens the store, which names the file.
                    let expected = command[0] == "discard" ? "'\(path)' is a damaged store: " : "The store is damaged"
                    #expect(outcome.standardError.contains(expected), "\(command[0]): \(outcome.standardError)")
                } else if kind == "truncated" {
                    // Refused at open, as the other damaged files are, naming the file and the cut
                    // (SQLite says only "malformed").
                    #expect(
                        outcome.status == 2
                            && outcome.standardError.contains("'\(path)' is a damaged store: the file is cut short: its header counts "),
                        "\(command[0]): \(outcome.standardError)")
                } else {
                    // Refused at open: status 2, one line, nothing on stdout.
                    #expect(outcome.status == 2, "\(kind) \(command[0]): status \(outcome.status)")
                    #expect(lines.count == 1, "\(kind) \(command[0]): \(outcome.standardError)")
                    #expect(outcome.standardOutput.isEmpty, "\(kind) \(command[0])")
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == before)
        }
    }
}
