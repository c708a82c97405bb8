import CSQLite
import Foundation
import RestorationArchive
import TestSupport

/// 6. Files that are not archive stores: an empty file, random bytes, a JPEG, a truncated
/// store, another program's SQLite database, a directory. Each open is a typed error and
/// leaves the file as it was. (A read-write open of an empty file is the one exception: that
/// is what a launch killed right after creating its store leaves, so it becomes a new store.)
enum NotAStore {
    static let kinds = ["empty", "random", "jpeg", "truncated", "foreign-sqlite", "directory"]

    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("not-a-store")
        var damaged = 0
        var openedTruncated = 0
        try withTemporaryDirectory { directory in
            let real = directory + "/real.sqlite"
            try ArchiveStore(path: real).save(try Content.tree(count: 200, using: &random), header: Content.header)
            guard let realBytes = fileBytes(real) else { throw ChildError.usage }
            let saved = try ArchiveStore(path: real, mode: .readOnly).snapshot()
            for index in 0..<scale.trials(quick: 60, full: 600) {
                let kind = kinds[index % kinds.count]
                let mode: ArchiveStore.AccessMode = index / kinds.count % 2 == 0 ? .readOnly : .readWrite
                scenario.trial("\(kind), \(mode)") { trial in
                    let path = "\(directory)/\(index).sqlite"
                    try make(kind, at: path, from: realBytes, random: &random)
                    let before = fileBytes(path)
                    do {
                        let store = try ArchiveStore(path: path, mode: mode)
                        if kind == "truncated" {
                            // Cut where the schema survives: the open cannot tell (it reads no
                            // more than the schema), so reading must find the damage, or find
                            // the archive whole when only unused pages were cut.
                            openedTruncated += 1
                            trial.expect(try damageFound(in: store, saved: saved), "a truncated store read as different content")
                        } else {
                            trial.expect(kind == "empty" && mode == .readWrite, "opened as a store")
                        }
                    } catch ArchiveStoreError.notAStore {
                    } catch ArchiveStoreError.damagedStore where kind == "truncated" {
                        // Only the file's first pages remain: SQLite finds it malformed.
                        damaged += 1
                    } catch {
                        trial.fail("\(error), not notAStore")
                    }
                    if kind != "empty" || mode == .readOnly {
                        trial.expect(fileBytes(path) == before, "the file changed")
                        trial.expect(!fileExists(path + "-wal") && !fileExists(path + "-shm"), "side files were created")
                    }
                }
            }
        }
        scenario.remark(
            "of the truncated stores, \(damaged) were refused as damaged when opened, \(openedTruncated) opened "
                + "(each read back whole or reported the damage), the rest were refused as not a store")
        return scenario
    }

    /// Whether reading a truncated store reports damage or returns exactly what was saved.
    private static func damageFound(in store: ArchiveStore, saved: ArchiveSnapshot?) throws(ArchiveStoreError) -> Bool {
        do {
            guard try store.snapshot() == saved else { return false }
            return true
        } catch where error.isDamage {
            return true
        } catch .database(let error) where error.resultCode == .ioError {
            // A page past the end of the file: SQLite's short read.
            return true
        }
    }

    private static func make(_ kind: String, at path: String, from real: [UInt8], random: inout SeededGenerator) throws {
        switch kind {
        case "empty":
            try Files.write([], to: path)
        case "random":
            try Files.write(random.bytes(Int.random(in: 1...65536, using: &random)), to: path)
        case "jpeg":
            let header: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01]
            try Files.write(header + random.bytes(Int.random(in: 0...8192, using: &random)), to: path)
        case "truncated":
            let length = Int.random(in: 1..<real.count, using: &random)
            // Half at a page boundary, where SQLite cannot tell from the size alone.
            let cut = Bool.random(using: &random) ? max(4096, length / 4096 * 4096) : length
            try Files.write(Array(real[..<min(cut, real.count - 1)]), to: path)
        case "foreign-sqlite":
            var database: OpaquePointer?
            sqlite3_open(path, &database)
            sqlite3_exec(
                database, "CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos (name) VALUES ('a')",
                nil, nil, nil)
            sqlite3_close(database)
        default:
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
    }
}
