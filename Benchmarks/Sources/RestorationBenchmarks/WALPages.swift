import BenchSQLite
import Foundation
import RestorationArchive

/// The pages a commit appends to the write-ahead log, counted from another connection: a
/// truncating checkpoint empties the log before the save; after it, the log's frames are
/// read from its file and named by the table or index their page belongs to (SQLite's
/// `dbstat`), and a passive checkpoint checks their number. Checkpointing around every save
/// changes what a later checkpoint costs, not what a commit writes: for `--wal-pages` only,
/// never while timing.
enum WALPages {
    /// The pages `save` appended to the log of the database at `path`, each named by the table
    /// or index it belongs to ("free list" for a page no b-tree holds).
    static func appended(to path: String, by save: () throws -> Void) throws -> [String] {
        let database = openProbeConnection(path)
        defer { sqlite3_close_v2(database) }
        precondition(checkpoint(database, "TRUNCATE") == 0, "the log is not empty")
        try save()
        let pages = framePages(log: try Data(contentsOf: URL(filePath: path + "-wal")))
        // One pass over the database's pages (`dbstat` scans them all, whatever the query).
        let written = Set(pages)
        var owners: [Int: String] = [:]
        let owner = prepareStatement(database, "SELECT pageno, name FROM dbstat")
        defer { sqlite3_finalize(owner) }
        while sqlite3_step(owner) == SQLITE_ROW {
            let page = Int(sqlite3_column_int64(owner, 0))
            if written.contains(page) { owners[page] = String(cString: sqlite3_column_text(owner, 1)) }
        }
        let names = pages.map { owners[$0] ?? "free list" }
        precondition(checkpoint(database, "PASSIVE") == pages.count, "the log's frames were not all read")
        return names
    }

    /// The page number of each frame of a write-ahead log (its format: a 32-byte header with
    /// the page size at offset 8, then frames of a 24-byte header, the page number first, and
    /// a page; all big-endian).
    private static func framePages(log: Data) -> [Int] {
        let bytes = [UInt8](log)
        func bigEndian(_ offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        guard bytes.count >= 32 else { return [] }
        let pageSize = bigEndian(8)
        var pages: [Int] = []
        var offset = 32
        while offset + 24 + pageSize <= bytes.count {
            pages.append(bigEndian(offset))
            offset += 24 + pageSize
        }
        return pages
    }

    /// For each size, the pages a one-node save and a 1% save append to the log, on average
    /// over `saves` saves, for ours, the floor and the two save references: printed as a table.
    static func probe(sizes: [Int], directory: String, saves: Int = 50) throws {
        print("pages appended to the write-ahead log by a save (average of \(saves) saves)")
        print("operation                  impl             n        pages    by table or index")
        let header = SaveHeader(appVersion: "11.0", appBuild: "1024")
        for n in sizes {
            let states = (0..<n).map(ScreenState.sample)
            let paths = try samplePaths(n)
            let changed = onePercentIndexes(n)
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
                    var pages: [String: Int] = [:]
                    for _ in 0..<saves {
                        counter += 1
                        for owner in try appended(to: path, by: save) { pages[owner, default: 0] += 1 }
                    }
                    func average(_ count: Int) -> String { String(format: "%.2f", Double(count) / Double(saves)) }
                    print(
                        column(operation, 27) + column(name, 17) + column(String(n), 9)
                            + column(average(pages.values.reduce(0, +)), 9)
                            + pages.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
                            .map { "\($0.key) \(average($0.value))" }.joined(separator: ", "))
                }
            }
        }
    }
}
