import Foundation
import Testing
import TestSupport

/// `strace`, where it is installed and may trace a child (a container may forbid `ptrace`).
private enum SystemCallTrace {
    static let strace = "/usr/bin/strace"

    static let isPossible: Bool = {
        guard FileManager.default.isExecutableFile(atPath: strace) else { return false }
        return (try? runProcess(strace, ["-o", "/dev/null", "/bin/true"]).status) == 0
    }()
}

/// The folders a new store is made in survive a power loss: a folder's name lives in the
/// folder it was made in, which must be synced too (SQLite syncs the store's own folder when it
/// makes the write-ahead log, not the folders above it, which only the library makes). A
/// power cut cannot be had here, so the test watches the system calls of a real process.
@Suite("A new store's folders", .enabled(if: SystemCallTrace.isPossible))
struct FolderSyncTests {
    @Test func eachFolderMadeForANewStoreIsSyncedWhereItWasMade() throws {
        try withTemporaryDirectory { directory in
            let trace = directory + "/trace"
            let path = directory + "/state/app/store.sqlite"
            // LeakSanitizer cannot run under ptrace: a `restorectl` built with AddressSanitizer
            // (`scripts/sanitizers`) is traced without it.
            let sanitizerOptions = (ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? "")
                + "detect_leaks=0"
            let outcome = try runProcess(
                SystemCallTrace.strace,
                ["-f", "-o", trace, "-e", "trace=mkdir,mkdirat,openat,fsync,fdatasync", "-e", "signal=none"]
                    + ["-E", "ASAN_OPTIONS=" + sanitizerOptions]
                    + [builtProduct("restorectl"), "demo", "--step", "save", "--db", path])
            #expect(outcome.status == 0, "\(outcome.standardError)")
            let calls = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)

            // A folder is made when `mkdir` returns 0; a folder is synced when a descriptor
            // opened on it (and not opened on another file since) is given to `fsync` or
            // `fdatasync`.
            var made: [String] = []
            var opened: [String: String] = [:]  // descriptor: folder
            var synced: Set<String> = []
            for call in calls {
                if let folder = quoted(in: call), call.contains("mkdir"), call.hasSuffix("= 0") {
                    made.append(folder)
                } else if let file = quoted(in: call), call.contains("openat("),
                    let descriptor = call.split(separator: "=").last?.trimmingCharacters(in: .whitespaces)
                {
                    opened[descriptor] = call.contains("O_DIRECTORY") ? file : nil
                } else if call.contains("sync("), let open = call.firstIndex(of: "("),
                    let close = call.firstIndex(of: ")"), let folder = opened[String(call[call.index(after: open)..<close])]
                {
                    synced.insert(folder)
                }
            }
            #expect(made == [directory + "/state", directory + "/state/app"])
            for folder in made {
                let parent = URL(filePath: folder).deletingLastPathComponent().path
                #expect(synced.contains(parent), "\(folder) was made, and \(parent) never synced")
            }
        }
    }

    /// The first double-quoted string of a traced call: its path.
    private func quoted(in call: String) -> String? {
        guard let start = call.firstIndex(of: "\"") else { return nil }
        let rest = call[call.index(after: start)...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}
