import Foundation
import Logging
import RestorationArchive
import TestSupport

/// 10. Permissions and secrets: under umask 000, 022 and 077 the store's folders are 0700 and
/// its files 0600; a symbolic link at the store path is refused; after a discard a known
/// secret is in none of the store, `-wal` and `-shm` files; and no error message or log line
/// contains a stored value.
enum Permissions {
    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("permissions")
        try withTemporaryDirectory { directory in
            for mask: mode_t in [0o000, 0o022, 0o077] {
                scenario.trial("umask \(String(mask, radix: 8))") { trial in
                    try modes(under: mask, directory: "\(directory)/umask-\(mask)", trial: &trial, random: &random)
                }
            }
            for dangling in [false, true] {
                scenario.trial(dangling ? "dangling symbolic link" : "symbolic link") { trial in
                    try symbolicLink(dangling: dangling, directory: "\(directory)/link-\(dangling)", trial: &trial)
                }
            }
            for index in 0..<scale.trials(quick: 4, full: 20) {
                scenario.trial("secret, trial \(index)") { trial in
                    try secret(directory: "\(directory)/secret-\(index)", trial: &trial, random: &random)
                }
            }
        }
        return scenario
    }

    private static func modes(under mask: mode_t, directory: String, trial: inout Trial, random: inout SeededGenerator)
        throws
    {
        let previous = umask(mask)
        defer { umask(previous) }
        let path = directory + "/a/b/store.sqlite"
        let store = try ArchiveStore(path: path)
        try store.save(try Content.tree(count: 20, using: &random), header: Content.header)
        // While the store is open its -wal and -shm exist too.
        for folder in [directory, directory + "/a", directory + "/a/b"] {
            trial.expect(fileMode(folder) == 0o700, "\(folder) is \(String(fileMode(folder) ?? 0, radix: 8))")
        }
        for file in [path, path + "-wal", path + "-shm"] {
            trial.expect(fileMode(file) == 0o600, "\(file) is \(fileMode(file).map { String($0, radix: 8) } ?? "missing")")
        }
    }

    private static func symbolicLink(dangling: Bool, directory: String, trial: inout Trial) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let target = directory + "/target.sqlite"
        let path = directory + "/store.sqlite"
        if !dangling { try ArchiveStore(path: target).save([], header: Content.header) }
        let before = fileBytes(target)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        for mode in [ArchiveStore.AccessMode.readWrite, .readOnly] {
            do {
                _ = try ArchiveStore(path: path, mode: mode)
                trial.fail("opened through a symbolic link (\(mode))")
            } catch ArchiveStoreError.symbolicLinkAtStorePath {
            } catch {
                trial.fail("\(mode): \(error), not symbolicLinkAtStorePath")
            }
        }
        trial.expect(fileBytes(target) == before, "the link's target changed or was created")
        trial.expect(!fileExists(path + "-wal") && !fileExists(target + "-wal"), "a -wal was created")
    }

    /// A secret in node states and header values, through the engine and the store, in
    /// success and in error; then a discard.
    private static func secret(directory: String, trial: inout Trial, random: inout SeededGenerator) throws {
        let secret = "SECRET-\(random.next())"
        let path = directory + "/store.sqlite"
        let sink = LogSink()
        let logger = Logger(label: "torture") { _ in sink }
        var errors: [String] = []
        do {
            let store = try ArchiveStore(path: path, logger: logger)
            var registry = RestorationRegistry()
            try registry.register(SecretHolder.self) { request in SecretHolder(request.path.identifier, "") }
            let engine = try RestorationEngine(
                store: store, app: AppIdentity(version: "1", build: "1"), registry: registry, logger: logger)
            engine.saveGate = { values in
                values["token"] = .string(secret)
                return .save
            }
            let root = SecretHolder("Root", secret, [SecretHolder("Child", secret + "-child")])
            try engine.preserve([root])
            root.note = secret + "-changed"
            try engine.preserve([root])
            // Restoring fails to decode (the holder reads its note as a number): an error
            // about a stored value, in the log and in the stored report.
            let restored = try engine.restore([SecretHolder("Root", "", [])])
            errors += restored.report.nodes.map { "\($0.outcome)" }
            errors += try store.restoreReports().flatMap { $0.nodes.map { "\($0.outcome)" } }
            // Store errors about the nodes holding it.
            let snapshot = try store.snapshot()
            let generation = snapshot?.header.generation ?? 0
            for attempt in [
                { () throws -> Void in try store.saveChanges(snapshot?.nodes ?? [], basedOn: generation.next, header: Content.header) },
                { () throws -> Void in try store.save((snapshot?.nodes ?? []) + (snapshot?.nodes ?? []), header: Content.header) },
                { () throws -> Void in _ = try StateDecoder(blob: snapshot?.nodes.first?.state ?? []).decode(Int.self, forKey: "note") },
                { () throws -> Void in _ = try StateDecoder(blob: snapshot?.nodes.first?.state ?? []).decode(Bool.self, forKey: "note") },
            ] {
                do {
                    try attempt()
                    trial.fail("an error case did not fail")
                } catch {
                    errors.append("\(error)")
                }
            }
            trial.expect(
                Files.storeFiles(path).compactMap(fileBytes).contains { $0.contains(bytes: Array(secret.utf8)) },
                "the secret was never written: the test proves nothing")
            try store.discardAll(reason: "the user quit")
            // While the store is still open, and after it is closed.
            for file in Files.storeFiles(path) {
                trial.expect(fileBytes(file)?.contains(bytes: Array(secret.utf8)) != true, "the secret remains in \(file) after the discard")
            }
        }
        for file in Files.storeFiles(path) {
            trial.expect(fileBytes(file)?.contains(bytes: Array(secret.utf8)) != true, "the secret remains in \(file) after closing")
        }
        trial.expect(!sink.messages.isEmpty, "nothing was logged: the test proves nothing")
        trial.expect(errors.count >= 6, "too few errors to judge: \(errors)")
        if ProcessInfo.processInfo.environment["TORTURE_VERBOSE"] != nil {
            for line in sink.messages + errors { printToStandardError("    \(line)") }
        }
        for line in sink.messages + errors where line.contains("SECRET") {
            trial.fail("a log line or error message holds the secret: \(line)")
        }
    }
}

/// A screen whose state is a secret note; it reads its note back as a number, which fails.
final class SecretHolder: Restorable {
    static var restorationClassName: String { "SecretHolder" }
    let restorationIdentifier: String?
    var note: String
    let children: [any Restorable]

    init(_ identifier: String, _ note: String, _ children: [any Restorable] = []) {
        restorationIdentifier = identifier
        self.note = note
        self.children = children
    }

    var restorationChildren: [any Restorable] { children }

    func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(note, forKey: "note")
        try coder.encode(["first": note, "second": note], forKey: "notes")
    }

    func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        _ = try coder.decode(Int.self, forKey: "note")
    }
}
