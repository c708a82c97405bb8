import BenchSQLite
import Foundation
import RestorationArchive

/// The pages a commit appends to the write-ahead log, counted from another connection: a
/// truncating checkpoint empties the log before the save, and a passive one counts the
/// frames it holds after it. Checkpointing around every save changes what a later checkpoint
/// costs, not what a commit writes: for `--wal-pages` only, never while timing.
enum WALPages {
    /// The frames `save` appended to the log of the database at `path`.
    static func appended(to path: String, by save: () throws -> Void) throws -> Int {
        var database: OpaquePointer?
        precondition(sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(database) }
        sqlite3_busy_timeout(database, 5_000)
        /// The log's length in frames, once checkpointed in `mode`.
        func checkpoint(_ mode: String) -> Int {
            var statement: OpaquePointer?
            precondition(sqlite3_prepare_v2(database, "PRAGMA wal_checkpoint(\(mode))", -1, &statement, nil) == SQLITE_OK)
            defer { sqlite3_finalize(statement) }
            precondition(sqlite3_step(statement) == SQLITE_ROW, String(cString: sqlite3_errmsg(database)))
            precondition(sqlite3_column_int64(statement, 0) == 0, "the checkpoint was blocked")
            return Int(sqlite3_column_int64(statement, 1))
        }
        precondition(checkpoint("TRUNCATE") == 0, "the log is not empty")
        try save()
        return checkpoint("PASSIVE")
    }

    /// For each size, the pages a one-node save and a 1% save append to the log, on average
    /// over `saves` saves, for ours, the floor and the two save references: printed as a table.
    static func probe(sizes: [Int], directory: String, saves: Int = 50) throws {
        print("pages appended to the write-ahead log by a save (average of \(saves) saves)")
        print("operation                  impl             n        pages")
        let header = SaveHeader(appVersion: "11.0", appBuild: "1024")
        for n in sizes {
            let states = (0..<n).map(ScreenState.sample)
            let paths = try samplePaths(n)
            let changed = Array(stride(from: 0, to: n, by: max(1, n / max(1, n / 100))).prefix(max(1, n / 100)))
            let floorRows = zip(paths, states).map { path, state in
                FloorStore.Row(path: path.description, parent: path.parent?.description, className: "Screen", state: state.encodeFloor())
            }
            let ours = try ArchiveStore(path: "\(directory)/pages-ours-\(n).sqlite")
            var generation = try ours.save(
                try zip(paths, states).map { path, state in
                    ArchivedNode(path: path, className: "Screen", classVersion: 1, state: try state.encodeOurs())
                }, header: header
            ).generation
            let floor = FloorStore(path: "\(directory)/pages-floor-\(n).sqlite")
            floor.saveAll(floorRows)
            let references = [SaveReferenceStore.Rules.generation, .retention].map { rules in
                let name = SaveReferenceStore.name(rules)
                return (name, SaveReferenceStore(path: "\(directory)/pages-\(name)-\(n).sqlite", rules: rules, rows: floorRows))
            }
            for (operation, indexes) in [("save-1-node", [n / 2]), ("save-1-percent", changed)] {
                var counter = 0
                func changedRows() -> [FloorStore.Row] {
                    indexes.map { index in
                        var row = floorRows[index]
                        var state = states[index]
                        state.selectedIndex = counter
                        row.state = state.encodeFloor()
                        return row
                    }
                }
                var cases: [(String, () throws -> Void)] = [
                    ("ours", {
                        let nodes = try indexes.map { index in
                            var state = states[index]
                            state.selectedIndex = counter
                            return ArchivedNode(path: paths[index], className: "Screen", classVersion: 1, state: try state.encodeOurs())
                        }
                        generation = try ours.saveChanges(nodes, basedOn: generation, header: header).generation
                    }),
                    ("floor", { floor.saveSome(changedRows()) }),
                ]
                cases += references.map { name, store in (name, { store.saveSome(changedRows()) }) }
                for (name, save) in cases {
                    let path = "\(directory)/pages-\(name)-\(n).sqlite"  // each store's file, named so above
                    var frames = 0
                    for _ in 0..<saves {
                        counter += 1
                        frames += try appended(to: path, by: save)
                    }
                    print(
                        operation.padding(toLength: 27, withPad: " ", startingAt: 0)
                            + name.padding(toLength: 17, withPad: " ", startingAt: 0)
                            + String(n).padding(toLength: 9, withPad: " ", startingAt: 0)
                            + String(format: "%.2f", Double(frames) / Double(saves)))
                }
            }
        }
    }
}
