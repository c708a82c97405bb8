import BenchSQLite
import Foundation
import RestorationArchive

/// How large ours and the floor's stores are on disk after a run of saves, for `--disk-size`:
/// the write-ahead log's length as the saves left it, then, after a truncating checkpoint from
/// another connection, the database file's pages and how many of them are free. The
/// checkpoint moves what later saves write, so it is for `--disk-size` only, never while
/// timing.
enum DiskSize {
    /// The store at `path` as it lies on disk.
    struct Footprint {
        let logBytes: Int
        let pages: Int
        let freePages: Int
        let pageSize: Int
    }

    static func footprint(of path: String) -> Footprint {
        let logBytes = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        let database = openProbeConnection(path)
        defer { sqlite3_close_v2(database) }
        _ = checkpoint(database, "TRUNCATE")
        func value(_ sql: String) -> Int {
            let statement = prepareStatement(database, sql)
            defer { sqlite3_finalize(statement) }
            precondition(sqlite3_step(statement) == SQLITE_ROW, String(cString: sqlite3_errmsg(database)))
            return Int(sqlite3_column_int64(statement, 0))
        }
        return Footprint(
            logBytes: logBytes, pages: value("PRAGMA page_count"), freePages: value("PRAGMA freelist_count"),
            pageSize: value("PRAGMA page_size"))
    }

    /// For each size, ours and the floor after `fullSaves` full saves, then after
    /// `partialSaves` more saves of 1% of the nodes each, and ours after discarding it all (as
    /// an explicit quit does): printed as a table.
    static func probe(sizes: [Int], directory: String, fullSaves: Int = 6, partialSaves: Int = 100) throws {
        print("size on disk: after \(fullSaves) full saves, then after \(partialSaves) saves of 1% of the nodes")
        print(
            column("saves", 27) + column("impl", 17) + column("n", 9) + column("database", 12) + column("free", 9)
                + "write-ahead log")
        let header = SaveHeader(appVersion: "11.0", appBuild: "1024")
        for n in sizes {
            let paths = try samplePaths(n)
            let changed = onePercentIndexes(n)
            /// Node `index`'s screen at save `counter`: each save changes every state it writes.
            func state(_ index: Int, _ counter: Int) -> ScreenState {
                var state = ScreenState.sample(index)
                state.selectedIndex = counter
                return state
            }
            func ourNodes(_ indexes: some Sequence<Int>, _ counter: Int) throws -> [ArchivedNode] {
                try indexes.map { index in
                    ArchivedNode(
                        path: paths[index], className: "Screen", classVersion: 1, state: try state(index, counter).encodeOurs())
                }
            }
            func floorRows(_ indexes: some Sequence<Int>, _ counter: Int) -> [FloorStore.Row] {
                indexes.map { index in
                    FloorStore.Row(
                        path: paths[index].description, parent: paths[index].parent?.description, className: "Screen",
                        state: state(index, counter).encodeFloor())
                }
            }
            let oursPath = "\(directory)/disk-ours-\(n).sqlite"
            let floorPath = "\(directory)/disk-floor-\(n).sqlite"
            let ours = try ArchiveStore(path: oursPath)
            let floor = FloorStore(path: floorPath)
            var generation = Generation(0)
            for counter in 0..<fullSaves {
                generation = try ours.save(try ourNodes(0..<n, counter), header: header).generation
                floor.saveAll(floorRows(0..<n, counter))
            }
            print(row("\(fullSaves) full", "ours", n, footprint(of: oursPath)))
            print(row("\(fullSaves) full", "floor", n, footprint(of: floorPath)))
            for counter in fullSaves..<(fullSaves + partialSaves) {
                generation = try ours.saveChanges(try ourNodes(changed, counter), basedOn: generation, header: header).generation
                floor.saveSome(floorRows(changed, counter))
            }
            print(row("+ \(partialSaves) of 1%", "ours", n, footprint(of: oursPath)))
            print(row("+ \(partialSaves) of 1%", "floor", n, footprint(of: floorPath)))
            // An explicit quit: ours compacts the store it leaves nearly empty.
            try ours.discardAll(reason: "the user quit the app")
            print(row("+ discard (a quit)", "ours", n, footprint(of: oursPath)))
        }
    }

    private static func row(_ saves: String, _ name: String, _ n: Int, _ footprint: Footprint) -> String {
        func megabytes(_ bytes: Int) -> String { String(format: "%.2f MB", Double(bytes) / 1_000_000) }
        return column(saves, 27) + column(name, 17) + column(String(n), 9)
            + column(megabytes(footprint.pages * footprint.pageSize), 12)
            + column(String(format: "%.0f%%", 100 * Double(footprint.freePages) / Double(max(footprint.pages, 1))), 9)
            + megabytes(footprint.logBytes)
    }
}
