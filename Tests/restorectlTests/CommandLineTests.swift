import ArgumentParser
import Foundation
import RestorationArchive
import Testing
import TestSupport
@testable import restorectl

@Suite("restorectl")
struct CommandLineTests {
    let restorectl = builtProduct("restorectl")

    // MARK: In-process parsing

    @Test func parsesInfoWithItsOptions() throws {
        let command = try RestoreCtl.parseAsRoot(["info", "/tmp/x.sqlite", "--archive", "scene-1", "--format", "json"])
        let info = try #require(command as? InfoCommand)
        #expect(info.options.db == "/tmp/x.sqlite")
        #expect(info.options.archiveName == (try ArchiveName("scene-1")))
        #expect(info.output.format == .json)
    }

    /// What a bug report about a store quotes: the schema and format this build reads and
    /// writes, and the SQLite it runs (the library's tests hold each to the store's own).
    @Test func versionNamesTheSchemaTheFormatAndSQLite() throws {
        let outcome = try runProcess(restorectl, ["--version"])
        #expect(outcome.status == 0)
        let migrations = try FileManager.default.contentsOfDirectory(at: try packageRoot().appending(path: "Migrations"), includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
        #expect(
            outcome.standardOutput
                == "restorectl: store schema version \(migrations.count), archive format 1; SQLite \(ArchiveStore.sqliteVersion)\n")
        #expect(ArchiveStore.sqliteVersion.split(separator: ".").count == 3)
    }

    @Test func refusesBadOptionValues() {
        #expect(throws: (any Error).self) { try RestoreCtl.parseAsRoot(["info", "x", "--format", "yaml"]) }
        #expect(throws: (any Error).self) { try RestoreCtl.parseAsRoot(["info", "x", "--archive", "bad\u{1B}name"]) }
        #expect(throws: (any Error).self) { try RestoreCtl.parseAsRoot(["info"]) }
    }

    @Test func helpDescribesEveryCommandAndOption() {
        let root = RestoreCtl.helpMessage()
        #expect(root.contains("info") && root.contains("show") && root.contains("report") && root.contains("demo"))
        let report = RestoreCtl.helpMessage(for: ReportCommand.self)
        #expect(report.contains("--all") && report.contains("--archive") && report.contains("skipped"))
        let show = RestoreCtl.helpMessage(for: ShowCommand.self)
        for text in ["<db>", "<path>", "--generation", "--archive", "--format", "restoration path"] {
            #expect(show.contains(text), "show help lacks \(text)")
        }
        let info = RestoreCtl.helpMessage(for: InfoCommand.self)
        for text in ["<db>", "--archive", "--format", "The path of the store", "Output format"] {
            #expect(info.contains(text), "info help lacks \(text)")
        }
        let demo = RestoreCtl.helpMessage(for: DemoCommand.self)
        #expect(demo.contains("--db") && demo.contains("per-user"))
    }

    // MARK: The built binary, end to end

