import CSQLite
import Foundation
import Logging
import Testing
import TestSupport
@testable import RestorationArchive

@Suite("Store files: location, permissions, symlinks, bad files")
struct StoreFileTests {
    @Test func createsOwnerOnlyFolderAndFiles() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/a/b/store.sqlite"
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            #expect(fileMode(directory + "/a") == 0o700)
            #expect(fileMode(directory + "/a/b") == 0o700)
            #expect(fileMode(path) == 0o600)
            #expect(fileMode(path + "-wal") == 0o600)
            #expect(fileMode(path + "-shm") == 0o600)
        }
    }

    // umask is per process: each case runs in its own child process.
    @Test(arguments: [0o000, 0o022, 0o077])
    func modesIgnoreTheUmask(umaskValue: Int) async {
        await #expect(processExitsWith: .success) { [umaskValue = umaskValue as Int] in
            umask(mode_t(umaskValue))
            let ok = try withTemporaryDirectory { directory -> Bool in
                let path = directory + "/state/app/store.sqlite"
                let store = try ArchiveStore(path: path)
                try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
                return fileMode(directory + "/state") == 0o700 && fileMode(directory + "/state/app") == 0o700
                    && fileMode(path) == 0o600 && fileMode(path + "-wal") == 0o600 && fileMode(path + "-shm") == 0o600
            }
            exit(ok ? 0 : 1)
        }
    }

    /// Names SQLite takes for other databases: `:memory:` for one in memory (a store at that
    /// relative path saved nothing to the file the library had created there, its write-ahead
    /// log refused with a message about journal modes), and, since SQLite here reads file
    /// names as URIs (built with `USE_URI`), a name starting with `file:` for one (a store at
    /// `file:x.sqlite` opened `x.sqlite`, another store, and saved into it; one at
    /// `file:y.sqlite?mode=memory` was a database in memory, refused as not a store). Each is
    /// a file like any other now, and the store beside it is left alone. The working
    /// directory is per process: each case runs in a child process.
    @Test(arguments: [":memory:", "file:x.sqlite", "file:y.sqlite?mode=memory"])
    func aStoreAtARelativePathSQLiteReadsAsAnotherDatabaseIsThatFile(path: String) async {
        await #expect(processExitsWith: .success) { [path] in
            let ok = try withTemporaryDirectory { directory -> Bool in
                guard chdir(directory) == 0 else { return false }
                let other = try SampleArchives.tree(count: 2)
                try ArchiveStore(path: "x.sqlite").save(other, header: SampleArchives.header)
                let nodes = try SampleArchives.tree(count: 3)
                let store = try ArchiveStore(path: path)
                let empty = try store.snapshot() == nil
                try store.save(nodes, header: SampleArchives.header)
                let saved = (fileSize(directory + "/" + path) ?? 0) > 0
                let read = try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes == nodes
                let reopened = try ArchiveStore(path: path).snapshot()?.nodes == nodes
                try ArchiveStore.erase(at: path)
                let erased = try ArchiveStore(path: path).snapshot() == nil
                let otherLeft = try ArchiveStore(path: "x.sqlite", mode: .readOnly).snapshot()?.nodes == other
                return empty && saved && read && reopened && erased && otherLeft
            }
            exit(ok ? 0 : 1)
        }
    }

    /// A relative name without a folder is given to SQLite from `./`, which SQLite drops: a
    /// name that makes the full path exactly as long as SQLite opens still opens (measured
    /// with the `./`, it was refused). In a child process, for its working directory.
    @Test func aRelativeNameAtTheLengthLimitOpens() async {
        await #expect(processExitsWith: .success) {
            let ok = try withTemporaryDirectory { directory -> Bool in
                guard let resolved = realpath(directory, nil) else { return false }
                let base = String(cString: resolved)
                free(resolved)
                let outer = base + "/" + String(repeating: "f", count: 200)
                let folder = outer + "/" + String(repeating: "g", count: 200)
                guard mkdir(outer, 0o700) == 0, mkdir(folder, 0o700) == 0, chdir(folder) == 0 else { return false }
                let name = String(repeating: "s", count: 504 - folder.utf8.count - 1)
                try ArchiveStore(path: name).save([], header: SampleArchives.header)
                return try ArchiveStore(path: name, mode: .readOnly).header() != nil
            }
            exit(ok ? 0 : 1)
        }
    }

    /// A path that names no file, whatever is there: a read-write open of `state/` made the
    /// folder and then failed to open it ("Is a directory"), an empty path failed with "No
    /// such file or directory", and the erase of either did nothing without a word. Each is
    /// refused in every mode, and the erase, before anything is made.
    @Test(arguments: ["", "/state/", "/state/.", "/state/..", "/state/new/.."])
    func aPathThatNamesNoFileIsRefusedBeforeAnythingIsMade(_ ending: String) throws {
        try withTemporaryDirectory { directory in
            let path = ending.isEmpty ? "" : directory + ending
            let name = ending.hasSuffix("/") ? "/" : String(ending.split(separator: "/").last ?? "")
            let refused = ArchiveStoreError.invalidLocation(
                path.isEmpty
                    ? "the store path is empty"
                    : "the store path '\(path)' ends with '\(name)', which names a folder: a store is a file")
            #expect(throws: refused) { try ArchiveStore(path: path) }
            #expect(throws: refused) { try ArchiveStore(path: path, mode: .readOnly) }
            #expect(throws: refused) { try ArchiveStore.erase(at: path) }
            let made = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(made.isEmpty)
        }
    }

    @Test func symbolicLinkAtStorePathIsRefusedInBothModes() throws {
        try withTemporaryDirectory { directory in
            let target = directory + "/real.sqlite"
            try ArchiveStore(path: target).save([], header: SampleArchives.header)
            let link = directory + "/link.sqlite"
            #expect(symlink(target, link) == 0)
            #expect(throws: ArchiveStoreError.symbolicLinkAtStorePath(path: link)) { try ArchiveStore(path: link) }
            #expect(throws: ArchiveStoreError.symbolicLinkAtStorePath(path: link)) {
                try ArchiveStore(path: link, mode: .readOnly)
            }
            // A dangling link is refused too, and nothing is created at its target.
            let dangling = directory + "/dangling.sqlite"
            #expect(symlink(directory + "/nowhere.sqlite", dangling) == 0)
            #expect(throws: ArchiveStoreError.symbolicLinkAtStorePath(path: dangling)) { try ArchiveStore(path: dangling) }
            #expect(!fileExists(directory + "/nowhere.sqlite"))
        }
    }

    /// The store's file with a second name (a hard link, as `ln` or `cp -al` make): SQLite
    /// keeps a log beside each name, so an app killed with a save in the log of one name, then
    /// launched through the other, restored the file without it, and its saves there left the
    /// file malformed ("database disk image is malformed") once the first name's log was copied
    /// over them. A read-write open through either name refuses, as an unusable store, and
    /// writes nothing; a read-only open reads what that name's log and the file hold. The
    /// erase an app answers with gives its name a new store, the log beside the name gone
    /// with it, and leaves the file as it was to the other.
    @Test func aStoreFileWithAnotherNameIsRefusedForWritingAndErasedApart() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let other = directory + "/copy.sqlite"
            let copied = try SampleArchives.tree(count: 3)
            do {
                let live = directory + "/live.sqlite"
                let app = try storeCopiedIntoItsFile(copied, at: live)
                try app.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
                // The files an app killed then leaves, its last save in the log alone.
                for suffix in ["", "-wal", "-shm"] {
                    let bytes = try #require(fileBytes(live + suffix))
                    #expect(FileManager.default.createFile(atPath: path + suffix, contents: Data(bytes)))
                }
            }
            #expect(link(path, other) == 0)
            let before = try #require(fileBytes(path))
            let files = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()

            for name in [path, other] {
                let refused = ArchiveStoreError.notAStore(
                    path: name,
                    reason: "its file has 2 names (hard links), and SQLite keeps a write-ahead log beside each: saves "
                        + "through one name are lost to the others and can leave the file damaged; remove the other "
                        + "names (erasing the store gives this one a file of its own)")
                #expect(refused.isUnusableStore)
                #expect(throws: refused) { try ArchiveStore(path: name) }
            }
            let readers = LogSink()
            let readerLog = Logger(label: "test") { _ in readers }
            #expect(try ArchiveStore(path: path, mode: .readOnly, logger: readerLog).snapshot()?.nodes.count == 4)
            #expect(try ArchiveStore(path: other, mode: .readOnly, logger: readerLog).snapshot()?.nodes == copied)
            // Its content is sound; that a read-write open refuses it is the problem.
            let problems = try ArchiveStore(path: other, mode: .readOnly).check().map(\.description)
            #expect(problems.filter { $0.contains("hard links") } == [
                "a read-write open refuses the store: its file has 2 names (hard links), and SQLite keeps a write-ahead "
                    + "log beside each: saves through one name are lost to the others and can leave the file damaged; "
                    + "remove the other names (erasing the store gives this one a file of its own)"
            ])
            #expect(readers.messages.filter { $0.contains("hard links") } == [path, other].map { name in
                "The store's file at '\(name)' has 2 names (hard links): this read-only open reads what was saved "
                    + "through this name, not what another name's write-ahead log holds, and a read-write open refuses "
                    + "the store"
            })
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == files)
            #expect(fileBytes(path) == before)

            let sink = LogSink()
            try ArchiveStore.erase(at: path, logger: Logger(label: "test") { _ in sink })
            #expect(sink.messages == [
                "Gave '\(path)' a file of its own: the file it named is left as it was to its other name (a hard link)",
                "Erased the archive store at '\(path)'",
            ])
            #expect(fileBytes(other) == before)
            let store = try ArchiveStore(path: path)
            #expect(try store.snapshot() == nil)
            try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header)
            #expect(try ArchiveStore(path: other).snapshot()?.nodes == copied, "a name of its own, opened read-write")
            #expect(try store.snapshot()?.nodes.count == 2)
        }
    }

    /// Another program's database with two names is refused by the erase as with one, and
    /// neither name is removed: that program may use either.
    @Test func anotherProgramsDatabaseWithTwoNamesIsNotErased() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/notes.sqlite"
            let other = directory + "/notes-backup.sqlite"
            #expect(try runSQLite(on: path, ["CREATE TABLE note (text)", "INSERT INTO note VALUES ('milk')"]).status == 0)
            #expect(link(path, other) == 0)
            let before = try #require(fileBytes(path))
            #expect(throws: ArchiveStoreError.notAStore(
                path: path, reason: "it is an SQLite database of another program, which is never erased")
            ) {
                try ArchiveStore.erase(at: path)
            }
            #expect(fileBytes(path) == before)
            #expect(fileBytes(other) == before)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["notes-backup.sqlite", "notes.sqlite"])
        }
    }

    /// An erase through a name of a file that gained another while the app had it open: the
    /// app's store refuses to write from then on, as when its file is replaced, and its
    /// release neither copies its log into the file the other name keeps nor removes the new
    /// store's log (SQLite deletes the log by its path when the last connection closes).
    @Test func anEraseApartLeavesAStoreOpenThroughThatNameRefusingToWrite() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let other = directory + "/copy.sqlite"
            let sink = LogSink()
            var app: ArchiveStore? = try ArchiveStore(path: path, logger: Logger(label: "test") { _ in sink })
            try app?.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            #expect(link(path, other) == 0)
            try ArchiveStore.erase(at: path)

            let moved = ArchiveStoreError.storeFileMoved(path: path)
            #expect(throws: moved) { try app?.save(try SampleArchives.tree(count: 4), header: SampleArchives.header) }
            // The error names the store; the log says which of its files went.
            #expect(sink.messages.contains(
                "A write to the store at '\(path)' was refused: the database file was removed, renamed or replaced since it was opened"))
            let store = try ArchiveStore(path: path)
            #expect(try store.snapshot() == nil)
            try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header)
            app = nil
            #expect(fileExists(path + "-wal"), "the new store's log is where it was")
            // SQLite finds the file sound (the sample states are not blobs the coder reads).
            let problems = try store.check()
            #expect(problems.count == 2 && !problems.contains { $0.problem.hasPrefix("SQLite") }, "\(problems)")
            #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes.count == 2)
            // Its save was in the log that went with the name, which was never copied.
            #expect(throws: ArchiveStoreError.notAStore(path: other, reason: "it is an empty SQLite database")) {
                try ArchiveStore(path: other, mode: .readOnly)
            }
        }
    }

    /// A symbolic link among the folders on the way is the user's own arrangement (a state
    /// folder moved to another disk, a home reached through a link), not the store file
    /// replaced by a link: the store opens there in every mode, and is erased, in the folder
    /// the link leads to. SQLite's `SQLITE_OPEN_NOFOLLOW` refused a link anywhere on the path,
    /// after the store file had been created, and called the store path a link.
    @Test func aStoreInAFolderReachedThroughALinkOpens() throws {
        try withTemporaryDirectory { directory in
            #expect(mkdir(directory + "/real", 0o700) == 0)
            #expect(symlink(directory + "/real", directory + "/state") == 0)
            let path = directory + "/state/app/store.sqlite"
            let nodes = try SampleArchives.tree(count: 3)
            try ArchiveStore(path: path).save(nodes, header: SampleArchives.header)
            #expect(fileExists(directory + "/real/app/store.sqlite"))
            #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes == nodes)
            try ArchiveStore.erase(at: path)
            #expect(try ArchiveStore(path: path).snapshot() == nil)
            // The store file itself is still never a link, through a linked folder too.
            #expect(symlink(directory + "/real/app/store.sqlite", directory + "/real/link.sqlite") == 0)
            let link = directory + "/state/link.sqlite"
            #expect(throws: ArchiveStoreError.symbolicLinkAtStorePath(path: link)) { try ArchiveStore(path: link) }
            #expect(throws: ArchiveStoreError.symbolicLinkAtStorePath(path: link)) {
                try ArchiveStore(path: link, mode: .readOnly)
            }
        }
    }

    /// SQLite opens a database whose full path leaves room for its journal's name: 504
    /// bytes on Linux. A longer path failed with SQLite's "unable to open database file",
    /// after its folders and an empty file had been created. It is refused up front, saying
    /// why, and nothing is created; a path at the limit opens.
    @Test func aPathLongerThanSQLiteOpensIsRefusedBeforeAnythingIsCreated() throws {
        try withTemporaryDirectory { directory in
            // Absolute and resolved, as SQLite measures it.
            let resolved = try #require(realpath(directory, nil))
            defer { free(resolved) }
            let base = String(cString: resolved)
            func path(bytes: Int) -> String {
                let folders = base + "/" + String(repeating: "f", count: 200) + "/" + String(repeating: "g", count: 200)
                return folders + "/" + String(repeating: "s", count: bytes - folders.utf8.count - 1)
            }
            let limit = path(bytes: 504)
            try ArchiveStore(path: limit).save([], header: SampleArchives.header)
            #expect(try ArchiveStore(path: limit, mode: .readOnly).header() != nil)

            let tooLong = path(bytes: 505)
            let error = try #require(throws: ArchiveStoreError.self) { try ArchiveStore(path: tooLong) }
            guard case .invalidLocation(let reason) = error else {
                Issue.record("expected invalidLocation, got \(error)")
                return
            }
            #expect(reason.contains("505 bytes") && reason.contains("504"), "\(error)")
            #expect(!fileExists(tooLong))
            // One there already (not made by this library) is refused the same way.
            #expect(FileManager.default.createFile(atPath: tooLong, contents: Data()))
            #expect(throws: ArchiveStoreError.self) { try ArchiveStore(path: tooLong, mode: .readOnly) }
            #expect(throws: ArchiveStoreError.self) { try ArchiveStore.erase(at: tooLong) }
            #expect(fileBytes(tooLong) == [])

            // Not created on the way either: the folders of a path too long.
            let deeper = base + "/new/" + String(repeating: "h", count: 250) + "/" + String(repeating: "i", count: 250)
            #expect(throws: ArchiveStoreError.self) { try ArchiveStore(path: deeper) }
            #expect(!fileExists(base + "/new"))
        }
    }

    /// The folder a file is in (for a store's file, where SQLite makes its log; for a folder
    /// the store's opening made, the one synced after it): the root for a file at the root,
    /// not an empty path, which names no folder; the current folder for a bare name.
    @Test func theFolderOfAFileAtTheRootIsTheRoot() {
        #expect(StoreLocation.folder(of: "/store.sqlite") == "/")
        #expect(StoreLocation.folder(of: "/state") == "/")
        #expect(StoreLocation.folder(of: "store.sqlite") == ".")
        #expect(StoreLocation.folder(of: "state/store.sqlite") == "state")
        #expect(StoreLocation.folder(of: "/a/b/store.sqlite") == "/a/b")
    }

    /// Whether a path is absolute was asked of its first character: a "/" followed by a
    /// combining mark (a folder whose name starts with U+0301) is not that character, so such
    /// a path was measured from the current folder, and refused as too long (or `$HOME` and
    /// `$XDG_STATE_HOME` taken for relative). It is asked of the first byte.
    @Test func aPathIsAbsoluteByItsFirstByte() throws {
        #expect(StoreLocation.isAbsolute("/\u{301}state"))
        #expect(!StoreLocation.isAbsolute("\u{301}/state"))
        #expect(!StoreLocation.isAbsolute(""))
        // 500 bytes from the root, in a folder that does not exist (nothing is created).
        let path = "/\u{301}" + String(repeating: "f", count: 200) + "/" + String(repeating: "s", count: 296)
        #expect(path.utf8.count == 500)
        #expect(try StoreLocation.checkedSQLiteFilename(for: path) == path)
    }

    /// Only the folders the store creates are made 0700. A path through `..` made the library
    /// "create" a folder that was already there (mkdir says it exists), and set that folder,
    /// which the user had opened to others, to 0700 too.
    @Test func aFolderThatWasAlreadyThereKeepsItsMode() throws {
        try withTemporaryDirectory { directory in
            let existing = directory + "/shared"
            #expect(mkdir(existing, 0o755) == 0 && chmod(existing, 0o755) == 0)
            try ArchiveStore(path: existing + "/new/../store.sqlite").save([], header: SampleArchives.header)
            #expect(fileMode(existing) == 0o755)
            #expect(fileMode(existing + "/new") == 0o700)
            #expect(fileMode(existing + "/store.sqlite") == 0o600)
        }
    }

    @Test func readOnlyModeCreatesNothingOnAMissingPath() throws {
        try withTemporaryDirectory { (directory: String) throws in
            let path = directory + "/missing/store.sqlite"
            #expect(throws: ArchiveStoreError.storeNotFound(path: path)) { try ArchiveStore(path: path, mode: .readOnly) }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
            let flat = directory + "/store.sqlite"
            #expect(throws: ArchiveStoreError.storeNotFound(path: flat)) { try ArchiveStore(path: flat, mode: .readOnly) }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    @Test func readOnlyModeWritesNothingToAnExistingStore() throws {
        try withTemporaryStorePath { path in
            do {
                try ArchiveStore(path: path).save(try SampleArchives.tree(count: 5), header: SampleArchives.header)
            }
            // The writer closed: its -wal and -shm are gone.
            #expect(!fileExists(path + "-wal"))
            let before = fileBytes(path)
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try reader.snapshot()?.nodes.count == 5)
            #expect(try reader.archives().count == 1)
            // A check asks whether the log lacks commits its index names: with no log open,
            // it maps no index (which would make one).
            #expect(try reader.check().filter { $0.path == nil }.isEmpty)
            #expect(!fileExists(path + "-wal"))
            #expect(!fileExists(path + "-shm"))
            #expect(fileBytes(path) == before)
        }
    }

    @Test func readOnlyModeReadsWhileAWriterHasTheStoreOpen() throws {
        try withTemporaryStorePath { path in
            let writer = try ArchiveStore(path: path)
            try writer.save(try SampleArchives.tree(count: 5, fill: 1), header: SampleArchives.header)
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try reader.snapshot()?.header.generation == 1)
            try writer.save(try SampleArchives.tree(count: 6, fill: 2), header: SampleArchives.header)
            let snapshot = try #require(try reader.snapshot())
            #expect(snapshot.header.generation == 2)
            #expect(snapshot.nodes.count == 6)
        }
    }

    /// A read-only store opened while no app had the store open reads the file as immutable.
    /// It read the state of its opening for as long as it lived (its pages cached), or a mix
    /// of those pages and the file's later ones, which its checks took for damage. It now
    /// sees each save made since: by an app that closed again, and by one still running.
    @Test func aReadOnlyStoreOpenedWithNoAppRunningSeesLaterSaves() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 200, fill: 1), header: SampleArchives.header)
            #expect(!fileExists(path + "-wal"))
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try reader.snapshot()?.header.generation == 1)
            do {
                let app = try ArchiveStore(path: path)
                for fill in 2...4 {
                    try app.save(try SampleArchives.tree(count: 200, fill: UInt8(fill)), header: SampleArchives.header)
                }
                _ = try app.record(.didEnterBackground)
            }
            // The app closed: what it saved is in the file.
            #expect(!fileExists(path + "-wal"))
            var snapshot = try #require(try reader.snapshot())
            #expect(snapshot.header.generation == 4)
            #expect(snapshot.nodes.allSatisfy { $0.state.first == 4 })
            #expect(try reader.journal().last?.kind == .lifecycle(.didEnterBackground, .background))

            let app = try ArchiveStore(path: path)
            try app.save(try SampleArchives.tree(count: 210, fill: 5), header: SampleArchives.header)
            snapshot = try #require(try reader.snapshot())
            #expect(snapshot.header.generation == 5)
            #expect(snapshot.nodes.count == 210)
            // The reader reads through the log now, and sees the app's next save at once.
            try app.save(try SampleArchives.tree(count: 220, fill: 6), header: SampleArchives.header)
            #expect(try reader.snapshot()?.header.generation == 6)
        }
    }

    /// The read-only store opens the file again when it changed; when the file is gone, or a
    /// file that is not a store took its place, the call says so (it read the deleted file
    /// before), and a store saved there again is read.
    @Test func aReadOnlyStoreWhoseFileIsGoneOrReplacedSaysSo() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 5, fill: 1), header: SampleArchives.header)
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try reader.snapshot()?.nodes.count == 5)
            #expect(unlink(path) == 0)
            #expect(throws: ArchiveStoreError.storeNotFound(path: path)) { () throws -> Void in _ = try reader.snapshot() }
            #expect(FileManager.default.createFile(atPath: path, contents: Data("not a store at all\n".utf8)))
            #expect(throws: ArchiveStoreError.notAStore(path: path, reason: "it is not an SQLite database")) {
                () throws -> Void in _ = try reader.snapshot()
            }
            #expect(unlink(path) == 0)
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 7, fill: 2), header: SampleArchives.header)
            #expect(try reader.snapshot()?.nodes.count == 7)
        }
    }

    /// A read that fails while an app writes the file the read-only store reads as
    /// immutable (a checkpoint copies pages into it as the read reads them) is run again on
    /// the file as it is now; a read that fails while the file stays as it was is not.
    @Test func aReadThatFailsWhileAnAppWritesTheFileIsRunAgainOnce() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 5, fill: 1), header: SampleArchives.header)
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            let torn = DatabaseError(extendedCode: 11, message: "database disk image is malformed")  // SQLITE_CORRUPT
            var attempts = 0
            let generation = try reader.read { connection -> Int64 in
                attempts += 1
                if attempts == 1 {
                    try ArchiveStore(path: path).save(try SampleArchives.tree(count: 5, fill: 2), header: SampleArchives.header)
                    throw torn
                }
                return try connection.pragmaInteger("SELECT max(generation) FROM generation") ?? 0
            }
            #expect(attempts == 2)
            #expect(generation == 2)

            attempts = 0
            #expect(throws: ArchiveStoreError.damagedStore("SQLite finds the file malformed (database disk image is malformed)")) {
                try reader.read { _ in
                    attempts += 1
                    throw torn
                }
            }
            #expect(attempts == 1)
        }
    }

    /// A read that succeeds while an app writes the file the read-only store reads as
    /// immutable (the app saved and closed, its checkpoint copying pages into the file as the
    /// read read them) is run again on the file as it is now: its result mixed the state
    /// before with pages of the state after, which passes checks that read one row.
    @Test func aReadThatSucceedsWhileAnAppWritesTheFileIsRunAgainOnce() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 5, fill: 1), header: SampleArchives.header)
            #expect(!fileExists(path + "-wal"))
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            var attempts = 0
            let (newest, retained) = try reader.read { connection -> (Int64?, Int64?) in
                attempts += 1
                let newest = try connection.pragmaInteger("SELECT generation FROM archive")
                if attempts == 1 {
                    try ArchiveStore(path: path).save(try SampleArchives.tree(count: 5, fill: 2), header: SampleArchives.header)
                }
                return (newest, try connection.pragmaInteger("SELECT max(generation) FROM generation"))
            }
            #expect(attempts == 2)
            #expect(newest == 2)
            #expect(retained == 2)
            // A read the file stays the same under is run once.
            attempts = 0
            _ = try reader.read { _ in attempts += 1 }
            #expect(attempts == 1)
        }
    }

    /// A killed app's write-ahead log without its index (`-shm`: removed, or left out of a
    /// backup): SQLite reads such a log only through a connection that writes the index. A
    /// read-only open reads the file and the log replayed in memory, the commits only the log
    /// holds included, checks clean, and makes or changes no file; once the app writes, the
    /// store reads what it wrote. A log SQLite would refuse (here, of a format version it does
    /// not know) is still left to the app: a typed error, the files unchanged.
    @Test func aWriteAheadLogWithoutItsIndexIsReplayedForAReaderAndLeftUnchanged() throws {
        try withTemporaryStorePath { path in
            let (saved, main, wal) = try twoSavesOnlyInTheLog(at: path)
            let copy = storeFiles(main, log: wal, at: path + ".copy")

            let reader = try ArchiveStore(path: copy, mode: .readOnly)
            #expect(try reader.snapshot() == saved)
            #expect(try reader.summary(of: .main)?.generations.count == 2)
            // Sample states are not the codec's blobs: the store's own checks.
            #expect(try reader.check().filter { $0.path == nil }.isEmpty)
            #expect(fileBytes(copy) == main)
            #expect(fileBytes(copy + "-wal") == wal)
            #expect(!fileExists(copy + "-shm"))

            // The app opens the store (SQLite recovers the log) and saves again.
            let app = try ArchiveStore(path: copy)
            #expect(try app.snapshot() == saved)
            try app.save(try SampleArchives.tree(count: 9, fill: 4), header: SampleArchives.header)
            #expect(try reader.snapshot()?.nodes.count == 9)

            // The same log, of a format version SQLite does not know.
            let unknownVersion = LogReplayTests.resummed(wal, changing: 7, to: 0x59)
            let other = storeFiles(main, log: unknownVersion, at: path + ".other")
            let refusal = #expect(throws: ArchiveStoreError.writeAheadLogNeedsRecovery(path: other)) {
                try ArchiveStore(path: other, mode: .readOnly)
            }
            #expect(refusal?.description.contains("or is gone beside a log only SQLite's recovery may read") == true)
            #expect(fileBytes(other) == main)
            #expect(fileBytes(other + "-wal") == unknownVersion)
            #expect(!fileExists(other + "-shm"))

            // The same log with its header's checksum broken: SQLite reads no commit of it,
            // and the file alone is the empty database the store's first commit found. The
            // refusal names the log, whose bytes the user sees beside a file that holds nothing.
            var unreadable = wal
            unreadable[24] ^= 0x01  // the header's first checksum word
            let damaged = storeFiles(main, log: unreadable, at: path + ".damaged")
            let empty = ArchiveStoreError.notAStore(
                path: damaged,
                reason: "it is an empty SQLite database, and the write-ahead log beside it (\(wal.count) bytes) "
                    + "holds no commit SQLite can read")
            #expect(throws: empty) { try ArchiveStore(path: damaged, mode: .readOnly) }
            #expect(fileBytes(damaged) == main && fileBytes(damaged + "-wal") == unreadable)
            #expect(!fileExists(damaged + "-shm"))
            // So does one cut short of its header's 32 bytes, which holds no frame at all.
            let cut = storeFiles(main, log: Array(wal.prefix(20)), at: path + ".cut")
            #expect(
                throws: ArchiveStoreError.notAStore(
                    path: cut,
                    reason: "it is an empty SQLite database, and the write-ahead log beside it (20 bytes) "
                        + "holds no commit SQLite can read")
            ) { try ArchiveStore(path: cut, mode: .readOnly) }
        }
    }

    /// A killed app's store without its index, whose files something made sparse and huge
    /// (a log, or the file, grown to 40 GiB of zeros past what SQLite wrote): the replay reads
    /// the log's frames up to the first that is not one, and the file's pages the last commit
    /// keeps, not the files' lengths (it read both whole, and the process trapped for want of
    /// 40 GiB). Where the file alone is the store (a log without a commit) and is longer than
    /// the replay holds in memory (1 GiB), the open is refused, typed, and reads none of it.
    @Test func aReplayReadsWhatTheStoreHoldsNotTheLengthsOfItsFiles() throws {
        try withTemporaryStorePath { path in
            let (saved, main, wal) = try twoSavesOnlyInTheLog(at: path)
            func copy(named name: String, log: [UInt8] = wal, growing grown: [String]) throws -> String {
                let copy = storeFiles(main, log: log, at: path + "." + name)
                for suffix in ["", "-wal"] where grown.contains(suffix) { #expect(truncate(copy + suffix, 40 << 30) == 0) }
                return copy
            }
            let grownLog = try copy(named: "log", growing: ["-wal"])
            #expect(try ArchiveStore(path: grownLog, mode: .readOnly).snapshot() == saved)
            let grownBoth = try copy(named: "both", growing: ["", "-wal"])
            #expect(try ArchiveStore(path: grownBoth, mode: .readOnly).snapshot() == saved)
            #expect(fileSize(grownBoth) == 40 << 30 && fileSize(grownBoth + "-wal") == 40 << 30)
            #expect(!fileExists(grownBoth + "-shm"))

            // No commit the log's header vouches for: the file alone, 40 GiB, is the store.
            var unreadable = wal
            unreadable[24] ^= 0x01
            let tooLarge = try copy(named: "file", log: unreadable, growing: [""])
            let refusal = #expect(throws: ArchiveStoreError.writeAheadLogNeedsRecovery(path: tooLarge)) {
                try ArchiveStore(path: tooLarge, mode: .readOnly)
            }
            #expect(refusal?.description.contains("beside a store too large to replay in memory (over 1 GiB)") == true)
            #expect(fileSize(tooLarge) == 40 << 30 && fileBytes(tooLarge + "-wal") == unreadable)
        }
    }

    /// Whether `/dev/shm`, a memory file system where there is one, takes a sparse file as
    /// long as an `Int` counts (2^63 - 1 bytes; ext4 stops at 16 TiB).
    static let memoryFileSystemTakesTheLongestFile: Bool = {
        let probe = "/dev/shm/restoration-test-\(getpid())-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: probe, contents: nil) else { return false }
        defer { unlink(probe) }
        return truncate(probe, .max) == 0
    }()

    /// A killed app's store without its index whose file says it is as long as an `Int`
    /// counts (sparse): the replay weighed the last commit against the file's length plus
    /// 64 KiB and the commit's frames, a sum that overflowed, and the process trapped
    /// (`restorectl info` of such a store died of "arithmetic overflow", signal 4). It reads
    /// the writer's snapshot.
    @Test(.enabled(if: Self.memoryFileSystemTakesTheLongestFile))
    func aFileAsLongAsAnIntCountsIsReplayedWithoutOverflow() throws {
        try withTemporaryStorePath { path in
            let (saved, main, wal) = try twoSavesOnlyInTheLog(at: path)
            let folder = "/dev/shm/restoration-test-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let longest = storeFiles(main, log: wal, at: folder + "/store.sqlite")
            #expect(truncate(longest, .max) == 0)
            #expect(try ArchiveStore(path: longest, mode: .readOnly).snapshot() == saved)
            #expect(fileSize(longest) == .max && !fileExists(longest + "-shm"))
        }
    }

    /// A store at `path` with two saves held only in its write-ahead log: what its writer
    /// reads, and the bytes of its file and its log as a killed app leaves them (its index,
    /// `-shm`, left out, as a cleaning tool or a backup leaves it).
    private func twoSavesOnlyInTheLog(at path: String) throws -> (saved: ArchiveSnapshot, file: [UInt8], log: [UInt8]) {
        let writer = try ArchiveStore(path: path)
        try writer.save(try SampleArchives.tree(count: 5), header: SampleArchives.header)
        try writer.save(try SampleArchives.tree(count: 7, fill: 3), header: SampleArchives.header)
        #expect(framesInWriteAheadLog(path + "-wal") > 0)
        return (try #require(try writer.snapshot()), try #require(fileBytes(path)), try #require(fileBytes(path + "-wal")))
    }

    /// A store at `path` made of the bytes `file` and `log` (its `-wal`), without an index.
    private func storeFiles(_ file: [UInt8], log: [UInt8], at path: String) -> String {
        #expect(FileManager.default.createFile(atPath: path, contents: Data(file)))
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data(log)))
        return path
    }

    /// The log's index as a writer leaves it for an instant while it updates the index's
    /// header: its two copies differ. A read-only open, which cannot rebuild the index, tries
    /// again for a while (a writer's update would be over), then gives the typed error while
    /// the header stays torn; a read-write open rebuilds the index. The app is another
    /// process, which keeps the store open (in this one, a read-only connection would share
    /// the app's writable index).
    @Test func aTornWriteAheadLogIndexIsATypedErrorForAReaderAndRebuiltByTheApp() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 5), header: SampleArchives.header)
            let held = try withSQLiteHolder(of: path, having: "SELECT count(*) FROM node") {
                // A save while another process holds the store leaves its frames in the log: a
                // log without a frame is read as none, and its index is not looked at.
                do {
                    let app = try ArchiveStore(path: path)
                    try app.save(try SampleArchives.tree(count: 6), header: SampleArchives.header)
                }
                #expect(framesInWriteAheadLog(path + "-wal") > 0)

                let index = try #require(fopen(path + "-shm", "r+b"))
                // Byte 16 of the header's second copy (bytes 48–95): the log's last valid frame.
                var byte: UInt8 = 0
                #expect(fseek(index, 48 + 16, SEEK_SET) == 0 && fread(&byte, 1, 1, index) == 1)
                byte ^= 0xFF
                #expect(fseek(index, 48 + 16, SEEK_SET) == 0 && fwrite(&byte, 1, 1, index) == 1)
                fclose(index)
                try expectReadOnlyOpenTriesAgainUntilTheAppReads(path, nodeCount: 6)
            }
            #expect(held, "the store was never opened there")
        }
    }

    /// SQLite keeps the write-ahead log's size to reuse it, so one large save left a log that
    /// large for as long as the app ran (74 MB at 100,000 nodes) and after it was killed. The
    /// next save after the log was copied back into the file cuts it back to 4 MiB.
    @Test func theWriteAheadLogIsCutBackAfterALargeSave() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 120, stateSize: 64 << 10), header: SampleArchives.header)
            let grown = try #require(fileSize(path + "-wal"))
            #expect(grown > 7_000_000, "the save did not grow the log: \(grown) bytes")
            try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            let after = try #require(fileSize(path + "-wal"))
            #expect(after <= 4 << 20, "the log is still \(after) bytes")
            #expect(try store.snapshot()?.nodes.count == 3)
        }
    }

    /// A launch after the app was killed (as apps in the background are) reads back every
    /// frame of the write-ahead log before its first statement. Left to SQLite, the log
    /// grows to 1,000 pages before it starts over; an opening's first save copies a log of
    /// `logPagesCheckpointedBeforeASave` pages or more into the file first, and its commit
    /// starts the log over. Later saves of the opening leave the log to SQLite.
    @Test func anOpeningsFirstSaveStartsALongWriteAheadLogOver() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let nodes = try SampleArchives.tree(count: 20)
            var generation = try store.save(nodes, header: SampleArchives.header).generation
            // Lifecycle events of the foreground, each committed at once, until the log is long.
            let long = ArchiveStore.logPagesCheckpointedBeforeASave + 20
            var last = LifecycleEvent.didBecomeActive
            func lengthenTheLog() throws {
                while framesInWriteAheadLog(path + "-wal") < long {
                    last = last == .didBecomeActive ? .willEnterForeground : .didBecomeActive
                    try store.record(last)
                }
            }
            try lengthenTheLog()
            let changed = try SampleArchives.tree(count: 20, fill: 2)[7]
            generation = try store.saveChanges([changed], basedOn: generation, header: SampleArchives.header).generation
            let afterSave = framesInWriteAheadLog(path + "-wal")
            #expect(afterSave > 0 && afterSave < 20, "the log holds \(afterSave) pages after the save")
            // A short log: the next save adds its pages to it. A long one again: so does the
            // save after, the opening's second.
            var changedAgain = try SampleArchives.tree(count: 20, fill: 3)[7]
            generation = try store.saveChanges([changedAgain], basedOn: generation, header: SampleArchives.header).generation
            #expect(framesInWriteAheadLog(path + "-wal") > afterSave)
            try lengthenTheLog()
            changedAgain = try SampleArchives.tree(count: 20, fill: 4)[7]
            try store.saveChanges([changedAgain], basedOn: generation, header: SampleArchives.header)
            #expect(framesInWriteAheadLog(path + "-wal") > long)
            // What was copied, and what was saved after, reads back through another connection
            // (every node's checksum checked).
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try reader.snapshot()?.nodes.count == 20)
            #expect(try reader.snapshot()?.nodes.first { $0.path == changed.path } == changedAgain)
            #expect(try reader.journal(limit: 1).last?.kind == .lifecycle(last, last.applicationState))
            // Another opening's first save starts the log over, once the opening has learned
            // how long the log is (at its first commit: an app's launch records its events).
            let opening = try ArchiveStore(path: path)
            try opening.record(.didEnterBackground)
            try opening.save(nodes, header: SampleArchives.header)
            #expect(framesInWriteAheadLog(path + "-wal") < 20)
        }
    }

    /// An app brought back to the foreground many times without being killed saves each time
    /// it goes to the background, and may be killed after any of those saves: the first save
    /// after it records a move towards the background (`willResignActive`, `didEnterBackground`)
    /// starts a long log over, as an opening's first does. Events of the foreground do not.
    @Test func aMoveToTheBackgroundLetsTheNextSaveStartALongLogOver() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            var generation = try store.save(try SampleArchives.tree(count: 20), header: SampleArchives.header).generation
            let long = ArchiveStore.logPagesCheckpointedBeforeASave + 20
            var foreground = LifecycleEvent.didBecomeActive
            var fill: UInt8 = 1
            /// Foreground events until the log is long, then `moves` and a save of one node:
            /// the log's pages after it.
            func session(_ moves: [LifecycleEvent]) throws -> Int {
                while framesInWriteAheadLog(path + "-wal") < long {
                    foreground = foreground == .didBecomeActive ? .willEnterForeground : .didBecomeActive
                    try store.record(foreground)
                }
                for event in moves { try store.record(event) }
                fill += 1
                let changed = try SampleArchives.tree(count: 20, fill: fill)[7]
                generation = try store.saveChanges([changed], basedOn: generation, header: SampleArchives.header)
                    .generation
                return framesInWriteAheadLog(path + "-wal")
            }
            #expect(try session([]) < 20, "the opening's first save")
            #expect(try session([]) > long, "a save in the foreground")
            #expect(try session([.willResignActive]) < 20)
            #expect(try session([]) > long)
            #expect(try session([.didEnterBackground]) < 20)
            #expect(try session([.willEnterForeground, .didBecomeActive]) > long)
            // Recorded after the save, as the app's next trip to the background will find it.
            try store.record(.willResignActive)
            try store.record(.didEnterBackground)
            #expect(try session([.willEnterForeground, .didBecomeActive]) < 20)
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try reader.snapshot()?.nodes == store.snapshot()?.nodes)
            #expect(try reader.snapshot()?.nodes.count == 20)
        }
    }

    /// A store opened again in the same process after its log was removed reads the log's
    /// index (`LogIndexHeader`) through the descriptor SQLite already has open on it, never
    /// one of its own: closing that would release every lock this process holds on the index,
    /// the first store's connection's among them (POSIX locks belong to the process and the
    /// file), and a process opening the store next would take the index for unused and
    /// rebuild it under that connection. Another process sees the first connection's lock on
    /// the index (its byte 128, which every connection holds while it has the index open).
    @Test func aStoreOpenedAgainInTheProcessLeavesTheLocksOnTheLogIndex() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            let script = """
                import fcntl, os, struct, sys
                descriptor = os.open(sys.argv[1], os.O_RDWR)
                lock = fcntl.fcntl(descriptor, fcntl.F_GETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 128, 1, 0))
                print("free" if struct.unpack("hhqqi4x", lock)[0] == fcntl.F_UNLCK else "held")
                """
            func lockOnTheIndex() throws -> String {
                try runProcess("/usr/bin/env", ["python3", "-c", script, path + "-shm"]).standardOutput
            }
            #expect(try lockOnTheIndex() == "held\n")
            try FileManager.default.removeItem(atPath: path + "-wal")
            for mode in [ArchiveStore.AccessMode.readOnly, .readWrite] {
                _ = try? ArchiveStore(path: path, mode: mode)
                #expect(try lockOnTheIndex() == "held\n", "after a \(mode) open")
            }
            withExtendedLifetime(store) {}
        }
    }

    /// The copy of a long log into the file runs only while this process holds the log's write
    /// lock: SQLite before 3.51.3 can lose commits to a copy that races another connection's
    /// commit (its "WAL-reset bug": `Connection+Checkpoints.swift`). While another connection
    /// holds the lock, the save after a move to the background copies nothing (and, the lock
    /// never released, fails busy); the save after it, the lock free, starts the log over.
    @Test func aLongLogIsCopiedOnlyWhileNoOtherConnectionHoldsTheWriteLock() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path, configuration: .init(busyTimeout: .milliseconds(50)))
            let generation = try store.save(try SampleArchives.tree(count: 20), header: SampleArchives.header).generation
            while framesInWriteAheadLog(path + "-wal") < ArchiveStore.logPagesCheckpointedBeforeASave + 20 {
                try store.record(.didBecomeActive)
            }
            try store.record(.didEnterBackground)
            // Past the coarse clock's tick, so that a write now changes the time.
            usleep(30_000)
            let before = fileSizeAndChangeTime(path)
            let writer = try Connection(filename: path, flags: 2 /* SQLITE_OPEN_READWRITE */)
            try writer.execute("BEGIN IMMEDIATE")
            let changed = try SampleArchives.tree(count: 20, fill: 2)[7]
            let error = try #require(throws: ArchiveStoreError.self) {
                try store.saveChanges([changed], basedOn: generation, header: SampleArchives.header)
            }
            guard case .database(let database) = error else { throw error }
            #expect(database.resultCode == .busy)
            #expect(fileSizeAndChangeTime(path) == before, "the log was copied into the file while another connection held the write lock")
            writer.rollback()
            try store.saveChanges([changed], basedOn: generation, header: SampleArchives.header)
            #expect(fileSizeAndChangeTime(path) != before)
            #expect(framesInWriteAheadLog(path + "-wal") < 20)
            let nodes = try #require(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes)
            #expect(nodes.count == 20 && nodes.contains(changed))
        }
    }

    /// A discard empties the write-ahead log; the opening's try at starting a long log over is
    /// not spent on the empty one by the save after it, but kept for when the log is long.
    @Test func aDiscardEmptiesTheLogWithoutSpendingTheOpeningsTry() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 20), header: SampleArchives.header)
            let long = ArchiveStore.logPagesCheckpointedBeforeASave + 20
            func lengthenTheLog() throws {
                while framesInWriteAheadLog(path + "-wal") < long { try store.record(.didBecomeActive) }
            }
            try lengthenTheLog()
            #expect(try store.discard(.main, reason: "the window was closed").writeAheadLogTruncated)
            #expect(framesInWriteAheadLog(path + "-wal") == 0)
            let generation = try store.save(try SampleArchives.tree(count: 20), header: SampleArchives.header).generation
            try lengthenTheLog()
            let changed = try SampleArchives.tree(count: 20, fill: 2)[7]
            try store.saveChanges([changed], basedOn: generation, header: SampleArchives.header)
            let afterSave = framesInWriteAheadLog(path + "-wal")
            #expect(afterSave > 0 && afterSave < 20, "the log holds \(afterSave) pages after the save")
            #expect(try store.snapshot()?.nodes.first { $0.path == changed.path } == changed)
        }
    }

    /// A reader in another connection still reading the log as the opening's first save
    /// commits keeps the log from starting over. The save goes ahead and reads back; later
    /// saves of the opening leave the log to SQLite (one try per opening).
    @Test func aReaderInTheLogKeepsTheFirstSaveFromStartingItOver() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            var generation = try store.save(try SampleArchives.tree(count: 20), header: SampleArchives.header).generation
            let long = ArchiveStore.logPagesCheckpointedBeforeASave + 20
            while framesInWriteAheadLog(path + "-wal") < long { try store.record(.didBecomeActive) }
            let changed = try SampleArchives.tree(count: 20, fill: 2)[7]
            let reader = try ArchiveStore(path: path)
            try reader.withConnection { connection in
                try connection.readTransaction {
                    #expect(try connection.pragmaInteger("SELECT count(*) FROM node") == 20)
                    generation = try store.saveChanges([changed], basedOn: generation, header: SampleArchives.header)
                        .generation
                }
            }
            let afterSave = framesInWriteAheadLog(path + "-wal")
            #expect(afterSave > long)
            #expect(try store.snapshot()?.nodes.first { $0.path == changed.path } == changed)
            try store.saveChanges(
                [try SampleArchives.tree(count: 20, fill: 3)[7]], basedOn: generation, header: SampleArchives.header)
            #expect(framesInWriteAheadLog(path + "-wal") > afterSave)
        }
    }

    /// Counting the log's pages takes the place of SQLite's automatic checkpoint, which the
    /// store does in its stead: without saves, the log still starts over past 1,000 pages.
    @Test func withoutSavesTheWriteAheadLogStillStartsOverAtSQLitesLength() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            var longest = 0
            var frames = 0
            var active = false
            while frames >= longest, longest < 2 * Int(Connection.automaticCheckpointPages) {
                active.toggle()
                try store.record(active ? .didBecomeActive : .willResignActive)
                longest = max(longest, frames)
                frames = framesInWriteAheadLog(path + "-wal")
            }
            #expect(frames < longest)
            #expect((Int(Connection.automaticCheckpointPages)...Int(Connection.automaticCheckpointPages) + 5).contains(longest))
        }
    }

    /// The log's index as a reader can find it for an instant while the app saves: no read
    /// mark at or below the last frame the index's header gave the reader. A read-only
    /// connection cannot set a mark of its own, and SQLite fails its read with
    /// `SQLITE_READONLY_CANTINIT`. It happens when the app commits between the reader's look
    /// at the header and its look at the marks, and then moves the only mark in use past
    /// what the reader saw (the other marks are unused since the log last started over).
    /// Here the marks are set so and stay so: a read-only open tries again for a while, then
    /// gives the typed error; the app's next read sets a mark, and the read-only open works.
    @Test func noReadMarkForAReaderIsTriedAgainThenATypedErrorUntilTheAppReads() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 5), header: SampleArchives.header)
            let held = try withSQLiteHolder(of: path, having: "SELECT count(*) FROM node") {
                // A save while another process holds the store leaves its frames in the log
                // (the last connection to close would have copied them into the file).
                do {
                    let app = try ArchiveStore(path: path)
                    try app.save(try SampleArchives.tree(count: 6), header: SampleArchives.header)
                }
                let index = try #require(fopen(path + "-shm", "r+b"))
                // The index's header (bytes 0–47, then its copy) holds the log's last frame
                // at byte 16; the checkpoint's record follows at byte 96: frames copied back,
                // then the five read marks, four bytes each, in the machine's byte order.
                var words = [UInt32](repeating: 0, count: 30)
                #expect(fread(&words, 4, 30, index) == 30)
                let lastFrame = words[4]
                #expect(lastFrame > 0 && words[24] < lastFrame, "the log's frames are not all copied back")
                var marks: [UInt32] = [lastFrame + 1, .max, .max, .max]
                #expect(fseek(index, 104, SEEK_SET) == 0 && fwrite(&marks, 4, 4, index) == 4)
                fclose(index)
                try expectReadOnlyOpenTriesAgainUntilTheAppReads(path, nodeCount: 6)
            }
            #expect(held, "the store was never opened there")
        }
    }

    /// With the log's index in a state only a writer mends: a read-only open tries again for
    /// a while (about 20 ms), then gives the typed error; a read-write open (the app's next
    /// read) mends the index, and a read-only open then reads the store's `nodeCount` nodes.
    private func expectReadOnlyOpenTriesAgainUntilTheAppReads(
        _ path: String, nodeCount: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let started = ContinuousClock.now
        #expect(throws: ArchiveStoreError.writeAheadLogNeedsRecovery(path: path), sourceLocation: sourceLocation) {
            try ArchiveStore(path: path, mode: .readOnly)
        }
        #expect(ContinuousClock.now - started >= .milliseconds(19), "it gave up at once", sourceLocation: sourceLocation)
        #expect(try ArchiveStore(path: path).snapshot()?.nodes.count == nodeCount, sourceLocation: sourceLocation)
        #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes.count == nodeCount, sourceLocation: sourceLocation)
    }

    @Test(arguments: ["empty", "random", "text", "jpeg", "directory", "one-byte", "header-start"])
    func aFileThatIsNotAStoreIsRefused(kind: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/bad.sqlite"
            switch kind {
            case "empty": #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            case "random":
                var generator = SystemRandomNumberGenerator()
                let bytes = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }
                #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            case "text": #expect(FileManager.default.createFile(atPath: path, contents: Data("hello\n".utf8)))
            // What is left of a store cut short before SQLite's 16-byte header string ends.
            // SQLite may take it for an empty database, which a read-write open would fill
            // anew (3.40 does with one byte): the store refuses it as too short, to the last byte.
            case "one-byte": #expect(FileManager.default.createFile(atPath: path, contents: Data("S".utf8)))
            case "header-start": #expect(FileManager.default.createFile(atPath: path, contents: Data("SQLite format 3".utf8)))
            case "jpeg":
                #expect(FileManager.default.createFile(atPath: path, contents: Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0, count: 4096))))
            default: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            }
            let before = fileBytes(path)
            // A read-write open takes an empty file for a new store: that is what a first
            // launch killed between creating the file and SQLite's first write leaves behind.
            let modes: [ArchiveStore.AccessMode] = kind == "empty" ? [.readOnly] : [.readOnly, .readWrite]
            for mode in modes {
                let error = try #require(throws: ArchiveStoreError.self) { try ArchiveStore(path: path, mode: mode) }
                guard case .notAStore(let errorPath, let reason) = error else {
                    Issue.record("expected notAStore for \(kind) in \(mode), got \(error)")
                    continue
                }
                #expect(errorPath == path)
                if let size = ["one-byte": 1, "header-start": 15][kind] {
                    #expect(reason == "it is too short to be an SQLite database (\(size) bytes)")
                }
            }
            #expect(fileBytes(path) == before)
        }
    }

    /// An empty file (a copy that wrote nothing, a store being made at that instant): a
    /// read-only open says so, rather than calling it an empty SQLite database, and leaves it
    /// as it is; the app's read-write open makes it a store.
    @Test func anEmptyFileOpenedReadWriteBecomesAStore() throws {
        try withTemporaryStorePath { path in
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            #expect(throws: ArchiveStoreError.notAStore(path: path, reason: "the file is empty")) {
                try ArchiveStore(path: path, mode: .readOnly)
            }
            #expect(fileBytes(path) == [] && !FileManager.default.fileExists(atPath: path + "-wal"))
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header)
            #expect(try store.snapshot()?.nodes.count == 2)
        }
    }

    /// An SQLite database with a header and nothing else (as `VACUUM` on a new file, or a
    /// journal mode set, leaves it): an inspection refuses it as empty and leaves it as it was;
    /// the app's read-write open makes it a store, as it does an empty file.
    @Test(arguments: ["VACUUM", "PRAGMA journal_mode = WAL"])
    func anEmptySQLiteDatabaseIsRefusedReadOnlyAndBecomesAStoreReadWrite(sql: String) throws {
        try withTemporaryStorePath { path in
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            try tamper(with: path, sql)
            let before = try #require(fileBytes(path))
            // One page: its size is in the database header (bytes 16 and 17, big-endian; 1
            // for 65,536), whatever page size this SQLite was built with.
            let pageSize = before.count >= 18 ? Int(before[16]) << 8 | Int(before[17]) : 0
            #expect(before.count == (pageSize == 1 ? 65_536 : pageSize))
            #expect(throws: ArchiveStoreError.notAStore(path: path, reason: "it is an empty SQLite database")) {
                try ArchiveStore(path: path, mode: .readOnly)
            }
            #expect(fileBytes(path) == before)
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header)
            #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes.count == 2)
        }
    }

    /// Another program's database: tables without our application id, or another id (with or
    /// without tables: only a database without any id is counted for objects), or our id
    /// without the schema history every store has (looked for only when reading it fails).
    @Test(arguments: [
        "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('x')",
        "PRAGMA application_id = 42",
        "PRAGMA application_id = 42; CREATE TABLE contacts (name TEXT)",
        "PRAGMA application_id = \(SchemaMigrator.applicationID)",
        "PRAGMA application_id = \(SchemaMigrator.applicationID); CREATE TABLE contacts (name TEXT)",
    ])
    func aForeignSQLiteDatabaseIsRefusedAndLeftUnchanged(sql: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/foreign.sqlite"
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            try tamper(with: path, sql)
            let before = fileBytes(path)
            for mode in [ArchiveStore.AccessMode.readOnly, .readWrite] {
                let error = try #require(throws: ArchiveStoreError.self) { try ArchiveStore(path: path, mode: mode) }
                guard case .notAStore = error else {
                    Issue.record("expected notAStore, got \(error)")
                    continue
                }
            }
            #expect(fileBytes(path) == before)
        }
    }

    /// Our id with a schema history that cannot be read (another program's table of that
    /// name): refused for what SQLite said, not taken for a store without a history, and left
    /// unchanged.
    @Test func aStoreWhoseHistoryCannotBeReadIsRefusedAndLeftUnchanged() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/odd.sqlite"
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            try tamper(with: path, "PRAGMA application_id = \(SchemaMigrator.applicationID); CREATE TABLE schema_migration (x)")
            let before = fileBytes(path)
            for mode in [ArchiveStore.AccessMode.readOnly, .readWrite] {
                let error = try #require(throws: ArchiveStoreError.self) { try ArchiveStore(path: path, mode: mode) }
                #expect("\(error)".contains("no such column: identifier"), "\(mode): \(error)")
            }
            #expect(fileBytes(path) == before)
        }
    }

    @Test func defaultLocationFollowsXDGStateHome() throws {
        let path = try ArchiveStore.defaultPath(appIdentifier: "com.example.orders")
        let state = ProcessInfo.processInfo.environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
        #expect(path == (state ?? home + "/.local/state") + "/com.example.orders/restoration.sqlite")
        for bad in ["", ".", "..", "a/b", "tab\there"] {
            #expect(throws: ArchiveStoreError.self) { try ArchiveStore.defaultPath(appIdentifier: bad) }
        }
    }

    @Test func defaultLocationIsCreatedOwnerOnly() async {
        await #expect(processExitsWith: .success) {
            let ok = try withTemporaryDirectory { directory -> Bool in
                setenv("XDG_STATE_HOME", directory + "/xdg", 1)
                let store = try ArchiveStore(appIdentifier: "com.example.orders")
                return store.path == directory + "/xdg/com.example.orders/restoration.sqlite"
                    && fileMode(directory + "/xdg") == 0o700 && fileMode(directory + "/xdg/com.example.orders") == 0o700
                    && fileMode(store.path) == 0o600
            }
            exit(ok ? 0 : 1)
        }
    }

    /// As the XDG base directory specification has it, a relative `$XDG_STATE_HOME` is
    /// ignored: the store goes under `$HOME/.local/state`, and when `$HOME` is relative too,
    /// the location is refused rather than taken from the working folder.
    @Test func aRelativeStateHomeIsIgnored() async {
        await #expect(processExitsWith: .success) {
            setenv("XDG_STATE_HOME", "relative/state", 1)
            setenv("HOME", "/home/someone", 1)
            let path = try ArchiveStore.defaultPath(appIdentifier: "com.example.orders")
            setenv("HOME", "home/someone", 1)
            let refused = (try? ArchiveStore.defaultPath(appIdentifier: "com.example.orders")) == nil
            exit(path == "/home/someone/.local/state/com.example.orders/restoration.sqlite" && refused ? 0 : 1)
        }
    }

    /// A folder the environment names in another encoding than UTF-8 (`café` in Latin-1):
    /// a `String` held it with U+FFFD in place of its byte, so that the store went to another
    /// folder, which a read-write open created beside the one named. Refused now, naming the
    /// variable, and nothing is created; `$XDG_STATE_HOME`, when it is UTF-8, is used whatever
    /// `$HOME` is.
    @Test func aFolderTheEnvironmentNamesInAnotherEncodingIsRefused() async {
        await #expect(processExitsWith: .success) {
            let ok = try withTemporaryDirectory { directory -> Bool in
                let latin1 = Array((directory + "/caf").utf8CString.dropLast()) + [CChar(bitPattern: 0xE9), 0]
                var refused: [String] = []
                for variable in ["XDG_STATE_HOME", "HOME"] {
                    unsetenv("XDG_STATE_HOME")
                    setenv(variable, latin1, 1)
                    do {
                        _ = try ArchiveStore(appIdentifier: "com.example.orders")
                    } catch let error as ArchiveStoreError {
                        guard case .invalidLocation(let reason) = error, reason.hasPrefix("$\(variable) is not UTF-8"),
                            reason.hasSuffix("(give ArchiveStore(path:) a path in UTF-8 instead)")
                        else {
                            return false
                        }
                        refused.append(variable)
                    }
                }
                setenv("XDG_STATE_HOME", directory + "/xdg", 1)
                let store = try ArchiveStore(appIdentifier: "com.example.orders")
                let made = try FileManager.default.contentsOfDirectory(atPath: directory)
                return refused == ["XDG_STATE_HOME", "HOME"]
                    && store.path == directory + "/xdg/com.example.orders/restoration.sqlite" && made == ["xdg"]
            }
            exit(ok ? 0 : 1)
        }
    }

    // MARK: A file removed or replaced under an open store

    /// A user or a cleaning tool deleting the app's files while it runs: SQLite, in WAL mode,
    /// went on committing into the file it had open, which no path named any more, so every
    /// later save and event "succeeded" and was lost when the app quit. Each write now
    /// refuses, naming the path, and makes no file; reads still see the file as it was, and a
    /// store opened at the path again starts afresh there.
    @Test func aStoreWhoseFileWasRemovedRefusesToWrite() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/state/store.sqlite"
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            try store.record(.willFinishLaunching)
            try FileManager.default.removeItem(atPath: directory + "/state")

            let moved = ArchiveStoreError.storeFileMoved(path: path)
            #expect(throws: moved) { try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header) }
            #expect(throws: moved) { try store.record(.didEnterBackground) }
            #expect(throws: moved) { try store.discard(reason: "the user quit") }
            #expect(!FileManager.default.fileExists(atPath: directory + "/state"))
            #expect(try store.snapshot()?.nodes.count == 3, "reads see the file as it was")
            #expect(moved.description.contains("'\(path)', its write-ahead log or the log's index was removed, renamed or replaced"))
            #expect(!moved.isUnusableStore, "erasing would destroy a file put in its place")

            let reopened = try ArchiveStore(path: path)
            #expect(try reopened.snapshot() == nil)
            try reopened.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
            // The path names another file now: the first store still refuses, and leaves it be.
            #expect(throws: moved) { try store.save(try SampleArchives.tree(count: 5), header: SampleArchives.header) }
            #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes.count == 4)
        }
    }

    /// What happened to a store's write-ahead log while the app ran.
    enum LostLog: String, CaseIterable, CustomTestStringConvertible {
        case removed, renamed
        /// Removed, then made again, empty, by a store opened at the path.
        case madeAgain

        var testDescription: String { rawValue }
    }

    /// The write-ahead log removed or renamed alone while the app runs (a cleaning tool taking
    /// `-wal` for a temporary file): SQLite went on committing into the log it had open, which
    /// no path named, so every later save and event "succeeded" and was lost when the app was
    /// killed, and a store opened at the path meanwhile failed to read. Each write now
    /// refuses and writes nothing, and reads see what the store committed. Released and
    /// opened again, the store reads the file as SQLite last copied the log into it: the
    /// release does not copy a log no path names (a kill during the copy would leave the file
    /// torn, with no log to finish it from).
    @Test(arguments: LostLog.allCases)
    func aStoreWhoseWriteAheadLogWasRemovedRefusesToWrite(_ lost: LostLog) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let copied = try SampleArchives.tree(count: 3)
            let saved = try SampleArchives.tree(count: 5, fill: 2)
            do {
                let sink = LogSink()
                let store = try ArchiveStore(path: path, logger: Logger(label: "test") { _ in sink })
                try store.save(copied, header: SampleArchives.header)
                try store.record(.willFinishLaunching)
                _ = try store.withConnection { connection in try connection.checkpointPassively() }
                try store.save(saved, header: SampleArchives.header)
                switch lost {
                case .removed, .madeAgain: try FileManager.default.removeItem(atPath: path + "-wal")
                case .renamed: try FileManager.default.moveItem(atPath: path + "-wal", toPath: directory + "/moved-wal")
                }
                if lost == .madeAgain {
                    // The opening is refused: SQLite's index of the log, which this store
                    // shares, names frames the new log does not have.
                    #expect(throws: ArchiveStoreError.writeAheadLogNeedsRecovery(path: path)) {
                        try ArchiveStore(path: path)
                    }
                    #expect(fileSize(path + "-wal") == 0)
                }

                let moved = ArchiveStoreError.storeFileMoved(path: path)
                #expect(throws: moved) { try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header) }
                #expect(throws: moved) { try store.record(.didEnterBackground) }
                #expect(throws: moved) { try store.discard(reason: "the user quit") }
                #expect(sink.messages.contains(
                    "A write to the store at '\(path)' was refused: the write-ahead log (-wal) was removed or renamed since it was opened"))
                #expect((fileSize(path + "-wal") ?? 0) == 0, "nothing was written")
                #expect(try store.snapshot()?.nodes == saved, "reads see what the store committed")
            }
            let reopened = try ArchiveStore(path: path)
            #expect(try reopened.snapshot()?.nodes == copied, "the file as SQLite last copied the log into it")
            #expect(try reopened.journal().map(\.kind) == [.lifecycle(.willFinishLaunching, .inactive)])
            let next = try SampleArchives.tree(count: 4)
            try reopened.save(next, header: SampleArchives.header)
            #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes == next)
        }
    }

    /// A log that lacks commits its index names, as long as the index says but with holes
    /// where those frames would be (another process's writes after them: an older version of
    /// the library's), is not copied into the file: a checkpoint reads frames by the index,
    /// and copied zeros over the pages they hold. Nor at the store's close.
    @Test func aLogLackingCommitsItsIndexNamesIsNotCopiedIntoTheFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let saved = try SampleArchives.tree(count: 3)
            var store: ArchiveStore? = try storeWhoseLogLacksCommits(saved, at: path)
            let index = try #require(LogIndexHeader(indexAt: path + "-shm"))
            #expect(index.lastCommittedFrame > 0 && index.lastCommittedFrame < 5)
            #expect(Int64(try #require(fileSize(path + "-wal"))) >= index.logSize, "as long as the index says")

            #expect(try store?.withConnection { connection in try connection.checkpointPassively() } == false)
            store = nil
            let next = try ArchiveStore(path: path)
            // (The sample states are not the keyed coder's: their nodes' problems are left out.)
            let problems = try next.check().filter { $0.path == nil }
            #expect(problems.isEmpty, "\(problems)")
            #expect(try next.snapshot()?.nodes == saved)
        }
    }

    /// A compaction (`VACUUM`, after a discard that frees most of the store) of a store whose
    /// log lacks commits its index names is not run, as a checkpoint is not: it would read
    /// every page through the index, from the log's holes (here `VACUUM` fails on them,
    /// reading short), and write the store again after frames the next launch does not read.
    @Test func aLogLackingCommitsItsIndexNamesIsNotCompacted() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let saved = try SampleArchives.tree(count: 3)
            var store: ArchiveStore? = try storeWhoseLogLacksCommits(saved, at: path)
            let before = try #require(fileBytes(path + "-wal"))

            #expect(try store?.withConnection { connection in try connection.compact() } == false)
            #expect(fileBytes(path + "-wal") == before, "nothing was written")
            store = nil
            let next = try ArchiveStore(path: path)
            #expect(try next.check().filter { $0.path == nil }.isEmpty)
            #expect(try next.snapshot()?.nodes == saved)
        }
    }

    /// A store at `path` that saved `saved`, opened after its log was removed, whose log then
    /// lacks commits its index names: a raw connection (an SQLite shell, an older version of
    /// the app) that had the store open commits into the removed log, which the index then
    /// names, and the new log is written past those frames, its first bytes left as zeros.
    private func storeWhoseLogLacksCommits(_ saved: [ArchivedNode], at path: String) throws -> ArchiveStore {
        try ArchiveStore(path: path).save(saved, header: SampleArchives.header)
        var shell: Connection? = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
        try shell?.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try FileManager.default.removeItem(atPath: path + "-wal")
        let store = try ArchiveStore(path: path)
        try shell?.execute("UPDATE archive SET name = name")
        shell = nil
        let log = try #require(FileHandle(forWritingAtPath: path + "-wal"))
        try log.seek(toOffset: 32 + 4 * UInt64(24 + 4096))
        try log.write(contentsOf: Data(repeating: 7, count: 24 + 4096))
        try log.close()
        return store
    }

    /// What a read of a log with holes where its index names commits finds (another
    /// process's writes after those frames: an older version of the library's, or a program
    /// without it) is not damage: SQLite read zeros there, and the store said its file was
    /// not an SQLite database, or malformed, which an app answers by erasing it; `check()`
    /// named the zeros as damage. Read-write and read-only, at the opening, at a read and at
    /// a check (of a store opened before), it says the log needs recovery, until the process
    /// holding the index is gone; then the store reads as its file holds it.
    @Test(arguments: [true, false])
    func aLogWithHolesWhereItsIndexNamesCommitsIsNotDamage(firstPage: Bool) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let saved = try SampleArchives.tree(count: 3)
            try ArchiveStore(path: path).save(saved, header: SampleArchives.header)
            var readOnly: ArchiveStore? = try ArchiveStore(path: path, mode: .readOnly)
            var shell: Connection? = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
            try shell?.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try FileManager.default.removeItem(atPath: path + "-wal")
            #expect(FileManager.default.createFile(atPath: path + "-wal", contents: nil))
            // Opened while the index names no frame: it opens, and reads through the new log.
            var opened: ArchiveStore? = try ArchiveStore(path: path)
            // Into the removed log, which the index then names (the first page, its schema
            // version written as it is, or the archive table's); the new log written past
            // those frames.
            let version = try #require(try shell?.pragmaInteger("PRAGMA user_version"))
            try shell?.execute(firstPage ? "PRAGMA user_version = \(version)" : "UPDATE archive SET name = name")
            let log = try #require(FileHandle(forWritingAtPath: path + "-wal"))
            try log.seek(toOffset: 32 + 4 * UInt64(24 + 4096))
            try log.write(contentsOf: Data(repeating: 0, count: 24 + 4096))
            try log.close()

            let needsRecovery = ArchiveStoreError.writeAheadLogNeedsRecovery(path: path)
            #expect(throws: needsRecovery) { try ArchiveStore(path: path) }
            #expect(throws: needsRecovery) { try ArchiveStore(path: path, mode: .readOnly) }
            #expect(throws: needsRecovery) { try readOnly?.snapshot() }
            #expect(throws: needsRecovery) { try opened?.snapshot() }
            #expect(throws: needsRecovery) { try opened?.check() }
            #expect(throws: needsRecovery) { try readOnly?.check() }

            (shell, readOnly, opened) = (nil, nil, nil)
            let next = try ArchiveStore(path: path)
            #expect(try next.snapshot()?.nodes == saved)
            #expect(try next.check().filter { $0.path == nil }.isEmpty)
        }
    }

    /// The log removed when it was empty (a discard had emptied it), and made again, as empty,
    /// by a store opened since: the two logs were of one size, which was all that told them
    /// apart, and the first store's next save went into the log no path names, acknowledged,
    /// and lost once the app was killed. The store now knows its log by its inode too: the
    /// save is refused, and the store opened since saves where the next launch reads.
    @Test func aLogMadeAgainAsEmptyAsTheOneTheStoreHasOpenIsSeen() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            _ = try store.discard(reason: "the user quit")
            #expect(fileSize(path + "-wal") == 0, "the discard emptied the log")
            try FileManager.default.removeItem(atPath: path + "-wal")
            let other = try ArchiveStore(path: path)
            #expect(fileSize(path + "-wal") == 0, "made again, as empty")

            #expect(throws: ArchiveStoreError.storeFileMoved(path: path)) {
                try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
            }
            let saved = try SampleArchives.tree(count: 5)
            try other.save(saved, header: SampleArchives.header)
            let killed = try killedAppsFiles(of: path, as: directory + "/killed.sqlite", logBytes: .max)
            #expect(try ArchiveStore(path: killed).snapshot()?.nodes == saved)
        }
    }

    /// The log's index (`-shm`) removed while the app runs: a process opening the store then
    /// makes an index of its own, and the two write over each other's commits in the log
    /// (in Python with this SQLite, one process's 2,100 acknowledged inserts of 3,765 were
    /// gone, without an error). Each write refuses; the store's release copies nothing (the
    /// index it has may not be the log's any more), and the store opened again rebuilds the
    /// index from the log, which holds every save.
    @Test func aStoreWhoseLogIndexWasRemovedRefusesToWrite() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let saved = try SampleArchives.tree(count: 3)
            do {
                let sink = LogSink()
                let store = try ArchiveStore(path: path, logger: Logger(label: "test") { _ in sink })
                try store.save(try SampleArchives.tree(count: 2), header: SampleArchives.header)
                try store.save(saved, header: SampleArchives.header)
                try FileManager.default.removeItem(atPath: path + "-shm")
                let moved = ArchiveStoreError.storeFileMoved(path: path)
                #expect(throws: moved) { try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header) }
                #expect(sink.messages.contains(
                    "A write to the store at '\(path)' was refused: the log's index (-shm) was removed or renamed since it was opened"))
                #expect(throws: moved) { try store.record(.didEnterBackground) }
                #expect(try store.snapshot()?.nodes == saved)
            }
            #expect(FileManager.default.fileExists(atPath: path + "-wal"), "the release left the log")
            let reopened = try ArchiveStore(path: path)
            #expect(try reopened.snapshot()?.nodes == saved)
            #expect(try reopened.journal().isEmpty)
        }
    }

    /// A store opened while another holds a removed log: SQLite's index (`-shm`) names frames
    /// the new, empty log does not have, and the read fails short; it says so, where it said
    /// "disk I/O error". Once the first store is released, the store opens.
    @Test func aStoreOpenedWhileAnotherHoldsARemovedLogSaysTheLogNeedsRecovery() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            var holder: ArchiveStore? = try ArchiveStore(path: path)
            try holder?.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            try FileManager.default.removeItem(atPath: path + "-wal")
            let needsRecovery = ArchiveStoreError.writeAheadLogNeedsRecovery(path: path)
            #expect(throws: needsRecovery) { try ArchiveStore(path: path) }
            #expect(needsRecovery.description.contains("the log was removed or cut while a process had the store open"))
            holder = nil
            #expect(try ArchiveStore(path: path).snapshot() == nil, "the removed log held the only save")
        }
    }

    /// A store opened while another holds a removed log, whose commits changed only pages the
    /// opening does not read (a save since the log was last copied into the file): it opened,
    /// through the index naming the removed log's commits, and SQLite wrote its commits after
    /// those frames, in the log it made again, which has no header. The next launch reads
    /// none of them: a launch's event, acknowledged, was lost once the app was killed. The
    /// opening now says the log needs recovery; once the first store is released, the store
    /// opens, and what it writes stays. So with a log made again as long as the index says,
    /// without a header (another process's writes there, an older version of the library's):
    /// its salts are not the index's.
    @Test(arguments: [false, true])
    func aStoreOpenedWhileAnotherHoldsARemovedLogDoesNotOpenWhereItsWritesAreLost(writtenAfter: Bool) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let copied = try SampleArchives.tree(count: 3)
            var holder: ArchiveStore? = try storeCopiedIntoItsFile(copied, at: path)
            try holder?.save(try SampleArchives.tree(count: 5, fill: 2), header: SampleArchives.header)
            let logSize = try #require(fileSize(path + "-wal"))
            try FileManager.default.removeItem(atPath: path + "-wal")
            if writtenAfter {
                #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data(count: logSize + 4096)))
            }
            let needsRecovery = ArchiveStoreError.writeAheadLogNeedsRecovery(path: path)
            #expect(throws: needsRecovery) { try ArchiveStore(path: path) }

            holder = nil
            let store = try ArchiveStore(path: path)
            try store.record(.willFinishLaunching)
            let killed = try killedAppsFiles(of: path, as: directory + "/killed.sqlite", logBytes: .max)
            let next = try ArchiveStore(path: killed)
            #expect(try next.journal().map(\.kind) == [.lifecycle(.willFinishLaunching, .inactive)])
            #expect(try next.snapshot()?.nodes == copied, "the file as SQLite last copied the removed log into it")
        }
    }

    /// A commit the store's log lacks: a connection without the library (an SQLite shell, an
    /// older version of the app), open as the log was emptied and removed, commits into the
    /// log no path names, which the index then names, while a store opened since made the log
    /// again. The store's writes, which SQLite appended after those frames, where the next
    /// launch does not read them, are refused: the log needs recovery. Nothing is written.
    @Test func aWriteWhoseLogLacksACommitItsIndexNamesIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let saved = try SampleArchives.tree(count: 3)
            try ArchiveStore(path: path).save(saved, header: SampleArchives.header)
            let shell = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
            try shell.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try FileManager.default.removeItem(atPath: path + "-wal")
            let sink = LogSink()
            // The index names no frame: the store opens, and makes the log again.
            let store = try ArchiveStore(path: path, logger: Logger(label: "test") { _ in sink })
            #expect(fileSize(path + "-wal") == 0)
            // The archive's row written as it is: its page, not the first (a write's first read).
            try shell.execute("UPDATE archive SET name = name")

            let needsRecovery = ArchiveStoreError.writeAheadLogNeedsRecovery(path: path)
            #expect(throws: needsRecovery) { try store.record(.willFinishLaunching) }
            #expect(throws: needsRecovery) { try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header) }
            #expect(sink.messages.contains(
                "A write to the store at '\(path)' was refused: the write-ahead log (-wal) lacks commits its index (-shm) "
                    + "names: it was removed or cut while the store was open"))
            #expect(fileSize(path + "-wal") == 0, "nothing was written")
        }
    }

    /// The store's own write-ahead log cut in place while the app runs (the same file, emptied
    /// or shortened: a tool that truncates logs, a copy-and-truncate rotation), not removed:
    /// its path still names the log the store has open, so nothing says the file moved, and
    /// the index still names the commits cut away. A write is refused, saying the log needs
    /// recovery (SQLite would append it after those frames, where the next launch does not
    /// read), and writes nothing; so are a check and a read-only open, which would read the
    /// cut frames as missing. Released and opened again, the store reads the file as SQLite
    /// last copied the log into it (the release copies nothing from the cut log), and saves.
    @Test(arguments: [0, 100, 10_000])
    func aLogCutInPlaceWhileTheStoreIsOpenRefusesToWriteUntilItIsOpenedAgain(length: Int) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let copied = try SampleArchives.tree(count: 3)
            do {
                let sink = LogSink()
                let store = try storeCopiedIntoItsFile(copied, at: path, logger: Logger(label: "test") { _ in sink })
                try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
                try store.record(.willFinishLaunching)
                #expect(try #require(fileSize(path + "-wal")) > length)
                #expect(truncate(path + "-wal", off_t(length)) == 0)

                let needsRecovery = ArchiveStoreError.writeAheadLogNeedsRecovery(path: path)
                #expect(throws: needsRecovery) { try store.save(try SampleArchives.tree(count: 5), header: SampleArchives.header) }
                #expect(throws: needsRecovery) { try store.record(.didEnterBackground) }
                #expect(throws: needsRecovery) { try store.discard(reason: "the user quit") }
                #expect(throws: needsRecovery) { try store.check() }
                #expect(throws: needsRecovery) { try ArchiveStore(path: path, mode: .readOnly) }
                #expect(sink.messages.contains {
                    $0.hasPrefix("A write to the store at '\(path)' was refused: the write-ahead log (-wal) lacks commits")
                })
                #expect(fileSize(path + "-wal") == length, "nothing was written")
            }
            let reopened = try ArchiveStore(path: path)
            #expect(try reopened.snapshot()?.nodes == copied, "the file as SQLite last copied the log into it")
            #expect(try reopened.check().filter { $0.path == nil }.isEmpty)
            let next = try SampleArchives.tree(count: 2)
            try reopened.save(next, header: SampleArchives.header)
            #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes == next)
        }
    }

    /// A read-only open (`restorectl`) while an app holds a removed log read the file alone, as
    /// if no log had been there: a store SQLite had not copied into its file read as "an
    /// empty SQLite database", and one it had as the store before the removed log's saves,
    /// which `check()` called healthy. The index left beside the file names those commits;
    /// the open says the log needs recovery, changing no file, until the app's store is
    /// released and opened again.
    @Test func aReadOnlyOpenOfAStoreWhoseLogWasRemovedSaysTheLogNeedsRecovery() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let copied = try SampleArchives.tree(count: 3)
            let needsRecovery = ArchiveStoreError.writeAheadLogNeedsRecovery(path: path)
            do {
                let holder = try storeCopiedIntoItsFile(copied, at: path)
                try holder.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
                try FileManager.default.removeItem(atPath: path + "-wal")
                let before = try [path, path + "-shm"].map { try #require(fileBytes($0)) }
                #expect(throws: needsRecovery) { try ArchiveStore(path: path, mode: .readOnly) }
                #expect(try [path, path + "-shm"].map { try #require(fileBytes($0)) } == before)
                #expect(!fileExists(path + "-wal"), "the read-only open made a log")
            }
            // The release copies nothing and leaves the index: only a read-write open mends it.
            #expect(throws: needsRecovery) { try ArchiveStore(path: path, mode: .readOnly) }
            #expect(try ArchiveStore(path: path).snapshot()?.nodes == copied)
            #expect(try ArchiveStore(path: path, mode: .readOnly).snapshot()?.nodes == copied)
        }
    }

    /// The files a killed app leaves, its log then removed: the index names commits the file
    /// does not hold, and a read-only open says the log needs recovery; the app's next launch
    /// rebuilds the index (SQLite does so silently) and logs what went with the log. An index
    /// whose every commit was copied into the file names nothing missing: the file alone is
    /// the store. With the log there, such an index is no loss, and nothing is logged.
    @Test func aReadOnlyOpenReadsTheFileAloneOnlyWhenTheIndexNamesNothingMissing() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let copied = try SampleArchives.tree(count: 3)
            let holder = try storeCopiedIntoItsFile(copied, at: path)
            let allCopied = try killedAppsFiles(of: path, as: directory + "/all-copied.sqlite")
            #expect(try ArchiveStore(path: allCopied, mode: .readOnly).snapshot()?.nodes == copied)
            try holder.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
            // With its log beside it, an index naming commits not yet copied into the file is
            // a store in use (the holder's save) or a killed app's: nothing is lost or said.
            let inUse = LogSink()
            let opened = try ArchiveStore(path: path, logger: Logger(label: "test") { _ in inUse })
            #expect(try opened.snapshot()?.nodes.count == 4)
            #expect(inUse.messages == ["Opened the archive store at '\(path)' (read-write)"])
            let notCopied = try killedAppsFiles(of: path, as: directory + "/not-copied.sqlite")
            #expect(throws: ArchiveStoreError.writeAheadLogNeedsRecovery(path: notCopied)) {
                try ArchiveStore(path: notCopied, mode: .readOnly)
            }
            let sink = LogSink()
            let logger = Logger(label: "test") { _ in sink }
            #expect(try ArchiveStore(path: allCopied, logger: logger).snapshot()?.nodes == copied)
            let launch = try ArchiveStore(path: notCopied, logger: logger)
            #expect(try launch.snapshot()?.nodes == copied, "the save in the log is lost")
            let warnings = sink.messages.filter { $0.contains("write-ahead log of") && $0.contains("was removed") }
            #expect(warnings.count == 1)
            #expect(warnings.allSatisfy {
                $0.hasPrefix("The write-ahead log of '\(notCopied)' was removed (while a process had the store open, or")
                    && $0.hasSuffix(" frames of commits not yet copied into the file: the saves and events they held are lost")
            })
        }
    }

    /// A log no longer than its 32-byte header holds no commit: the log started over, and the
    /// power cut before a frame of the next commit reached the disk (SQLite syncs the header,
    /// and with `synchronous=NORMAL` not the frames), or the app was killed between the two
    /// writes. A read-only open (`restorectl`) through a header of exactly 32 bytes, with the
    /// killed app's index beside it, spun 10 seconds and failed with SQLite's "locking
    /// protocol" (found by the power-cut torture): SQLite rebuilds a private index from such a
    /// log without its salts, then finds them differing from the log's, and tries again. Such
    /// a log is read as no log: the file alone is the store when the index names nothing
    /// missing, and when it names commits the log lost, the log needs recovery. Shorter, SQLite
    /// read the file alone whatever the index named.
    @Test(arguments: [0, 1, 31, 32])
    func aReadOnlyOpenThroughALogWithoutAFrameReadsTheFileAlone(length: Int) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let copied = try SampleArchives.tree(count: 3)
            let holder = try storeCopiedIntoItsFile(copied, at: path)
            let allCopied = try killedAppsFiles(of: path, as: directory + "/all-copied.sqlite", logBytes: length)
            #expect(try ArchiveStore(path: allCopied, mode: .readOnly).snapshot()?.nodes == copied)
            try holder.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
            let notCopied = try killedAppsFiles(of: path, as: directory + "/not-copied.sqlite", logBytes: length)
            #expect(throws: ArchiveStoreError.writeAheadLogNeedsRecovery(path: notCopied)) {
                try ArchiveStore(path: notCopied, mode: .readOnly)
            }
            // The app's next launch reads what the read-only open did, and mends the log.
            #expect(try ArchiveStore(path: notCopied).snapshot()?.nodes == copied)
            #expect(try ArchiveStore(path: notCopied, mode: .readOnly).snapshot()?.nodes == copied)
        }
    }

    /// A killed app's log cut to one byte (a torn write): SQLite reports a file of one byte
    /// as empty (a work-around of its own for another file system), and the check that the
    /// log's path still names the open log took the two sizes for two files, refusing every
    /// save with `storeFileMoved` (found by `log-damage`). Of any other length, the log is
    /// read as far as it holds whole frames.
    @Test(arguments: [1, 2, 31, 33])
    func aLogCutShortLeavesAStoreThatSaves(length: Int) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let copied = try SampleArchives.tree(count: 3)
            let holder = try storeCopiedIntoItsFile(copied, at: path)
            try holder.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
            let copy = directory + "/killed.sqlite"
            let log = try #require(fileBytes(path + "-wal"))
            #expect(FileManager.default.createFile(atPath: copy, contents: Data(try #require(fileBytes(path)))))
            #expect(FileManager.default.createFile(atPath: copy + "-wal", contents: Data(log.prefix(length))))
            let store = try ArchiveStore(path: copy)
            #expect(try store.snapshot()?.nodes == copied)
            let next = try SampleArchives.tree(count: 5)
            try store.save(next, header: SampleArchives.header)
            #expect(try store.snapshot()?.nodes == next)
        }
    }

    /// The files of the open store at `path` copied to `copy`, as a killed app leaves them: the
    /// file and the log's index, and the first `logBytes` of the log (no log when `nil`).
    private func killedAppsFiles(of path: String, as copy: String, logBytes: Int? = nil) throws -> String {
        for suffix in ["", "-shm"] + (logBytes == nil ? [] : ["-wal"]) {
            let bytes = try #require(fileBytes(path + suffix))
            let kept = suffix == "-wal" ? Array(bytes.prefix(logBytes ?? 0)) : bytes
            #expect(FileManager.default.createFile(atPath: copy + suffix, contents: Data(kept)))
        }
        return copy
    }

    /// A store at `path` that saved `nodes` and copied its log into its file (a checkpoint):
    /// what a store opened again finds after its log is lost. It logs to `logger`, if any.
    private func storeCopiedIntoItsFile(_ nodes: [ArchivedNode], at path: String, logger: Logger? = nil) throws
        -> ArchiveStore
    {
        let store = try ArchiveStore(path: path, logger: logger)
        try store.save(nodes, header: SampleArchives.header)
        _ = try store.withConnection { connection in try connection.checkpointPassively() }
        return store
    }

    /// A save after a move to the background copies a long log into the file before its
    /// transaction (`write(shorteningTheLog:_:)`); from a log no path names it copies nothing,
    /// since a kill during the copy would leave the file torn. The save is refused after.
    @Test func aSaveCopiesNothingFromALogItsPathNoLongerNames() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let copied = try SampleArchives.tree(count: 3)
            do {
                let store = try storeCopiedIntoItsFile(copied, at: path)
                var active = false
                while framesInWriteAheadLog(path + "-wal") < ArchiveStore.logPagesCheckpointedBeforeASave + 20 {
                    active.toggle()
                    try store.record(active ? .didBecomeActive : .willEnterForeground)
                }
                try store.record(.didEnterBackground)
                try FileManager.default.removeItem(atPath: path + "-wal")
                #expect(throws: ArchiveStoreError.storeFileMoved(path: path)) {
                    try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
                }
            }
            let reopened = try ArchiveStore(path: path)
            #expect(try reopened.snapshot()?.nodes == copied)
            #expect(try reopened.journal().isEmpty, "the events were in the removed log only")
        }
    }

    /// A discard's truncation of the log (and an erase's) copies nothing from a log its path
    /// no longer names either: it answers as when a reader holds the log.
    @Test func aTruncationCopiesNothingFromALogItsPathNoLongerNames() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            let copied = try SampleArchives.tree(count: 3)
            do {
                let store = try storeCopiedIntoItsFile(copied, at: path)
                try store.save(try SampleArchives.tree(count: 4, fill: 2), header: SampleArchives.header)
                try FileManager.default.removeItem(atPath: path + "-wal")
                #expect(try store.withConnection { connection in try connection.checkpointTruncating() } == false)
            }
            #expect(try ArchiveStore(path: path).snapshot()?.nodes == copied)
        }
    }

    /// The store's folder renamed: the file still exists, elsewhere, and the path names none.
    @Test func aStoreWhoseFolderWasRenamedRefusesToWrite() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/state/store.sqlite"
            let store = try ArchiveStore(path: path)
            try store.save(try SampleArchives.tree(count: 3), header: SampleArchives.header)
            try FileManager.default.moveItem(atPath: directory + "/state", toPath: directory + "/old")
            #expect(throws: ArchiveStoreError.storeFileMoved(path: path)) {
                try store.save(try SampleArchives.tree(count: 4), header: SampleArchives.header)
            }
            #expect(try ArchiveStore(path: directory + "/old/store.sqlite", mode: .readOnly).snapshot()?.nodes.count == 3)
        }
    }

    /// What an app sees: its engine's save throws, and so does its restoration, before any
    /// object decodes (the crash marker cannot be written, R11); an engine on the store opened
    /// again saves in full, and the next launch restores that.
    @Test func anEngineOnAStoreWhoseFileWasRemovedSavesAgainThroughAStoreOpenedAgain() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/state/store.sqlite"
            let engine = try makeEngine(try ArchiveStore(path: path))
            try engine.preserve([Probe("Root", value: "first", [Probe("A", value: "a")])])
            try FileManager.default.removeItem(atPath: directory + "/state")

            let root = Probe("Root", value: "second", [Probe("A", value: "a")])
            #expect(throws: RestorationError.store(.storeFileMoved(path: path))) { try engine.preserve([root]) }
            let untouched = Probe("Root", value: "untouched")
            #expect(throws: RestorationError.store(.storeFileMoved(path: path))) { try engine.restore([untouched]) }
            #expect(untouched.value == "untouched")
            let result = try makeEngine(try ArchiveStore(path: path)).preserve([root])
            #expect(result.save?.kind == .full)

            let restored = Probe("Root")
            _ = try makeEngine(try ArchiveStore(path: path)).restore([restored])
            #expect(restored.value == "second")
        }
    }
}
