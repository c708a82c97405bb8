import Foundation
@testable import RestorationArchive
import Testing
import TestSupport
@testable import restorectl

/// What `restorectl` prints for the changes, values and outcomes the other tests' stores never
/// hold (a coverage run found each of these branches untested): nodes and keys added and
/// removed in a `diff`, every kind of value, every outcome of a restoration and of a node, a
/// restoration still running or retried, how a launch ended, a store without archives, and
/// quotes and backslashes.
@Suite("restorectl: the form of each change, value and outcome")
struct OutputFormTests {
    let restorectl = builtProduct("restorectl")

    private func run(_ arguments: [String]) throws -> ProcessOutcome { try runProcess(restorectl, arguments) }

    /// The archives `info --format json` lists.
    private func infoArchives(_ path: String) throws -> [[String: Any]] {
        try #require(try run(["info", path, "--format", "json"]).jsonObject()["archives"] as? [[String: Any]])
    }

    private func node(
        _ path: String, _ className: String, version: Int = 1, order: Int = 0, state: [UInt8]? = nil
    ) throws -> ArchivedNode {
        ArchivedNode(
            path: try RestorationPath(parsing: path), className: className, classVersion: version, order: order,
            state: try state ?? StateValue.encode(["x": .int(1)]))
    }

    /// Each way a node can differ from one generation to the next, in text and JSON, and the
    /// same generations the other way round.
    @Test func diffNamesTheNodesAddedRemovedAndRewritten() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let root = try StateValue.encode(["x": .int(1), "gone": .bool(true)])
            try store.save(
                [
                    try node("Root", "Root", state: root), try node("Root/Gone", "Gone"),
                    try node("Root/Kept", "Old", order: 1),
                ], header: SampleArchives.header)
            try store.save(
                [
                    try node("Root", "Root", state: try StateValue.encode(["x": .int(2), "new": .null])),
                    try node("Root/Kept", "New", version: 2, order: 2, state: [1, 2, 3]), try node("Root/New", "Added"),
                ], header: SampleArchives.header)
            let text = try run(["diff", path, "--from", "1", "--to", "2"])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(
                text.standardOutput == """
                    Archive main: generation 1 → 2
                      changed Root (Root)
                               keys added: new
                               keys removed: gone
                               keys changed: x
                      removed Root/Gone (Gone)
                      changed Root/Kept (New)
                               class: Old → New
                               version: 1 → 2
                               order: 1 → 2
                               state: 10 → 3 bytes (cannot be decoded)
                      added   Root/New (Added)

                    """)
            let document = try run(["diff", path, "--from", "1", "--to", "2", "--format", "json"]).jsonObject()
            let changes = try #require(document["changes"] as? [[String: Any]])
            #expect(changes.map { $0["change"] as? String } == ["changed", "removed", "changed", "added"])
            #expect(changes.map { $0["path"] as? String } == ["Root", "Root/Gone", "Root/Kept", "Root/New"])
            #expect(changes.map { $0["class_name"] as? String } == ["Root", "Gone", "New", "Added"])
            #expect(changes.map { ($0["details"] as? [String])?.count } == [3, 0, 4, 0])
            // Backwards, what was added is removed.
            let back = try run(["diff", path, "--from", "2", "--to", "1"])
            #expect(back.status == 0, "\(back.standardError)")
            #expect(back.standardOutput.contains("  added   Root/Gone (Gone)\n  changed Root/Kept (Old)\n"))
            #expect(back.standardOutput.contains("           class: New → Old\n"))
            #expect(back.standardOutput.contains("           keys added: gone\n           keys removed: new\n"))
            #expect(back.standardOutput.hasSuffix("  removed Root/New (Added)\n"))
        }
    }

    /// Every kind of value, as `show` writes it in text and JSON (docs/cli.md), and a header's
    /// app values as `info` does: bytes as their length and first 32 bytes in hex (then "…",
    /// when there are more) and as base64 in JSON; a number that is not finite as `NaN`,
    /// `+Infinity` or `-Infinity` in text as in JSON, where the text said Swift's `nan` and
    /// `-inf`.
    @Test func valuesOfEachKindAreShownAsDocumented() throws {
        try withTemporaryStorePath { path in
            let header = SaveHeader(
                appVersion: "11.0", appBuild: "1024",
                appValues: ["flag": .bool(false), "ratio": .double(-.infinity), "blob": .bytes(Array(0..<40))])
            let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
            let state = try StateValue.encode([
                "absent": .null, "flag": .bool(true), "count": .int(-3), "big": .uint(.max), "scale": .float(.infinity),
                "ratio": .double(.nan), "name": .string("Latte"), "small": .bytes([1, 2, 3]), "large": .bytes(Array(0..<40)),
                "exact": .bytes(Array(0..<32)),
                "when": .date(Date(timeIntervalSince1970: 1_800_000_000.123)), "id": .uuid(uuid),
                "link": .url(try #require(URL(string: "https://example.com/a?b=c"))),
                "parent": .reference(try RestorationPath("Tabs", "Menu")), "list": .array([.int(1), .string("two")]),
                "nested": .container(["inner": .bool(false)]),
            ])
            try ArchiveStore(path: path).save([try node("Root", "Root", state: state)], header: header)
            let show = try run(["show", path, "Root"])
            #expect(show.status == 0, "\(show.standardError)")
            #expect(
                show.standardOutput.hasSuffix("""
                      state:
                        absent: null
                        big: uint 18446744073709551615
                        count: int -3
                        exact: bytes (32) 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
                        flag: bool true
                        id: uuid E621E1F8-C36C-495A-93FC-0C247A3E6E5F
                        large: bytes (40) 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f…
                        link: url https://example.com/a?b=c
                        list: array (2)
                          [0]: int 1
                          [1]: string "two"
                        name: string "Latte"
                        nested: container (1)
                          inner: bool false
                        parent: reference Tabs/Menu
                        ratio: double NaN
                        scale: float +Infinity
                        small: bytes (3) 010203
                        when: date 2027-01-15T08:00:00.123Z

                    """), "\(show.standardOutput)")
            let json = try run(["show", path, "Root", "--format", "json"])
            let values = try #require(try json.jsonObject()["state"] as? [String: [String: Any]])
            #expect(
                values.mapValues { $0["type"] as? String } == [
                    "absent": "null", "flag": "bool", "count": "int", "big": "uint", "scale": "float", "ratio": "double",
                    "name": "string", "small": "bytes", "large": "bytes", "exact": "bytes", "when": "date", "id": "uuid",
                    "link": "url", "parent": "reference", "list": "array", "nested": "container",
                ])
            #expect(values["flag"]?["value"] as? Bool == true && values["count"]?["value"] as? Int == -3)
            #expect(json.standardOutput.contains("\"value\" : 18446744073709551615"))
            #expect(values["ratio"]?["value"] as? String == "NaN" && values["scale"]?["value"] as? String == "+Infinity")
            #expect(values["large"]?["base64"] as? String == Data(Array(0..<40)).base64EncodedString())
            #expect(values["small"]?["base64"] as? String == "AQID")
            #expect(values["when"]?["value"] as? String == "2027-01-15T08:00:00.123Z")
            #expect(values["id"]?["value"] as? String == uuid.uuidString)
            #expect(values["link"]?["value"] as? String == "https://example.com/a?b=c")
            #expect(values["parent"]?["value"] as? String == "Tabs/Menu")
            let items = try #require(values["list"]?["items"] as? [[String: Any]])
            #expect(items.map { $0["type"] as? String } == ["int", "string"] && items.last?["value"] as? String == "two")
            let entries = try #require(values["nested"]?["entries"] as? [String: [String: Any]])
            #expect(entries["inner"]?["type"] as? String == "bool" && entries["inner"]?["value"] as? Bool == false)

            let info = try run(["info", path])
            #expect(info.status == 0, "\(info.standardError)")
            #expect(
                info.standardOutput.contains("""
                      app values:
                        blob = 40 bytes (bytes)
                        flag = false (bool)
                        ratio = -Infinity (double)

                    """), "\(info.standardOutput)")
            let archives = try infoArchives(path)
            let appValues = try #require(
                (archives.first?["header"] as? [String: Any])?["app_values"] as? [String: [String: Any]])
            #expect(appValues["flag"]?["type"] as? String == "bool" && appValues["flag"]?["value"] as? Bool == false)
            #expect(appValues["ratio"]?["type"] as? String == "double" && appValues["ratio"]?["value"] as? String == "-Infinity")
            #expect(appValues["blob"]?["type"] as? String == "bytes")
            #expect(appValues["blob"]?["base64"] as? String == Data(Array(0..<40)).base64EncodedString())
        }
    }

    /// A restoration that failed (the generation's header damaged) is kept as such, and
    /// `report` says why.
    @Test func reportShowsARestorationThatFailed() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save([try node("Root", "Root")], header: SampleArchives.header)
            let damage = try runSQLite(on: path, ["UPDATE generation SET app_version = '12.0'"])
            #expect(damage.status == 0, "\(damage.standardError)")
            let engine = try RestorationEngine(
                store: store, app: SampleArchives.app,
                registry: RestorationRegistry())
            let result = try engine.restore([])
            guard case .failed(let reason) = result.report.outcome else {
                Issue.record("expected a failed restoration, got \(result.report.outcome)")
                return
            }
            let text = try run(["report", path])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(text.standardOutput.contains("\n  outcome:     failed: \(reason)\n"), "\(text.standardOutput)")
            #expect(reason.contains("header does not match its checksum"))
            let reports = try #require(try run(["report", path, "--format", "json"]).jsonObject()["reports"] as? [[String: Any]])
            let outcome = try #require(reports.first?["outcome"] as? [String: Any])
            #expect(outcome["kind"] as? String == "failed" && outcome["reason"] as? String == reason)
        }
    }

    /// Every outcome of a restoration and every reason a node was not restored, under the names
    /// docs/cli.md gives them for scripts, and in words in text (`report`, `events`).
    @Test func reportNamesEveryOutcomeAndReasonAsDocumented() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save([try node("Root", "Root")], header: SampleArchives.header)
            let reasons = SampleArchives.everyRestoreReason
            var nodes = [RestoreReport.Node(path: try RestorationPath("Root"), className: "Root", classVersion: 1, outcome: .restored)]
            for (index, reason) in reasons.enumerated() {
                nodes.append(.init(
                    path: try RestorationPath("Root", "n\(index)"), className: "C\(index)", classVersion: 1,
                    outcome: index.isMultiple(of: 2) ? .skipped(reason) : .failed(reason)))
            }
            let date = Date(timeIntervalSince1970: 1_800_000_000)
            let reports = [
                RestoreReport(archive: .main, generation: nil, date: date, outcome: .nothingToRestore, nodes: []),
                RestoreReport(archive: .main, generation: nil, date: date + 1, outcome: .failed(reason: "damaged"), nodes: []),
                RestoreReport(archive: .main, generation: 1, date: date + 2, outcome: .refused(reason: "app version 10.0"), nodes: []),
                RestoreReport(archive: .main, generation: 1, date: date + 3, outcome: .restored, nodes: nodes),
            ]
            for report in reports { try store.recordRestoreReport(report) }

            let document = try run(["report", path, "--all", "--format", "json"]).jsonObject()
            let kept = try #require(document["reports"] as? [[String: Any]])
            #expect(
                kept.map { ($0["outcome"] as? [String: Any])?["kind"] as? String }
                    == ["restored", "refused", "failed", "nothing_to_restore"])
            #expect(kept.map { $0["generation"] as? Int } == [1, 1, nil, nil])
            let listed = try #require(kept.first?["nodes"] as? [[String: Any]])
            #expect(listed.map { $0["outcome"] as? String } == ["restored"] + (0..<8).map { $0.isMultiple(of: 2) ? "skipped" : "failed" })
            #expect(
                listed.dropFirst().map { $0["reason_kind"] as? String } == [
                    "no_restoration_class", "declined", "class_mismatch", "version_too_new", "decode_failed",
                    "parent_not_restored", "checksum_mismatch", "over_budget",
                ])
            #expect(listed.dropFirst().map { $0["reason"] as? String } == reasons.map(\.description))

            let text = try run(["report", path, "--all"])
            #expect(text.status == 0, "\(text.standardError)")
            for line in [
                "  outcome:     restored 1 of 9 nodes\n", "  outcome:     refused: app version 10.0\n",
                "  outcome:     failed: damaged\n", "  outcome:     nothing to restore\n",
                "  failed   Root/n1 (C1 v1): \(RestoreReport.Reason.declined.description)\n",
            ] {
                #expect(text.standardOutput.contains(line), "\(line)")
            }
            // The generation, of the two reports that have one.
            #expect(text.standardOutput.components(separatedBy: "\n  generation:  1\n").count == 3, "\(text.standardOutput)")
            let events = try run(["events", path])
            #expect(events.status == 0, "\(events.standardError)")
            #expect(events.standardOutput.contains("restored  archive main: nothing to restore\n"), "\(events.standardOutput)")
            #expect(events.standardOutput.contains("restored  archive main: failed: damaged\n"))
        }
    }

    /// Graphviz's strings: a quote or a backslash in an identifier or a class name would end
    /// the string or escape what follows; both are escaped.
    @Test func treeAsDOTEscapesQuotesAndBackslashes() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(
                [try node("Root", "Root"), try node("Root/say \"hi\\", "Class\"\\")], header: SampleArchives.header)
            let dot = try run(["tree", path, "--format", "dot"])
            #expect(dot.status == 0, "\(dot.standardError)")
            // As Graphviz reads them: \" a quote, \\ a backslash, \n a line break.
            let lines = dot.standardOutput.split(separator: "\n")
            #expect(lines.contains(#"  "Root/say \"hi\\" [label="say \"hi\\\nClass\"\\ v1, 10 bytes"];"#), "\(dot.standardOutput)")
            #expect(lines.contains(#"  "Root" -> "Root/say \"hi\\";"#))
        }
    }

    /// How the last launch ended, as the lifecycle events this process records say it: in the
    /// foreground while it runs, in the background, then terminated; in text and JSON.
    @Test func infoSaysALaunchRunsInTheForegroundThenThatItTerminated() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            for event in [LifecycleEvent.willFinishLaunching, .didFinishLaunching, .didBecomeActive] {
                try store.record(event)
            }
            let running = try run(["info", path])
            #expect(running.standardOutput.contains(", last event didBecomeActive at "), "\(running.standardOutput)")
            #expect(running.standardOutput.contains(": in the foreground, its process runs\n"))
            let foreground = try #require(try run(["info", path, "--format", "json"]).jsonObject()["last_launch"] as? [String: Any])
            #expect(foreground["ended"] as? String == "foreground" && foreground["process_running"] as? Bool == true)
            try store.record(.didEnterBackground)
            #expect(try run(["info", path]).standardOutput.contains(": ended in the background (state is meant to be restored)\n"))
            let background = try #require(try run(["info", path, "--format", "json"]).jsonObject()["last_launch"] as? [String: Any])
            #expect(background["ended"] as? String == "background" && background["last_event"] as? String == "didEnterBackground")
            try store.record(.willTerminate)
            let ended = try run(["info", path])
            #expect(ended.standardOutput.contains(", last event willTerminate at "), "\(ended.standardOutput)")
            #expect(ended.standardOutput.contains(": terminated normally\n"))
            let launch = try #require(try run(["info", path, "--format", "json"]).jsonObject()["last_launch"] as? [String: Any])
            #expect(launch["ended"] as? String == "terminated" && launch["last_event"] as? String == "willTerminate")
        }
    }

    /// A generation whose restorations died under `retry`, counted, then invalidated by a
    /// launch under `discard`, as `info` says them.
    @Test func infoCountsRestorationsThatDiedThenSaysTheGenerationIsInvalidated() throws {
        try withTemporaryStorePath { path in
            #expect(try run(["demo", path, "--step", "save"]).status == 0)
            for _ in 0..<2 {
                #expect(try run(["demo", path, "--step", "restore-crash", "--crash-policy", "retry:3"]).wasSignalled)
            }
            let retried = try run(["info", path])
            #expect(
                retried.standardOutput.contains("valid; 2 restorations begun since one completed, never restored cleanly\n"),
                "\(retried.standardOutput)")
            #expect(try run(["demo", path, "--step", "restore"]).status == 0)
            let invalidated = try run(["info", path])
            let reason = "the app died during each of its last 2 restorations"
            #expect(
                invalidated.standardOutput.contains(
                    try Regex("\n  state:         invalidated at [0-9T:.Z-]+: \(reason)\n")),
                "\(invalidated.standardOutput)")
            let state = try #require(try infoArchives(path).first?["state"] as? [String: Any])
            #expect(state["kind"] as? String == "invalidated" && state["reason"] as? String == reason)
        }
    }

    /// An object that keeps its restoration going (R10) until the test completes it.
    private final class Loading: Restorable {
        static let restorationClassName = "Loading"
        let restorationIdentifier: String? = "Loading"
        var pending: RestorationExtension?

        func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
            pending = context.extendRestoration()
        }
    }

    /// A restoration in progress in a process that runs (this one) is shown as such, not as
    /// one that died.
    @Test func markersShowARestorationStillInProgress() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try RestorationEngine(store: store, app: SampleArchives.app, registry: RestorationRegistry()).preserve([Loading()])
            let loading = Loading()
            let result = try RestorationEngine(store: store, app: SampleArchives.app, registry: RestorationRegistry())
                .restore([loading])
            #expect(!result.isComplete)
            let text = try run(["markers", path])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(
                text.standardOutput.contains("    process \(getpid()) runs: its restoration is probably still in progress\n"),
                "\(text.standardOutput)")
            let markers = try #require(try run(["markers", path, "--format", "json"]).jsonObject()["markers"] as? [[String: Any]])
            #expect(markers.count == 1 && markers.first?["process_running"] as? Bool == true)
            #expect(loading.pending?.complete() == true)
            #expect(try run(["markers", path]).standardOutput.contains("(no crash markers"))
        }
    }

    /// A store as an app's first launch leaves it (nothing saved, nothing recorded), then with
    /// an archive saved without app values, then with that archive discarded: each said as
    /// such, in text and JSON.
    @Test func aStoreWithNothingThenAnArchiveWithoutValuesThenDiscardedIsShownSo() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let empty = try run(["info", path])
            #expect(empty.status == 0, "\(empty.standardError)")
            #expect(empty.standardOutput.hasSuffix("  last launch:   none recorded\n  (no archives)\n"), "\(empty.standardOutput)")
            #expect(try infoArchives(path).isEmpty)
            #expect(try run(["events", path]).standardOutput == "Store \(path)\n  (no events)\n")

            try store.save([try node("Root", "Root")], header: SaveHeader(appVersion: "11.0", appBuild: "1024"))
            let saved = try run(["info", path]).standardOutput
            #expect(saved.contains("\n  app values:    (none)\n"), "\(saved)")
            // Nothing damaged: the lists of damage are left out, not empty.
            let document = try run(["info", path, "--format", "json"]).jsonObject()
            #expect(document.keys.contains("archives") && !document.keys.contains("damaged_archives"))
            let archive = try #require((document["archives"] as? [[String: Any]])?.first)
            #expect(archive.keys.contains("generations") && !archive.keys.contains("damaged_generations"))
            // No idiom: the platform alone, without a separator before nothing.
            #expect(saved.contains("\n  platform:      \(SaveHeader.currentPlatform)\n"))
            let missing = try run(["show", path, "Root/Gone", "--generation", "1"])
            #expect(missing.status == 1 && missing.standardError == "restorectl: error: Archive 'main' generation 1 has no node at 'Root/Gone'.\n")

            try store.discard(.main, reason: "the user quit the app")
            let discarded = try run(["info", path])
            #expect(
                discarded.standardOutput.contains(
                    try Regex("\n  state:         discarded at [0-9T:.Z-]+: the user quit the app\n")),
                "\(discarded.standardOutput)")
            // Its newest generation's number is kept; no generation is retained.
            #expect(discarded.standardOutput.contains("\n  generation:    1 (none retained)\n"))
            let state = try #require(try infoArchives(path).first?["state"] as? [String: Any])
            #expect(state["kind"] as? String == "discarded" && state["reason"] as? String == "the user quit the app")
            #expect((state["at"] as? String)?.hasSuffix("Z") == true)
        }
    }

    /// A backslash is escaped too, so that an escape in the output always means an escape:
    /// the text `\u{1B}` an app stored does not read as the control character it names.
    @Test func aBackslashIsShownEscapedSoThatAnEscapeIsAlwaysOne() throws {
        #expect(TerminalText.escaped("a\\u{1B}") == "a\\\\u{1B}")
        #expect(TerminalText.escaped("a\u{1B}") == "a\\u{1B}")
        #expect(TerminalText.escaped("a\\") == "a\\\\")
        try withTemporaryStorePath { path in
            let coder = StateEncoder()
            try coder.encode("typed \\u{1B}", forKey: "text")
            try coder.encode("real \u{1B}", forKey: "control")
            try ArchiveStore(path: path).save([try node("Root", "Root", state: try coder.encodedBlob())], header: SampleArchives.header)
            let show = try run(["show", path, "Root"])
            #expect(show.status == 0, "\(show.standardError)")
            #expect(show.standardOutput.contains("    text: string \"typed \\\\u{1B}\"\n"), "\(show.standardOutput)")
            #expect(show.standardOutput.contains("    control: string \"real \\u{1B}\"\n"))
        }
    }

    /// JSON writes each character that could act on a terminal or cannot be seen as `\u`
    /// escapes wherever it stands (first, last, next to another, beyond U+FFFF as two UTF-16
    /// units) and copies everything between them as it was, non-ASCII text included; a
    /// document of ASCII alone comes back as it is.
    @Test func jsonEscapesWhatCouldActOnATerminalWhereverItStands() throws {
        let cases: [(String, String)] = [
            ("\u{202E}abc", #"\u202eabc"#), ("abc\u{7F}", #"abc\u007f"#), ("\u{9B}\u{2028}\u{2029}", #"\u009b\u2028\u2029"#),
            ("é한😀\u{E0001}x\u{AD}", #"é한😀\udb40\udc01x\u00ad"#), ("\u{FEFF}", #"\ufeff"#),
            ("plain \\\"ASCII\" text", #"plain \\\"ASCII\" text"#), ("é한😀 ünïcode", "é한😀 ünïcode"),
        ]
        for (original, written) in cases {
            let json = try JSONOutput.render(["text": original])
            #expect(json == "{\n  \"text\" : \"\(written)\"\n}", "\(original.debugDescription)")
            let decoded = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]
            #expect(decoded == ["text": original])
        }
        try withTemporaryStorePath { path in
            let text = "\u{202E}first, 한국어 \u{2066}between\u{2069}, last\u{E007F}"
            let coder = StateEncoder()
            try coder.encode(text, forKey: "text")
            try ArchiveStore(path: path).save([try node("Root", "Root", state: try coder.encodedBlob())], header: SampleArchives.header)
            let export = try run(["export", path, "--output", "-"])
            #expect(export.status == 0, "\(export.standardError)")
            #expect(export.standardOutput.contains(#""value" : "\u202efirst, 한국어 \u2066between\u2069, last\udb40\udc7f""#))
            let nodes = try #require(try export.jsonObject()["nodes"] as? [[String: Any]])
            let state = try #require(nodes.first?["state"] as? [String: [String: Any]])
            #expect(state["text"]?["value"] as? String == text)
        }
    }
}
