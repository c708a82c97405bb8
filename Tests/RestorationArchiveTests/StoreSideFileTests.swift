import Foundation
import Logging
import Testing
import TestSupport
@testable import RestorationArchive

/// What SQLite never makes at the paths of a store's write-ahead log, its index and a rollback
/// journal: a symbolic link, a folder, a pipe. SQLite cannot open or write the store through
/// it; every open failed with words that named neither the file nor a remedy ("unable to open
/// database file", "disk I/O error", "attempt to write a readonly database", a log said to
/// need a recovery that never came), at every launch, or used a pipe at the log's path as the
/// log, or waited forever on one at the journal's; and the erase an app answers an unusable
/// store with failed the same way.
@Suite("Files beside a store: what SQLite never makes at the paths of its log, index and journal")
struct StoreSideFileTests {
    enum Side: String, CaseIterable {
        case log = "-wal"
        case index = "-shm"
        case journal = "-journal"

        var role: String {
            switch self {
            case .log: "write-ahead log"
            case .index: "log's index"
            case .journal: "rollback journal"
            }
        }
    }

    enum Kind: String, CaseIterable {
        case link = "a symbolic link"
        case folder = "a folder"
        case pipe = "a pipe"

        /// Makes one at `path`; a link points to `target`.
        func make(at path: String, target: String) throws {
            switch self {
            case .link: try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            case .folder: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            case .pipe: #expect(mkfifo(path, 0o600) == 0)
            }
        }
    }

    /// Each open names the file and what it holds, as a store that is unusable as it is;
    /// nothing is changed, not even what a link points to. The erase an app answers with
    /// removes it (a link, not what it points to) and the store opens again, empty.
    @Test(arguments: Side.allCases, Kind.allCases)
    func whatSQLiteNeverMakesBesideAStoreIsNamedAndErased(side: Side, kind: Kind) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let target = directory + "/precious.txt"
            let precious = Array("a file of the user's\n".utf8)
            #expect(FileManager.default.createFile(atPath: target, contents: Data(precious)))
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            let before = try #require(fileBytes(path))
            try kind.make(at: path + side.rawValue, target: target)

            let refused = ArchiveStoreError.notAStore(
                path: path,
                reason: "the path of its \(side.role), '\(path + side.rawValue)', holds \(kind.rawValue), which SQLite "
                    + "never makes there; remove it (erasing the store removes it too)")
            #expect(refused.isUnusableStore)
            #expect(throws: refused) { try ArchiveStore(path: path) }
            #expect(throws: refused) { try ArchiveStore(path: path, mode: .readOnly) }
            #expect(fileBytes(path) == before)
            #expect(fileBytes(target) == precious)
            for other in Side.allCases where other != side {
                #expect(!FileManager.default.fileExists(atPath: path + other.rawValue), "the open made \(other.rawValue)")
            }

            let sink = LogSink()
            try ArchiveStore.erase(at: path, logger: Logger(label: "test") { _ in sink })
            #expect(sink.messages.contains("Removed \(kind.rawValue) at '\(path + side.rawValue)', which SQLite never makes beside a store"))
            #expect(fileBytes(target) == precious)
            let store = try ArchiveStore(path: path)
            #expect(try store.snapshot() == nil)
            try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header)
            #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes.count == 2)
        }
    }

    /// A folder with files in it is not the store's to delete: the erase refuses it and
    /// leaves it, the store with it.
    @Test func aFolderWithFilesAtTheLogsPathIsLeftByTheErase() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            let before = try #require(fileBytes(path))
            try FileManager.default.createDirectory(atPath: path + "-wal", withIntermediateDirectories: false)
            #expect(FileManager.default.createFile(atPath: path + "-wal/notes.txt", contents: Data("notes".utf8)))
            // The open's remedy does not promise what the erase will not do.
            #expect(
                throws: ArchiveStoreError.notAStore(
                    path: path,
                    reason: "the path of its write-ahead log, '\(path)-wal', holds a folder with files in it, which SQLite "
                        + "never makes there; move or remove it (erasing the store leaves it: its files are not the store's)")
            ) { try ArchiveStore(path: path, mode: .readOnly) }
            #expect(throws: ArchiveStoreError.fileSystem(operation: "rmdir", path: path + "-wal", errno: ENOTEMPTY)) {
                try ArchiveStore.erase(at: path)
            }
            #expect(fileBytes(path + "-wal/notes.txt") == Array("notes".utf8))
            #expect(fileBytes(path) == before)
        }
    }

    /// With no store file: the erase removes what SQLite never makes there too, and creates
    /// nothing; an app's first launch, which makes the file and then fails at the link, is
    /// answered by the erase as any unusable store.
    /// A file beside the store that goes between the look at it and the check of access to
    /// it is as if it never was: another process's opening of a new store makes a rollback
    /// journal and removes it at once (its first write is in that mode), and an opening beside
    /// it failed with "open for writing failed for '…-journal': No such file or directory"
    /// (found by the `processes` torture scenario, an erase and another process's opening at
    /// once). Here a thread makes and removes an empty journal over and over while the store
    /// is opened: each opening must succeed.
    @Test func aJournalThatComesAndGoesDoesNotFailAnOpening() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            let stop = Locked(false)
            let journal = path + "-journal"
            let churn = Thread {
                while !stop.withLock({ $0 }) {
                    let fd = open(journal, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
                    if fd >= 0 { close(fd) }
                    unlink(journal)
                }
            }
            churn.start()
            defer { stop.withLock { $0 = true } }
            var failures: [String] = []
            for _ in 0..<500 {
                do {
                    _ = try ArchiveStore(path: path)
                } catch {
                    failures.append("\(error)")
                }
            }
            #expect(failures.isEmpty, "\(failures.count) of 500 openings failed, the first: \(failures.first ?? "")")
        }
    }

    @Test func theEraseRemovesWhatSQLiteNeverMakesWhereNoStoreIs() throws {
        try withTemporaryDirectory { directory in
            let untouched = directory + "/never-opened.sqlite"
            try Kind.link.make(at: untouched + "-wal", target: directory + "/elsewhere")
            try ArchiveStore.erase(at: untouched)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)

            let path = directory + "/store.sqlite"
            try Kind.link.make(at: path + "-shm", target: directory + "/elsewhere")
            let error = try #require(throws: ArchiveStoreError.self) { try ArchiveStore(path: path) }
            #expect(error.isUnusableStore)
            try ArchiveStore.erase(at: path)
            #expect(try ArchiveStore(path: path).snapshot() == nil)
        }
    }
}
