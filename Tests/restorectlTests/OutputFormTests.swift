import Foundation
import RestorationArchive
import Testing
import TestSupport
@testable import restorectl

/// What `restorectl` prints for the changes, values and outcomes the other tests' stores never
/// hold (a coverage run found each of these branches untested): nodes added and removed in a
/// `diff`, bytes, booleans and numbers that are not finite, a restoration that failed, a
/// restoration still running, a store without archives, and a backslash.
@Suite("restorectl: the form of each change, value and outcome")
struct OutputFormTests {
    let restorectl = builtProduct("restorectl")

    private func run(_ arguments: [String]) throws -> ProcessOutcome { try runProcess(restorectl, arguments) }

    private func json(_ outcome: ProcessOutcome) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any])
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
            try store.save(
                [try node("Root", "Root"), try node("Root/Gone", "Gone"), try node("Root/Kept", "Old", order: 1)],
                header: SampleArchives.header)
            try store.save(
                [
                    try node("Root", "Root"), try node("Root/Kept", "New", version: 2, order: 2, state: [1, 2, 3]),
                    try node("Root/New", "Added"),
                ], header: SampleArchives.header)
            let text = try run(["diff", path, "--from", "1", "--to", "2"])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(
                text.standardOutput == """
                    Archive main: generation 1 → 2
                      removed Root/Gone (Gone)
                      changed Root/Kept (New)
                               class: Old → New
                               version: 1 → 2
                               order: 1 → 2
                               state: 10 → 3 bytes (cannot be decoded)
                      added   Root/New (Added)

                    """)
            let document = try json(try run(["diff", path, "--from", "1", "--to", "2", "--format", "json"]))
            let changes = try #require(document["changes"] as? [[String: Any]])
            #expect(changes.map { $0["change"] as? String } == ["removed", "changed", "added"])
            #expect(changes.map { $0["path"] as? String } == ["Root/Gone", "Root/Kept", "Root/New"])
            #expect(changes.map { $0["class_name"] as? String } == ["Gone", "New", "Added"])
            #expect(changes.map { ($0["details"] as? [String])?.count } == [0, 4, 0])
            // Backwards, what was added is removed.
            let back = try run(["diff", path, "--from", "2", "--to", "1"])
            #expect(back.status == 0, "\(back.standardError)")
            #expect(back.standardOutput.contains("  added   Root/Gone (Gone)\n  changed Root/Kept (Old)\n"))
            #expect(back.standardOutput.contains("           class: New → Old\n"))
            #expect(back.standardOutput.hasSuffix("  removed Root/New (Added)\n"))
        }
    }

    /// Bytes as their length and first 32 bytes in hex (then "…"), and as base64 in JSON;
    /// booleans typed; a number that is not finite as `NaN`, `+Infinity` or `-Infinity` in text
    /// as in JSON (docs/cli.md), where the text said Swift's `nan` and `-inf`.
    @Test func valuesOfEachKindAreShownAsDocumented() throws {
        try withTemporaryStorePath { path in
            let header = SaveHeader(
                appVersion: "11.0", appBuild: "1024",
                appValues: ["flag": .bool(false), "ratio": .double(-.infinity), "blob": .bytes(Array(0..<40))])
            let state = try StateValue.encode([
                "flag": .bool(true), "ratio": .double(.nan), "scale": .float(.infinity), "small": .bytes([1, 2, 3]),
                "large": .bytes(Array(0..<40)),
            ])
            try ArchiveStore(path: path).save([try node("Root", "Root", state: state)], header: header)
            let show = try run(["show", path, "Root"])
            #expect(show.status == 0, "\(show.standardError)")
            #expect(
                show.standardOutput.hasSuffix("""
                      state:
                        flag: bool true
                        large: bytes (40) 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f…
                        ratio: double NaN
                        scale: float +Infinity
                        small: bytes (3) 010203

                    """), "\(show.standardOutput)")
            let shown = try #require(try json(try run(["show", path, "Root", "--format", "json"]))["state"] as? [String: Any])
            let values = try #require(shown as? [String: [String: Any]])
            #expect(values["flag"]?["type"] as? String == "bool" && values["flag"]?["value"] as? Bool == true)
            #expect(values["ratio"]?["type"] as? String == "double" && values["ratio"]?["value"] as? String == "NaN")
            #expect(values["scale"]?["type"] as? String == "float" && values["scale"]?["value"] as? String == "+Infinity")
            #expect(values["large"]?["type"] as? String == "bytes")
            #expect(values["large"]?["base64"] as? String == Data(Array(0..<40)).base64EncodedString())
            #expect(values["small"]?["base64"] as? String == "AQID")

            let info = try run(["info", path])
            #expect(info.status == 0, "\(info.standardError)")
            #expect(
                info.standardOutput.contains("""
                      app values:
                        blob = 40 bytes (bytes)
                        flag = false (bool)
                        ratio = -Infinity (double)

                    """), "\(info.standardOutput)")
            let archives = try #require(try json(try run(["info", path, "--format", "json"]))["archives"] as? [[String: Any]])
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
                store: store, app: AppIdentity(version: "11.0", build: "1024", platform: "linux", idiom: "phone"),
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
            let reports = try #require(try json(try run(["report", path, "--format", "json"]))["reports"] as? [[String: Any]])
            let outcome = try #require(reports.first?["outcome"] as? [String: Any])
            #expect(outcome["kind"] as? String == "failed" && outcome["reason"] as? String == reason)
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
            let app = AppIdentity(version: "11.0", build: "1024", platform: "linux", idiom: "phone")
            try RestorationEngine(store: store, app: app, registry: RestorationRegistry()).preserve([Loading()])
            let loading = Loading()
            let result = try RestorationEngine(store: store, app: app, registry: RestorationRegistry()).restore([loading])
            #expect(!result.isComplete)
            let text = try run(["markers", path])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(
                text.standardOutput.contains("    process \(getpid()) runs: its restoration is probably still in progress\n"),
                "\(text.standardOutput)")
            let markers = try #require(try json(try run(["markers", path, "--format", "json"]))["markers"] as? [[String: Any]])
            #expect(markers.count == 1 && markers.first?["process_running"] as? Bool == true)
            #expect(loading.pending?.complete() == true)
            #expect(try run(["markers", path]).standardOutput.contains("(no crash markers"))
        }
    }

    /// A store whose app has saved nothing yet.
    @Test func infoOfAStoreWithoutArchivesSaysSo() throws {
        try withTemporaryStorePath { path in
            _ = try ArchiveStore(path: path)
            let text = try run(["info", path])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(text.standardOutput.hasSuffix("  last launch:   none recorded\n  (no archives)\n"), "\(text.standardOutput)")
            let document = try json(try run(["info", path, "--format", "json"]))
            #expect((document["archives"] as? [Any])?.isEmpty == true)
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
}
