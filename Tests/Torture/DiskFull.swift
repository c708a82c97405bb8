import CSQLite
import Foundation
import RestorationArchive
import TestSupport

/// 3. A full disk: at many fill levels, a save that runs out of space fails with a typed
/// error, leaves the previous archive intact, and the next save after space returns works.
///
/// Space runs out two ways: SQLite's `max_page_count` (set on every connection of this
/// process by an auto-extension, so the library's own connection gets it), and, when this
/// process may mount one, a small tmpfs filled up by another file.
enum DiskFull {
    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("disk-full")
        PageLimit.install()
        var failedSaves = 0
        for index in 0..<scale.trials(quick: 40, full: 400) {
            scenario.trial("page limit, trial \(index)") { trial in
                try withTemporaryDirectory { directory in
                    failedSaves += try fillByPageLimit(path: directory + "/store.sqlite", trial: &trial, random: &random)
                }
            }
        }
        scenario.remark("page limit: \(failedSaves) saves refused for want of space")
        try withTemporaryDirectory { directory in
            guard Tmpfs.mount(at: directory, bytes: 1 << 20) else {
                scenario.remark("tmpfs: cannot mount one here (needs root), so only max_page_count was tried")
                return
            }
            defer { Tmpfs.unmount(directory) }
            var refused = 0
            var quits: [String: Int] = [:]
            for index in 0..<scale.trials(quick: 8, full: 40) {
                scenario.trial("tmpfs, trial \(index)") { trial in
                    let outcome = try fillTmpfs(directory: directory, trial: &trial, random: &random)
                    refused += outcome.refused
                    quits[outcome.quit, default: 0] += 1
                }
            }
            scenario.remark(
                "tmpfs of 1 MiB: \(refused) saves refused for want of space; the quits after: "
                    + quits.listed { name, count in "\(count) \(name)" })
        }
        return scenario
    }

    /// Fills a store, limits it to its size plus a little, saves until space runs out, and
    /// saves again after lifting the limit. Returns how many saves were refused.
    private static func fillByPageLimit(path: String, trial: inout Trial, random: inout SeededGenerator) throws -> Int {
        PageLimit.pages = 0
        var saved: (generation: Generation, digest: UInt64)
        do {
            let store = try ArchiveStore(path: path)
            let tree = try Content.tree(count: Int.random(in: 1...300, using: &random), using: &random)
            saved = (try store.save(tree, header: Content.header).generation, Content.digest(tree))
        }
        // Closing the last connection checkpoints the log: the file's size is the store's.
        let pages = Int32((fileBytes(path)?.count ?? 0) / 4096)
        PageLimit.pages = pages + Int32.random(in: 0...40, using: &random)
        defer { PageLimit.pages = 0 }

        let store = try ArchiveStore(path: path)
        var refused = 0
        for attempt in 0..<60 {
            let incremental = attempt % 3 != 0
            do {
                let tree = try Content.tree(count: 20 + attempt * 20, using: &random)
                let result =
                    if incremental, let current = try store.snapshot() {
                        try store.saveChanges(
                            tree.filter { $0.path.depth > 1 }.map { renamed($0) }, basedOn: current.header.generation,
                            header: Content.header)
                    } else {
                        try store.save(tree, header: Content.header)
                    }
                saved = (result.generation, try store.snapshot().map { Content.digest($0.nodes) } ?? 0)
            } catch ArchiveStoreError.database(let error) where error.resultCode == .full {
                refused += 1
                try expectIntact(store, saved, trial: &trial)
                // Still full: another save fails the same way, and changes nothing either.
                do {
                    try store.save(try Content.tree(count: 400, using: &random), header: Content.header)
                    trial.fail("a save of 400 nodes fitted after one of fewer did not")
                } catch ArchiveStoreError.database(let error) where error.resultCode == .full {
                    try expectIntact(store, saved, trial: &trial)
                }
                break
            }
        }
        trial.expect(refused == 1, "space never ran out")
        // Space returns: a connection without the limit saves.
        PageLimit.pages = 0
        let roomy = try ArchiveStore(path: path)
        try expectIntact(roomy, saved, trial: &trial)
        let tree = try Content.tree(count: 50, using: &random)
        try roomy.save(tree, header: Content.header)
        trial.expect(try roomy.snapshot().map { Content.digest($0.nodes) } == Content.digest(tree), "the save after space returned differs")
        return refused
    }

    /// A save on a 1 MiB tmpfs that another file has nearly filled; then an explicit quit on
    /// the full disk (``quitOnTheFullDisk(_:path:filler:saved:trial:)``). Space returns when
    /// that file is deleted, and the store saves again. Returns the saves refused and how the
    /// quit went.
    private static func fillTmpfs(directory: String, trial: inout Trial, random: inout SeededGenerator) throws
        -> (refused: Int, quit: String)
    {
        let path = directory + "/store.sqlite"
        let filler = directory + "/filler"
        defer {
            for file in Files.storeFiles(path) + [filler] { Files.remove(file) }
        }
        let store = try ArchiveStore(path: path)
        let first = try Content.tree(count: Int.random(in: 1...100, using: &random), using: &random)
        var saved = (try store.save(first, header: Content.header).generation, Content.digest(first))
        // Leave between 0 and 256 KiB free.
        var info = statvfs()
        statvfs(directory, &info)
        let free = Int(info.f_bavail) * Int(info.f_frsize)
        let leave = Int.random(in: 0...(256 << 10), using: &random)
        try Files.write([UInt8](repeating: 0x55, count: max(0, free - leave)), to: filler)

        var refused = 0
        for attempt in 0..<60 {
            do {
                let tree = try Content.tree(count: 50 + attempt * 50, using: &random)
                saved = (try store.save(tree, header: Content.header).generation, Content.digest(tree))
            } catch ArchiveStoreError.database(let error) where error.resultCode == .full {
                refused += 1
                try expectIntact(store, saved, trial: &trial)
                break
            }
        }
        trial.expect(refused == 1, "space never ran out")
        let (quit, after) = try quitOnTheFullDisk(store, path: path, filler: filler, saved: saved, trial: &trial)
        Files.remove(filler)
        let tree = try Content.tree(count: 80, using: &random)
        try after.save(tree, header: Content.header)
        trial.expect(try after.snapshot().map { Content.digest($0.nodes) } == Content.digest(tree), "the save after space returned differs")
        trial.expect(try after.check().isEmpty, "check finds problems after space returned")
        return (refused, quit)
    }

    /// `restorectl discard` on a full disk, then an app's explicit quit: each discard fits, or
    /// is refused whole (it writes every page the archive held to the log first), and the app
    /// then erases the store, which needs a few pages: that fits, or is refused too (for want
    /// of space, or an I/O error when not even the log's index can grow). Returns how it
    /// went, and the store to go on with: one opened again, once space returns, when the
    /// erase was refused (the file is the old store, or an empty database whose schema that
    /// opening writes).
    private static func quitOnTheFullDisk(
        _ store: ArchiveStore, path: String, filler: String, saved: (generation: Generation, digest: UInt64),
        trial: inout Trial
    ) throws -> (quit: String, store: ArchiveStore) {
        // First `restorectl discard`, as a developer runs it: it fits, or says the disk is full
        // (an I/O error, when not even the log's index can grow) and leaves the archive.
        let command = try runProcess(Child.restorectl, ["discard", path, "--archive", "main", "--reason", "quit"])
        if command.status == 0 {
            trial.expect(try store.snapshot() == nil, "restorectl discard on the full disk left the archive")
            trial.expect(try store.check().isEmpty, "check finds problems after restorectl's discard on the full disk")
            // No other connection reads here: a log left long is a checkpoint that failed,
            // and the warning says why.
            guard command.standardOutput.contains("The write-ahead log was not truncated") else {
                return ("discarded by restorectl", store)
            }
            trial.expect(
                command.standardError.contains("warning: The write-ahead log of the store at '")
                    && command.standardError.contains("' was not truncated after the discard: "),
                "restorectl discard left the log long without a warning: \(command.standardError)")
            return ("discarded by restorectl, the log left long", store)
        }
        trial.expect(
            command.status == 1
                && (command.standardError.contains("cannot be written: the disk is full; the archive is as it was")
                    || command.standardError.contains("disk I/O error")),
            "restorectl discard on the full disk: status \(command.status), \(command.standardError)")
        try expectIntact(store, saved, trial: &trial)
        do {
            try store.discardAll(reason: "the user quit the app")
            trial.expect(try store.snapshot() == nil, "a discard on the full disk left the archive")
            trial.expect(try store.check().isEmpty, "check finds problems after the discard on the full disk")
            return ("discarded", store)
        } catch {
            guard case .database(let failure) = error, failure.resultCode == .full else { throw error }
        }
        try expectIntact(store, saved, trial: &trial)
        do {
            try ArchiveStore.erase(at: path)
            trial.expect(try store.snapshot() == nil, "an erase on the full disk left the archive")
            return ("erased after the discard was refused", store)
        } catch {
            guard case .database(let failure) = error, [.full, .ioError].contains(failure.resultCode) else { throw error }
        }
        Files.remove(filler)
        let reopened = try ArchiveStore(path: path)
        let left = try reopened.snapshot().map { Content.digest($0.nodes) }
        trial.expect(left == nil || left == saved.digest, "the store holds neither the archive nor nothing after a refused erase")
        trial.expect(try reopened.check().isEmpty, "check finds problems after a refused erase")
        return ("both refused (\(left == nil ? "the file emptied by the erase" : "the store as it was"))", reopened)
    }

    private static func expectIntact(
        _ store: ArchiveStore, _ saved: (generation: Generation, digest: UInt64), trial: inout Trial
    ) throws {
        let snapshot = try store.snapshot()
        trial.expect(snapshot?.header.generation == saved.generation, "the newest generation changed")
        trial.expect(snapshot.map { Content.digest($0.nodes) } == saved.digest, "the previous archive changed")
        let problems = try store.check()
        trial.expect(problems.isEmpty, "check: \(problems)")
    }

    /// The same node under another name, so that an incremental save adds rather than replaces.
    private static func renamed(_ node: ArchivedNode) -> ArchivedNode {
        var node = node
        node.path = (try? RestorationPath(["Root"] + node.path.identifiers.dropFirst().map { "x" + $0 })) ?? node.path
        return node
    }
}

/// `PRAGMA max_page_count` on every connection this process opens, while `pages` is positive.
enum PageLimit {
    nonisolated(unsafe) static var pages: Int32 = 0

    static func install() {
        let entryPoint:
            @convention(c) (
                OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, OpaquePointer?
            ) -> Int32 = { database, _, _ in
                if PageLimit.pages > 0 {
                    sqlite3_exec(database, "PRAGMA max_page_count = \(PageLimit.pages)", nil, nil, nil)
                }
                return SQLITE_OK
            }
        sqlite3_auto_extension(unsafeBitCast(entryPoint, to: (@convention(c) () -> Void).self))
    }
}

/// A small tmpfs, when this process may mount one.
enum Tmpfs {
    static func mount(at directory: String, bytes: Int) -> Bool {
        guard getuid() == 0, let result = try? Child.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", directory])
        else { return false }
        return result.status == 0 && !result.signalled
    }

    static func unmount(_ directory: String) {
        _ = try? Child.run("/bin/umount", [directory])
    }
}
