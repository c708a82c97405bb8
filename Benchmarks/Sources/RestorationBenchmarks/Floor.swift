import BenchSQLite
import Foundation

/// The same store written directly on the SQLite C API: one transaction, one reused prepared
/// statement, WAL + synchronous=NORMAL, and the minimal codec. The best we could hope for.
final class FloorStore {
    private var db: OpaquePointer?
    private var insert: OpaquePointer?
    private var select: OpaquePointer?

    init(path: String) {
        precondition(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK)
        exec("PRAGMA journal_mode = WAL")
        exec("PRAGMA synchronous = NORMAL")
        exec(
            """
            CREATE TABLE IF NOT EXISTS node (archive INTEGER NOT NULL, path TEXT NOT NULL, parent TEXT, \
            class TEXT NOT NULL, version INTEGER NOT NULL, ord INTEGER NOT NULL, state BLOB NOT NULL, \
            PRIMARY KEY (archive, path)) WITHOUT ROWID
            """)
        exec("CREATE TABLE IF NOT EXISTS header (archive INTEGER PRIMARY KEY, generation INTEGER NOT NULL, app_version TEXT NOT NULL)")
        exec("CREATE TABLE IF NOT EXISTS marker (archive INTEGER PRIMARY KEY, generation INTEGER NOT NULL, pid INTEGER NOT NULL)")
        exec("INSERT OR IGNORE INTO header VALUES (1, 1, '11.0')")
        insert = prepare("INSERT OR REPLACE INTO node VALUES (1, ?, ?, ?, ?, ?, ?)")
        select = prepare("SELECT path, parent, class, version, ord, state FROM node WHERE archive = 1 ORDER BY path")
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_finalize(select)
        sqlite3_close_v2(db)
    }

    struct Row {
        var path: String
        var parent: String?
        var className: String
        var state: [UInt8]
    }

    func saveAll(_ rows: [Row]) {
        exec("BEGIN IMMEDIATE")
        exec("DELETE FROM node WHERE archive = 1")
        for row in rows { write(row) }
        exec("COMMIT")
    }

    func saveOne(_ row: Row) {
        saveSome([row])
    }

    /// Upserts `rows` in one transaction.
    func saveSome(_ rows: [Row]) {
        exec("BEGIN IMMEDIATE")
        for row in rows { write(row) }
        exec("COMMIT")
    }

    func readAll() -> [(path: String, state: [UInt8])] {
        exec("BEGIN")
        var rows: [(path: String, state: [UInt8])] = []
        while sqlite3_step(select) == SQLITE_ROW {
            let path = String(cString: sqlite3_column_text(select, 0))
            let count = Int(sqlite3_column_bytes(select, 5))
            let state = [UInt8](UnsafeRawBufferPointer(start: sqlite3_column_blob(select, 5), count: count))
            rows.append((path, state))
        }
        sqlite3_reset(select)
        exec("COMMIT")
        return rows
    }

    /// A launch: the header read, the crash marker committed, every node read, decoded and
    /// made into a screen, and the marker removed once restoration is done.
    func launch() -> [String: BenchScreen] {
        let header = prepare("SELECT generation, app_version FROM header WHERE archive = 1")
        precondition(sqlite3_step(header) == SQLITE_ROW)
        let generation = sqlite3_column_int64(header, 0)
        sqlite3_finalize(header)
        exec("BEGIN IMMEDIATE")
        exec("INSERT OR REPLACE INTO marker VALUES (1, \(generation), \(getpid()))")
        exec("COMMIT")
        let byPath = Self.screens(from: readAll())
        exec("BEGIN IMMEDIATE")
        exec("DELETE FROM marker WHERE archive = 1")
        exec("COMMIT")
        return byPath
    }

    /// The screens of rows read in path order, each added to its parent's children.
    static func screens(from rows: [(path: String, state: [UInt8])]) -> [String: BenchScreen] {
        var byPath: [String: BenchScreen] = [:]
        for row in rows {
            let screen = BenchScreen(identifier: row.path, state: ScreenState.decodeFloor(row.state)!)
            // The parent's path: up to the last "/", found in the UTF-8 bytes (a search by
            // `Character` cost about 3,200 instructions a row).
            if let slash = row.path.utf8.lastIndex(of: UInt8(ascii: "/")) {
                byPath[String(row.path[..<slash])]?.children.append(screen)
            }
            byPath[row.path] = screen
        }
        return byPath
    }

    /// The texts and the state are bound in place (`SQLITE_STATIC`, no copy by SQLite): they
    /// stay valid until the step and the reset, inside the closures that lend them.
    private func write(_ row: Row) {
        row.path.withCString { path in
            row.className.withCString { className in
                row.state.withUnsafeBytes { state in
                    func run(parent: UnsafePointer<CChar>?) {
                        sqlite3_bind_text(insert, 1, path, -1, nil)
                        if let parent { sqlite3_bind_text(insert, 2, parent, -1, nil) } else { sqlite3_bind_null(insert, 2) }
                        sqlite3_bind_text(insert, 3, className, -1, nil)
                        sqlite3_bind_int64(insert, 4, 1)
                        sqlite3_bind_int64(insert, 5, 0)
                        _ = sqlite3_bind_blob(insert, 6, state.baseAddress, Int32(state.count), nil)
                        precondition(sqlite3_step(insert) == SQLITE_DONE)
                        sqlite3_reset(insert)
                        sqlite3_clear_bindings(insert)
                    }
                    if let parent = row.parent { parent.withCString { run(parent: $0) } } else { run(parent: nil) }
                }
            }
        }
    }

    private func prepare(_ sql: String) -> OpaquePointer? { prepareStatement(db, sql) }
    private func exec(_ sql: String) { execute(db, sql) }
}

/// `sql` prepared on `db`; a failure stops the benchmark with SQLite's message. For the floor,
/// the save references and the probes, which are benchmarks, not API.
func prepareStatement(_ db: OpaquePointer?, _ sql: String) -> OpaquePointer? {
    var statement: OpaquePointer?
    precondition(sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, String(cString: sqlite3_errmsg(db)))
    return statement
}

/// Runs `sql` on `db`; a failure stops the benchmark with SQLite's message.
func execute(_ db: OpaquePointer?, _ sql: String) {
    precondition(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, String(cString: sqlite3_errmsg(db)))
}

/// A probe's own connection to the store at `path` (`--wal-pages`, `--disk-size`): read-write,
/// waiting up to 5 s for the store's lock; close it with `sqlite3_close_v2`.
func openProbeConnection(_ path: String) -> OpaquePointer? {
    var database: OpaquePointer?
    precondition(sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
    sqlite3_busy_timeout(database, 5_000)
    return database
}

/// Checkpoints the write-ahead log of `db` in `mode` (`PASSIVE`, `TRUNCATE`); stops the probe
/// if another connection blocked it. Returns the log's length in frames.
func checkpoint(_ db: OpaquePointer?, _ mode: String) -> Int {
    let checkpoint = prepareStatement(db, "PRAGMA wal_checkpoint(\(mode))")
    defer { sqlite3_finalize(checkpoint) }
    precondition(sqlite3_step(checkpoint) == SQLITE_ROW, String(cString: sqlite3_errmsg(db)))
    precondition(sqlite3_column_int64(checkpoint, 0) == 0, "the checkpoint was blocked")
    return Int(sqlite3_column_int64(checkpoint, 1))
}