    /// The story's launches run under the `--crash-policy` given, and its fifth says what that
    /// policy does: the story ignored it (every launch under `discard`, the fifth headed
    /// "crash policy: discard"), so that `demo --crash-policy fall-back` showed nothing of
    /// falling back.
    @Test(arguments: [
        ("discard", "invalidates that generation (crash policy: discard)",
         "not restored, because generation 2 was invalidated: the app died while restoring it."),
        ("fall-back", "then restores the newest one that once restored cleanly (crash policy: fall-back)",
         "restored 12 of 12 screens from generation 1."),
        ("retry:2", "tries that generation again, its attempt 2 of 2 (crash policy: retry:2)",
         "restored 12 of 12 screens from generation 2."),
        ("retry:1", "invalidates that generation, its one attempt spent (crash policy: retry:1)",
         "not restored, because generation 2 was invalidated: the app died while restoring it."),
        ("foreground", "after a death in the foreground (crash policy: foreground)",
         "not restored, because generation 2 was invalidated: the app died in the foreground"),
    ])
    func demoTellsItsStoryUnderTheCrashPolicyGiven(policy: String, heading: String, outcome: String) throws {
        try withTemporaryStorePath { path in
            let demo = try runProcess(restorectl, ["demo", path, "--crash-policy", policy])
            #expect(demo.status == 0, "\(demo.standardError)")
            let fifth = try #require(
                demo.standardOutput.split(separator: "\n\n").first { $0.hasPrefix("5. ") }, "\(demo.standardOutput)")
            let lines = fifth.split(separator: "\n")
            #expect(lines.first?.hasPrefix("5. The launch after it finds the crash marker and ") == true)
            #expect(lines.first?.hasSuffix(heading + ":") == true, "\(fifth)")
            #expect(lines.dropFirst().first?.contains(outcome) == true, "\(fifth)")
        }
    }

    @Test func demoThenInfoShowsTheArchive() throws {
        try withTemporaryStorePath { path in
            let demo = try runProcess(restorectl, ["demo", "--db", path])
            #expect(demo.status == 0, "\(demo.standardError)")
            #expect(demo.standardOutput.contains("restorectl info \(path)"))
            for line in [
                "Launch (first launch): nothing to restore.", "full save, 12 of 12 nodes written → generation 1",
                "The system kills the app in the background (SIGKILL)",
                "Launch (the previous launch ended in the background): restored 12 of 12 screens from generation 1.",
                "Launch (the previous launch died in the foreground, after willFinishLaunching): not restored",
                "incremental save, 1 of 12 nodes written → generation 2", "The child process was killed by SIGKILL.",
                "not restored, because generation 2 was invalidated: the app died while restoring it",
                "its saved state is discarded", "full save, 12 of 12 nodes written → generation 3",
            ] {
                #expect(demo.standardOutput.contains(line), "the demo's story lacks \(line)")
            }

            let info = try runProcess(restorectl, ["info", path])
            #expect(info.status == 0, "\(info.standardError)")
            #expect(info.standardOutput.contains("Archive main"))
            #expect(info.standardOutput.contains("generation:    3"))
            #expect(info.standardOutput.contains("MyAppVersion = \"11.0\" (string)"))
            #expect(info.standardOutput.contains("12 nodes"))
            #expect(info.standardError.isEmpty)

            let json = try runProcess(restorectl, ["info", path, "--format", "json"])
            #expect(json.status == 0)
            let document = try json.jsonObject()
            let archives = try #require(document["archives"] as? [[String: Any]])
            let header = try #require(archives.first?["header"] as? [String: Any])
            #expect(archives.first?["name"] as? String == "main")
            #expect(header["node_count"] as? Int == 12)
            #expect(header["generation"] as? Int == 3)
            // The explicit quit discarded generations 1 and 2.
            #expect((archives.first?["generations"] as? [Any])?.count == 1)
            // The demo's tree holds the seed apps' screens, and no login screen.
            let store = try ArchiveStore(path: path, mode: .readOnly)
            let paths = try #require(try store.snapshot()).nodes.map(\.path.description)
            #expect(paths.contains { $0.hasSuffix("MenuItemDetail") })
            #expect(paths.contains { $0.hasSuffix("MILK_webview") })
            #expect(!paths.contains { $0.localizedCaseInsensitiveContains("login") || $0.contains("Password") })
            #expect(paths.count == 12)
            // The reports of the story's launches are kept: the last one found the crashed
            // generation invalidated; the first relaunch restored every node.
            let reports = try store.restoreReports()
            #expect(reports.first?.outcome == .refused(reason: "generation 2 was invalidated: the app died while restoring it"))
            #expect(reports.contains { $0.outcome == .restored && $0.restoredCount == 12 && $0.notRestored.isEmpty })
            #expect(paths.contains { $0.split(separator: "/").count >= 3 })
        }
    }

    /// The story run again on its store (as on the default path) starts afresh: its first
    /// launch restored what the last run left, under "1. First launch".
    @Test func theStoryRunAgainStartsAfresh() throws {
        try withTemporaryStorePath { path in
            #expect(try runProcess(restorectl, ["demo", path]).status == 0)
            let again = try runProcess(restorectl, ["demo", path])
            #expect(again.status == 0, "\(again.standardError)")
            let lines = again.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let first = try #require(lines.firstIndex { $0.hasPrefix("1. ") })
            #expect(lines[2].hasPrefix("0. The store holds the state of an earlier session"), "\(lines)")
            #expect(lines[first].hasPrefix("1. Launch with nothing to restore"))
            #expect(lines[first + 1] == "Launch (the previous launch terminated normally): nothing to restore.")
            #expect(lines[first + 3] == "The app moves to the background: full save, 12 of 12 nodes written → generation 4.")
        }
    }

    /// The demo takes its store as every other command does, as an argument, or with `--db`
    /// as before; not both.
    @Test func theDemoTakesItsStoreAsAnArgument() throws {
        try withTemporaryStorePath { path in
            let saved = try runProcess(restorectl, ["demo", "--step", "save", path])
            #expect(saved.status == 0, "\(saved.standardError)")
            let restored = try runProcess(restorectl, ["demo", path, "--step", "restore"])
            #expect(restored.status == 0, "\(restored.standardError)")
            #expect(restored.standardOutput.contains("restored 12 of 12 screens from generation 1"), "\(restored.standardOutput)")
            let both = try runProcess(restorectl, ["demo", path, "--db", path + "-other"])
            #expect(both.status == 64)
            #expect(both.standardError.contains("give the store once: as <db> or with --db, not both"))
            #expect(!FileManager.default.fileExists(atPath: path + "-other"))
        }
    }

    /// A path that is not UTF-8 (a folder named `café` in Latin-1) cannot be held by a
    /// `String` as it is: taken with U+FFFD in place of its byte, `info` said no store exists
    /// at a store that does, and `demo` created another folder beside the one named. Refused
    /// as bad usage now, naming the argument, and nothing is created.
    @Test func anArgumentThatIsNotUTF8IsRefused() throws {
        try withTemporaryDirectory { directory in
            #expect(try runProcess(restorectl, ["demo", "--step", "save", directory + "/store.sqlite"]).status == 0)
            // The shell's printf makes the byte: an argument given by Swift is always UTF-8.
            let latin1 = #"folder=$(printf '%s/caf\351' "$1"); "#
            let made = try runProcess(
                "/bin/sh", ["-c", latin1 + #"mkdir "$folder" && cp "$1/store.sqlite" "$folder/""#, "sh", directory])
            #expect(made.status == 0, "\(made.standardError)")
            for (command, argument) in [
                (#""$0" info "$folder/store.sqlite""#, "argument 2 ('\(directory)/caf\u{FFFD}/store.sqlite')"),
                (#""$0" demo --step save "$folder/new.sqlite""#, "argument 4 ('\(directory)/caf\u{FFFD}/new.sqlite')"),
            ] {
                let outcome = try runProcess("/bin/sh", ["-c", latin1 + command, restorectl, directory])
                #expect(outcome.status == 64, "\(command): \(outcome.standardError)")
                #expect(outcome.standardError.hasPrefix("restorectl: error: \(argument) is not UTF-8"), "\(outcome.standardError)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 2, "no other folder made")
        }
    }

    /// The commands the demo suggests give the shell back the store's path. A quote followed by
    /// a combining mark or a variation selector is one character, not "'": replaced by
    /// character, it was left bare inside the quotes and ended the shell's word there.
    @Test(arguments: ["it's.sqlite", "a'\u{301}b.sqlite", "'\u{FE0F}", "x y'' z", "caf\u{E9} 'n'"])
    func theDemoQuotesItsPathForTheShell(_ path: String) throws {
        let quoted = DemoCommand.shellQuoted("/tmp/" + path)
        let echoed = try runProcess("/bin/sh", ["-c", "printf %s " + quoted])
        #expect(echoed.status == 0, "\(echoed.standardError)")
        #expect(Array(echoed.standardOutput.utf8) == Array(("/tmp/" + path).utf8), "\(quoted)")
    }

    /// A launch that fails in its child process (here: another connection holds the store's
    /// write lock for longer than the busy timeout) ends the story there, with its error
    /// once: the story used to go on and meet it again. The error is said in the words of
    /// the commands that write (it was SQLite's "SQLite error 5: database is locked — while
    /// executing `BEGIN IMMEDIATE`"), in the child and in a story that begins by quitting
    /// an earlier session.
    @Test func theDemoStopsAtAChildLaunchThatFails() throws {
        try withTemporaryStorePath { path in
            _ = try ArchiveStore(path: path)  // empty: the story begins with its child launch
            let busy =
                "restorectl: error: '\(path)' is busy: another connection held its write lock for more than 5 seconds "
                + "(the app saving?); try again"
            let held = try withSQLiteHolder(of: path, having: "BEGIN IMMEDIATE") {
                let demo = try runProcess(restorectl, ["demo", "--db", path])
                #expect(demo.status == 1)
                #expect(demo.standardOutput.contains("1. First launch"))
                #expect(!demo.standardOutput.contains("2. Next launch"), "\(demo.standardOutput)")
                let errors = demo.standardError.split(separator: "\n").map(String.init)
                #expect(errors == [busy, "restorectl: error: The demo stops: the launch in the child process exited with status 1."])
            }
            #expect(held, "the lock was never held")

            #expect(try runProcess(restorectl, ["demo", path]).status == 0)
            let again = try withSQLiteHolder(of: path, having: "BEGIN IMMEDIATE") {
                let demo = try runProcess(restorectl, ["demo", path])
                #expect(demo.status == 1)
                #expect(demo.standardOutput.contains("0. The store holds the state of an earlier session"))
                #expect(demo.standardError == busy + "\n")
            }
            #expect(again, "the lock was never held")
        }
    }

    /// A location where the store cannot be created (its folder cannot be made) is said before
    /// the story begins, in one line: the story printed its first step, the child launch's
    /// error, then that the child had failed.
    @Test func theDemosStoryRefusesALocationWhereNoStoreCanBeCreated() throws {
        try withTemporaryDirectory { directory in
            let file = directory + "/a-file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
            let demo = try runProcess(restorectl, ["demo", "--db", file + "/store.sqlite"])
            #expect(demo.status == 2)
            #expect(demo.standardOutput == "")
            #expect(
                demo.standardError.hasPrefix("restorectl: error: mkdir failed for '\(file)': Not a directory")
                    && demo.standardError.filter { $0 == "\n" }.count == 1,
                "\(demo.standardError)")
        }
    }

    /// The example app uses its store as an app should: one it cannot use, whether it finds
    /// out at opening (a file cut short) or at its save (a malformed page), is erased, and the
    /// launch goes on afresh. Another program's database is never erased, nor is a file that
    /// is not a store at all (see `theDemoNeverErasesAFileThatIsNotAStore`).
    @Test(arguments: ["cut-short", "malformed-page"])
    func theDemoErasesAStoreItCannotUseAndStartsAfresh(damage: String) throws {
        try withTemporaryStorePath { path in
            #expect(try runProcess(restorectl, ["demo", "--step", "save", "--db", path]).status == 0)
            if damage == "cut-short" {
                #expect(truncate(path, 100) == 0)
            } else {
                // The pages after the schema's: the store opens, and the save fails.
                try overwrite(path, from: 2 * 4096, with: (0..<6 * 4096).map { UInt8(truncatingIfNeeded: $0 &* 131) })
            }
            let damaged = try runProcess(restorectl, ["demo", "--step", "save", "--db", path])
            #expect(damaged.status == 0, "\(damaged.standardError)")
            // Found out at opening, or once the launch has begun.
            let firstLine = damage == "cut-short" ? "The app cannot use its store. The store is damaged: " : "Launch ("
            #expect(damaged.standardOutput.hasPrefix(firstLine), "\(damaged.standardOutput)")
            #expect(damaged.standardOutput.contains("The app cannot use its store. The store is damaged: "))
            #expect(damaged.standardOutput.contains(". It erases it and starts afresh.\nLaunch (first launch): nothing to restore."))
            #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.header.generation == 1)
        }
        try withTemporaryDirectory { directory in
            let path = directory + "/contacts.sqlite"
            let create = "import sqlite3; c = sqlite3.connect('\(path)'); c.execute('create table contacts(name)'); c.commit()"
            #expect(try runProcess("/usr/bin/env", ["python3", "-c", create]).status == 0)
            let before = fileBytes(path)
            let refused = try runProcess(restorectl, ["demo", "--step", "save", "--db", path])
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("another program"), "\(refused.standardError)")
            #expect(refused.standardError.contains("give the demo another path"), "\(refused.standardError)")
            #expect(fileBytes(path) == before)
        }
    }

    /// `--db` naming a file of the user's by mistake (a text file, a picture, a file cut to
    /// a few bytes) replaced it with a new store: the demo took it for a store it could not
    /// use, and erased it. It now says the file is not an archive store, and leaves it as it
    /// was.
    @Test(arguments: ["notes.txt", "picture.jpg", "short"])
    func theDemoNeverErasesAFileThatIsNotAStore(name: String) throws {
        let bytes: [UInt8] =
            switch name {
            case "notes.txt": Array("my notes, which nothing else keeps\n".utf8)
            case "picture.jpg": [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0, count: 4096)
            default: Array("SQLite".utf8)
            }
        try withTemporaryDirectory { directory in
            let path = directory + "/" + name
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            let refused = try runProcess(restorectl, ["demo", "--step", "save", "--db", path])
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("is not an archive store"), "\(refused.standardError)")
            #expect(refused.standardError.contains("restorectl erase"), "\(refused.standardError)")
            #expect(!refused.standardOutput.contains("erases it"), "\(refused.standardOutput)")
            let unchanged = fileBytes(path) == bytes
            #expect(unchanged, "the file was written over")
        }
    }

    /// The whole story refuses a file that is not an archive store (here a named pipe) before
    /// it begins, in one line: it printed its first step, the refusal of the child process
    /// that plays it, then that the child had failed.
    @Test func theDemosStoryRefusesAFileThatIsNotAStoreBeforeItBegins() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/pipe"
            #expect(mkfifo(path, 0o600) == 0)
            let refused = try runProcess(restorectl, ["demo", path])
            #expect(refused.status == 1)
            #expect(refused.standardOutput == "")
            #expect(
                refused.standardError.hasPrefix("restorectl: error: '\(path)' is not an archive store: it is not a regular file.")
                    && refused.standardError.filter { $0 == "\n" }.count == 1,
                "\(refused.standardError)")
        }
    }

    @Test func showRendersANodeAsATypedTree() throws {
        try withTemporaryStorePath { path in
            // Two launches that save: the second adds one more latte to the restored order.
            #expect(try runProcess(restorectl, ["demo", "--step", "save", "--db", path]).status == 0)
            #expect(try runProcess(restorectl, ["demo", "--step", "save", "--db", path]).status == 0)
            let text = try runProcess(restorectl, ["show", path, "Tabs/OrderNavigation/Order"])
            #expect(text.status == 0, "\(text.standardError)")
            for line in [
                "class:     OrderScreen, version 0", "checksum:  ok", "id: uuid E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                "price: double 4.5", "quantity: int 3", "note: string \"Extra shot, no sugar\"",
                "options: array (2)",
            ] {
                #expect(text.standardOutput.contains(line), "show lacks \(line)")
            }
            let json = try runProcess(restorectl, ["show", path, "Tabs/MenuNavigation/MenuItemDetail", "--format", "json"])
            #expect(json.status == 0)
            let document = try json.jsonObject()
            #expect(document["class_version"] as? Int == 2)
            let state = try #require(document["state"] as? [String: Any])
            let item = try #require(state["menuItem"] as? [String: Any])
            #expect(item["type"] as? String == "container")
            let price = try #require((item["entries"] as? [String: Any])?["price"] as? [String: Any])
            #expect(price["type"] as? String == "double")
            #expect(price["value"] as? Double == 4.5)
            let quantity = try #require(state["quantity"] as? [String: Any])
            #expect(quantity["type"] as? String == "int")
            #expect(quantity["value"] as? Int == 1)
            // An older retained generation, and a path that is not there.
            let older = try runProcess(restorectl, ["show", path, "Tabs/OrderNavigation/Order", "--generation", "1"])
            #expect(older.standardOutput.contains("quantity: int 2"))
            let missing = try runProcess(restorectl, ["show", path, "Tabs/Nowhere"])
            #expect(missing.status == 1)
            #expect(missing.standardError.split(separator: "\n").count == 1)
        }
    }

    /// A reason is blank when every scalar in it is white space: a space carrying a combining
    /// mark shows the mark, and was called blank ("no reason given"; `discard` refused it).
    @Test func aReasonIsBlankOnlyWhenEveryScalarIsWhiteSpace() {
        for blank in ["", " ", "\t\n", "\u{3000}\u{A0}"] { #expect(TerminalText.isBlank(blank), "\(Array(blank.unicodeScalars))") }
        for shown in [" \u{301}", "\u{301}", " x ", "\u{200B}"] { #expect(!TerminalText.isBlank(shown), "\(Array(shown.unicodeScalars))") }
    }

    /// An app's restore gate may refuse with a blank reason: `report` and `events` say so
    /// rather than printing nothing after "refused:".
    @Test func aRefusalWithABlankReasonSaysSo() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            let engine = try RestorationEngine(
                store: store, app: SampleArchives.app,
                registry: RestorationRegistry())
            engine.restoreGate = { _, _ in .refuse(reason: " ") }
            #expect(try engine.restore([]).report.outcome == .refused(reason: " "))

            let report = try runProcess(restorectl, ["report", path])
            #expect(report.status == 0, "\(report.standardError)")
            #expect(report.standardOutput.contains("outcome:     refused: no reason given\n"), "\(report.standardOutput)")
            let events = try runProcess(restorectl, ["events", path])
            #expect(events.standardOutput.contains("restored  archive main generation 1: refused: no reason given\n"), "\(events.standardOutput)")
            // The JSON keeps the reason as the app gave it.
            let json = try runProcess(restorectl, ["report", path, "--format", "json"])
            let document = try json.jsonObject()
            let outcome = (document["reports"] as? [[String: Any]])?.first?["outcome"] as? [String: Any]
            #expect(outcome?["kind"] as? String == "refused")
            #expect(outcome?["reason"] as? String == " ")
        }
    }

    @Test func reportShowsEachNodeOutcomeWithEscapedText() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let evil = "Evil\u{1B}[2J"
            try store.save([
                ArchivedNode(path: try RestorationPath("Root"), className: evil, state: try StateEncoder().encodedBlob()),
            ], header: SampleArchives.header)
            let engine = try RestorationEngine(
                store: store, app: SampleArchives.app,
                registry: RestorationRegistry())
            _ = try engine.restore([])

            let text = try runProcess(restorectl, ["report", path])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(text.standardOutput.contains("outcome:     restored 0 of 1 nodes"))
            #expect(text.standardOutput.contains(
                "skipped  Root (Evil\\u{1B}[2J v0): no restoration class, fallback or existing object provided it"))
            #expect(!text.standardOutput.contains("\u{1B}"))

            let json = try runProcess(restorectl, ["report", path, "--archive", "main", "--all", "--format", "json"])
            #expect(json.status == 0)
            let document = try json.jsonObject()
            let reports = try #require(document["reports"] as? [[String: Any]])
            #expect(reports.count == 1)
            let node = try #require((reports.first?["nodes"] as? [[String: Any]])?.first)
            #expect(node["outcome"] as? String == "skipped")
            #expect(node["reason_kind"] as? String == "no_restoration_class")
            #expect(node["class_name"] as? String == evil)
            #expect((reports.first?["outcome"] as? [String: Any])?["kind"] as? String == "restored")

            let unknown = try runProcess(restorectl, ["report", path, "--archive", "scene-9"])
            #expect(unknown.status == 1)
            #expect(unknown.standardError == "restorectl: error: No archive named 'scene-9': it was never saved, or it was discarded and the store has since forgotten it.\n")
        }
    }

    @Test func infoOnAnUnknownArchiveNamesIt() throws {
        try withTemporaryStorePath { path in
            #expect(try runProcess(restorectl, ["demo", "--db", path]).status == 0)
            let outcome = try runProcess(restorectl, ["info", path, "--archive", "scene-9"])
            #expect(outcome.status == 1)
            #expect(outcome.standardOutput.isEmpty)
            #expect(outcome.standardError == "restorectl: error: No archive named 'scene-9': it was never saved, or it was discarded and the store has since forgotten it.\n")
        }
    }

    /// Every command that reads one archive says the same of one the store does not have, of
    /// one discarded, and of a path not in it. `tree` and `export` said "archive 'scene-9' has
    /// no saved generation", `diff` "Archive 'scene-9' does not retain generation 1", `show`
    /// "archive 'scene-9' has no node at 'Root'".
    @Test func commandsReadingOneArchiveExplainWhyItHasNothingToShow() throws {
        try withTemporaryStorePath { path in
            #expect(try runProcess(restorectl, ["demo", "--db", path]).status == 0)
            let unknown = [
                ["tree", path], ["show", path, "Root"], ["diff", path, "--from", "1", "--to", "2"],
                ["export", path, "--output", "-"], ["info", path], ["report", path], ["events", path],
            ]
            for arguments in unknown {
                let outcome = try runProcess(restorectl, arguments + ["--archive", "scene-9"])
                #expect(outcome.status == 1, "\(arguments)")
                #expect(outcome.standardOutput.isEmpty, "\(arguments)")
                #expect(outcome.standardError == "restorectl: error: No archive named 'scene-9': it was never saved, or it was discarded and the store has since forgotten it.\n", "\(arguments)")
            }
            let noNode = try runProcess(restorectl, ["show", path, "Root/Nowhere"])
            #expect(noNode.status == 1)
            #expect(noNode.standardError == "restorectl: error: Archive 'main' has no node at 'Root/Nowhere'.\n")

            try ArchiveStore(path: path).discard(reason: "the user closed the window")
            for arguments in [["tree", path], ["show", path, "Root"], ["export", path, "--output", "-"]] {
                let outcome = try runProcess(restorectl, arguments)
                #expect(outcome.status == 1, "\(arguments)")
                #expect(
                    outcome.standardError
                        == "restorectl: error: Archive 'main' was discarded (the user closed the window): it retains no generation.\n",
                    "\(arguments)")
            }
        }
    }

    @Test func showReportsAnUndecodableBlobWithoutCrashing() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save(
                [ArchivedNode(path: try RestorationPath("Broken"), className: "Broken", state: [0x07, 0xFF, 0x00])],
                header: SampleArchives.header)
            let outcome = try runProcess(restorectl, ["show", path, "Broken"])
            #expect(outcome.status == 1)
            #expect(!outcome.wasSignalled)
            #expect(outcome.standardOutput.contains("cannot be decoded: The blob is in format version 7"))
        }
    }

    @Test func infoEscapesControlAndBidiCharactersFromTheArchive() throws {
        try withTemporaryStorePath { path in
            let hostile = "1.0\u{1B}]0;pwned\u{07}\u{9B}2J\u{202E}txt.exe\u{0}\u{2028}\u{2029}"
            // What no output may hold raw: each character of `hostile` that is not text.
            let controls = ["\u{1B}", "\u{07}", "\u{9B}", "\u{202E}", "\u{0}", "\u{2028}", "\u{2029}"]
            let store = try ArchiveStore(path: path)
            try store.save(
                [], header: SaveHeader(appVersion: hostile, appBuild: "1", appValues: ["k\u{1B}": .string(hostile)]),
                in: try ArchiveName("scene\u{202E}"))
            let coder = StateEncoder()
            try coder.encode(hostile, forKey: "text\u{9B}")
            try coder.encodeReference(to: try RestorationPath("A\u{1B}[2J"), forKey: "ref")
            try store.save(
                [ArchivedNode(path: try RestorationPath("Screen\u{202E}"), className: "Class\u{7}", state: try coder.encodedBlob())],
                header: SampleArchives.header)
            let show = try runProcess(restorectl, ["show", path, "Screen\u{202E}"])
            #expect(show.status == 0, "\(show.standardError)")
            #expect(show.standardOutput.contains("text\\u{9B}: string"))
            for raw in controls {
                #expect(!show.standardOutput.contains(raw))
            }
            let info = try runProcess(restorectl, ["info", path])
            #expect(info.status == 0)
            for raw in controls {
                #expect(!info.standardOutput.contains(raw), "raw U+\(String(raw.unicodeScalars.first!.value, radix: 16)) printed")
            }
            #expect(info.standardOutput.contains("\\u{1B}]0;pwned\\u{7}\\u{9B}2J\\u{202E}txt.exe\\u{0}\\u{2028}\\u{2029}"))
            let json = try runProcess(restorectl, ["info", path, "--format", "json"])
            #expect(json.status == 0)
            for raw in controls {
                #expect(!json.standardOutput.contains(raw))
            }
            let document = try json.jsonObject()
            let archive = try #require(
                (document["archives"] as? [[String: Any]])?.first { $0["name"] as? String == "scene\u{202E}" })
            #expect(archive["name"] as? String == "scene\u{202E}")
            #expect((archive["header"] as? [String: Any])?["app_version"] as? String == hostile)
            // `check` names a damaged node by its path, escaped as well.
            let tampered = try runSQLite(on: path, ["UPDATE node SET state = X'01' WHERE path = 'Screen' || char(8238)"])
            #expect(tampered.status == 0, "\(tampered.standardError)")
            let check = try runProcess(restorectl, ["check", path])
            #expect(check.status == 1 && check.standardOutput.contains("node 'Screen\\u{202E}': "), "\(check.standardOutput)")
            for raw in controls {
                #expect(!check.standardOutput.contains(raw))
            }
        }
    }
}
