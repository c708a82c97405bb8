import CSQLite
import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

/// An app opens its store at every launch, and may open it again after an error (a full
/// disk, a store another process holds), for as long as it runs: a call that left a file
/// descriptor open, when it failed or even when it worked, would leave the app a few fewer
/// each time, until no file could be opened at all (`EMFILE`: SQLite's "unable to open
/// database file"). SQLite's own descriptors are kept for a connection's lifetime, and the
/// ones it keeps for the next connection to a file while another is open on it are reused.
@Suite("File descriptors: none left open by a call, failing or not")
struct FileDescriptorTests {
    /// Each call runs once before the count (SQLite may keep a descriptor of a file that a
    /// connection of this process still has open, for the next connection to take), then
    /// five times: the process must have as many descriptors open after as before. In a
    /// child process, whose descriptors no other test opens meanwhile.
    @Test func noCallLeavesADescriptorOpen() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            var problems: [String] = []
            func descriptors() -> Int {
                (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
            }
            /// Runs `body` six times, each failing when `fails` (and only then).
            func expectNoLeak(_ call: String, fails: Bool = false, _ body: () throws -> Void) {
                func run() {
                    do {
                        try body()
                        if fails { problems.append("\(call): did not fail") }
                    } catch {
                        if !fails { problems.append("\(call): \(error)") }
                    }
                }
                run()
                let before = descriptors()
                for _ in 0..<5 { run() }
                let after = descriptors()
                if before < 0 || after < 0 {
                    problems.append("\(call): /proc/self/fd cannot be listed, so no descriptor is counted")
                } else if after != before {
                    problems.append("\(call): \(before) descriptors open before, \(after) after")
                }
            }
            try withTemporaryDirectory { directory in
                let path = directory + "/store.sqlite"
                let nodes = try SampleArchives.tree(count: 20)
                try ArchiveStore(path: path).save(nodes, header: SampleArchives.header)

                // Calls that work.
                expectNoLeak("a read-write open, a save and a read") {
                    let store = try ArchiveStore(path: path)
                    try store.save(nodes, header: SampleArchives.header)
                    _ = try store.snapshot()
                }
                expectNoLeak("a read-only open and a read") { _ = try ArchiveStore(path: path, mode: .readOnly).snapshot() }
                expectNoLeak("a launch's events and its restoration") {
                    let store = try ArchiveStore(path: path)
                    _ = try store.record(.willFinishLaunching)
                    _ = try store.previousLaunch()
                    let engine = try makeEngine(store)
                    let root = Probe("Root", value: "v", [Probe("Child", value: "w")])
                    _ = try engine.restore([root])
                    _ = try engine.preserve([root])
                    _ = try store.record(.didEnterBackground)
                }
                expectNoLeak("a check") { _ = try ArchiveStore(path: path).check() }
                expectNoLeak("a footprint") { _ = try ArchiveStore(path: path, mode: .readOnly).footprint() }
                expectNoLeak("a discard") {
                    let store = try ArchiveStore(path: path)
                    try store.save(nodes, header: SampleArchives.header)
                    _ = try store.discard(reason: "test")
                }
                expectNoLeak("an erase") { try ArchiveStore.erase(at: path) }
                expectNoLeak("a new store in new folders") {
                    let folder = directory + "/new"
                    _ = try ArchiveStore(path: folder + "/a/store.sqlite")
                    try FileManager.default.removeItem(atPath: folder)
                }

                // Calls that fail.
                let text = directory + "/text"
                _ = FileManager.default.createFile(atPath: text, contents: Data(repeating: 0x41, count: 8_192))
                expectNoLeak("a read-write open of a file not a store", fails: true) { _ = try ArchiveStore(path: text) }
                expectNoLeak("a read-only open of a file not a store", fails: true) {
                    _ = try ArchiveStore(path: text, mode: .readOnly)
                }
                let foreign = directory + "/foreign.sqlite"
                try Connection(filename: foreign, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
                    .execute("CREATE TABLE t (x)")
                expectNoLeak("an open of another program's database", fails: true) { _ = try ArchiveStore(path: foreign) }
                expectNoLeak("an erase of another program's database", fails: true) { try ArchiveStore.erase(at: foreign) }
                let newer = directory + "/newer.sqlite"
                _ = try ArchiveStore(path: newer)
                try tamper(with: newer, "PRAGMA user_version = 9999")
                expectNoLeak("a read-write open of a newer schema", fails: true) { _ = try ArchiveStore(path: newer) }
                expectNoLeak("a read-only open of a newer schema", fails: true) {
                    _ = try ArchiveStore(path: newer, mode: .readOnly)
                }
                let damaged = directory + "/damaged.sqlite"
                try ArchiveStore(path: damaged).save(nodes, header: SampleArchives.header)
                try overwrite(damaged, from: 0, with: [UInt8](repeating: 7, count: 100))
                expectNoLeak("a read-write open of a damaged store", fails: true) { _ = try ArchiveStore(path: damaged) }
                expectNoLeak("a read-only open of a damaged store", fails: true) {
                    _ = try ArchiveStore(path: damaged, mode: .readOnly)
                }
                expectNoLeak("a read-only open of no store", fails: true) {
                    _ = try ArchiveStore(path: directory + "/none", mode: .readOnly)
                }
                let symbolicLink = directory + "/link.sqlite"
                guard symlink(path, symbolicLink) == 0 else { throw POSIXError(.EIO) }
                expectNoLeak("an open of a symbolic link", fails: true) { _ = try ArchiveStore(path: symbolicLink) }
                let other = directory + "/other.sqlite"
                guard link(path, other) == 0 else { throw POSIXError(.EIO) }
                expectNoLeak("an open of a file with two names", fails: true) { _ = try ArchiveStore(path: other) }
                unlink(other)
                expectNoLeak("an open of a folder", fails: true) { _ = try ArchiveStore(path: directory) }

                // Calls while the app has the store open, in this process.
                do {
                    let app = try ArchiveStore(path: path)
                    try app.save(nodes, header: SampleArchives.header)
                    let reader = try ArchiveStore(path: path, mode: .readOnly)
                    expectNoLeak("a read-write open beside the app's") { _ = try ArchiveStore(path: path).snapshot() }
                    expectNoLeak("a read-only open beside the app's") {
                        _ = try ArchiveStore(path: path, mode: .readOnly).snapshot()
                    }
                    expectNoLeak("a read-only store reading again after the app's save") {
                        try app.save(nodes, header: SampleArchives.header)
                        _ = try reader.snapshot()
                    }
                    expectNoLeak("an erase of the app's store") { try ArchiveStore.erase(at: path) }
                    expectNoLeak("a save refused once the file was replaced", fails: true) {
                        let moved = try ArchiveStore(path: path)
                        try FileManager.default.removeItem(atPath: path)
                        _ = try ArchiveStore(path: path)
                        try moved.save(nodes, header: SampleArchives.header)
                    }
                    withExtendedLifetime((app, reader)) {}
                }
                // With every store released, no descriptor is left on a file of the folder
                // (the process's own may have been opened meanwhile, once).
                let folder = URL(filePath: directory).resolvingSymlinksInPath().lastPathComponent
                for descriptor in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
                    guard let file = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor),
                        file.contains(folder)
                    else { continue }
                    problems.append("with every store released, descriptor \(descriptor) is still open on \(file)")
                }
            }
            FileHandle.standardError.write(Data(problems.joined(separator: "\n").utf8))
        }
        let problems = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(problems.isEmpty, "\(problems)")
    }
}
