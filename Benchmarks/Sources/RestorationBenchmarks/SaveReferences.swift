import BenchSQLite
import Foundation

/// A save that keeps DESIGN's rules and nothing more, on the floor's terms (the SQLite C API,
/// one transaction, reused prepared statements, the minimal codec, WAL + synchronous=NORMAL):
/// references for `save-1-node` and `save-1-percent`, to tell how much of ours' distance from
/// `floor` the rules themselves cost. `.generation` is the least any store keeping generations
/// does; `.retention` the simplest way we found to keep the previous generation too, not a
/// proven least. Nothing here checks, reads or restores; they are not stores an app could use.
final class SaveReferenceStore {
    /// What the reference keeps beyond the floor's upsert.
    enum Rules {
        /// `floor+generation`: the floor's upsert, and in the same transaction the header's
        /// generation moved to g+1 (DESIGN §2: every successful save makes generation g+1,
        /// atomically).
        case generation
        /// `floor+retention`: a generation counted as above, and the previous generation kept
        /// readable, as R11's fall-back policy restores it and a reader may be reading it: a
        /// save inserts each node's row for generation g+1 instead of replacing its row, deletes
        /// that path's rows no retained generation reads any more, writes g+1's header row and
        /// deletes the one no longer retained. A generation's node at a path is the newest row
        /// born at or before it; ours retains two generations by default, as this does.
        case retention
    }

    /// The names the table and the JSON use.
    static func name(_ rules: Rules) -> String {
        switch rules {
        case .generation: "floor+generation"
        case .retention: "floor+retention"
        }
    }

    private let rules: Rules
    private var db: OpaquePointer?
    private var statements: [OpaquePointer?] = []
    private var generation: Int64 = 1

    /// A store at `path` holding `rows` as generation 1.
    init(path: String, rules: Rules, rows: [FloorStore.Row]) {
        self.rules = rules
        precondition(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK)
        exec("PRAGMA journal_mode = WAL")
        exec("PRAGMA synchronous = NORMAL")
        switch rules {
        case .generation:
            exec(
                """
                CREATE TABLE node (archive INTEGER NOT NULL, path TEXT NOT NULL, parent TEXT, \
                class TEXT NOT NULL, version INTEGER NOT NULL, ord INTEGER NOT NULL, state BLOB NOT NULL, \
                PRIMARY KEY (archive, path)) WITHOUT ROWID
                """)
            exec("CREATE TABLE header (archive INTEGER PRIMARY KEY, generation INTEGER NOT NULL, app_version TEXT NOT NULL)")
            exec("INSERT INTO header VALUES (1, 1, '11.0')")
            statements = [
                prepare("INSERT OR REPLACE INTO node VALUES (1, ?2, ?3, ?4, ?5, ?6, ?7)"),
                prepare("UPDATE header SET generation = ?1 WHERE archive = 1"),
            ]
        case .retention:
            exec(
                """
                CREATE TABLE node (archive INTEGER NOT NULL, path TEXT NOT NULL, born INTEGER NOT NULL, \
                parent TEXT, class TEXT NOT NULL, version INTEGER NOT NULL, ord INTEGER NOT NULL, state BLOB NOT NULL, \
                PRIMARY KEY (archive, path, born)) WITHOUT ROWID
                """)
            exec(
                """
                CREATE TABLE header (archive INTEGER NOT NULL, generation INTEGER NOT NULL, app_version TEXT NOT NULL, \
                PRIMARY KEY (archive, generation)) WITHOUT ROWID
                """)
            statements = [
                prepare("INSERT INTO node VALUES (1, ?2, ?1, ?3, ?4, ?5, ?6, ?7)"),
                // The path's rows older than the one the previous generation reads (its
                // newest row born before the generation being saved, ?1).
                prepare(
                    """
                    DELETE FROM node WHERE archive = 1 AND path = ?2 AND born < \
                    (SELECT max(born) FROM node WHERE archive = 1 AND path = ?2 AND born < ?1)
                    """),
                prepare("INSERT INTO header VALUES (1, ?1, '11.0')"),
                prepare("DELETE FROM header WHERE archive = 1 AND generation <= ?1 - 2"),
            ]
        }
        exec("BEGIN IMMEDIATE")
        for row in rows { write(row) }
        finishSave()
        exec("COMMIT")
    }

    deinit {
        for statement in statements { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
    }

    /// Saves `rows` changed as generation g+1, in one transaction.
    func saveSome(_ rows: [FloorStore.Row]) {
        generation += 1
        exec("BEGIN IMMEDIATE")
        for row in rows { write(row) }
        finishSave()
        exec("COMMIT")
    }

    /// Checks, untimed, that the store holds what its rules say after the saves: `nodeCount`
    /// paths and the newest generation; for `.retention`, the two newest generations' headers
    /// and at most two rows a path (the previous generation's and a newer one).
    func check(nodeCount: Int) {
        func value(_ sql: String) -> Int64 {
            let statement = prepare(sql)
            defer { sqlite3_finalize(statement) }
            precondition(sqlite3_step(statement) == SQLITE_ROW, String(cString: sqlite3_errmsg(db)))
            return sqlite3_column_int64(statement, 0)
        }
        precondition(value("SELECT count(DISTINCT path) FROM node") == nodeCount)
        precondition(value("SELECT max(generation) FROM header") == generation)
        if rules == .retention {
            precondition(value("SELECT count(*) FROM header") == min(2, generation))
            precondition(value("SELECT max(rows) FROM (SELECT count(*) AS rows FROM node GROUP BY path)") <= 2)
        }
    }

    /// One row: the node's insert (and for `.retention`, the deletion of its unneeded rows).
    /// The texts and the state are bound in place, as the floor binds them.
    private func write(_ row: FloorStore.Row) {
        row.path.withCString { path in
            row.className.withCString { className in
                row.state.withUnsafeBytes { state in
                    func run(parent: UnsafePointer<CChar>?) {
                        let insert = statements[0]
                        sqlite3_bind_int64(insert, 1, generation)
                        sqlite3_bind_text(insert, 2, path, -1, nil)
                        if let parent { sqlite3_bind_text(insert, 3, parent, -1, nil) } else { sqlite3_bind_null(insert, 3) }
                        sqlite3_bind_text(insert, 4, className, -1, nil)
                        sqlite3_bind_int64(insert, 5, 1)
                        sqlite3_bind_int64(insert, 6, 0)
                        _ = sqlite3_bind_blob(insert, 7, state.baseAddress, Int32(state.count), nil)
                        step(insert)
                        if rules == .retention {
                            let prune = statements[1]
                            sqlite3_bind_int64(prune, 1, generation)
                            sqlite3_bind_text(prune, 2, path, -1, nil)
                            step(prune)
                        }
                    }
                    if let parent = row.parent { parent.withCString { run(parent: $0) } } else { run(parent: nil) }
                }
            }
        }
    }

    /// The header's part of a save: the generation moved on (and the oldest header deleted).
    private func finishSave() {
        for statement in rules == .generation ? statements[1...1] : statements[2...3] {
            sqlite3_bind_int64(statement, 1, generation)
            step(statement)
        }
    }

    private func step(_ statement: OpaquePointer?) {
        precondition(sqlite3_step(statement) == SQLITE_DONE, String(cString: sqlite3_errmsg(db)))
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    private func prepare(_ sql: String) -> OpaquePointer? { prepareStatement(db, sql) }
    private func exec(_ sql: String) { execute(db, sql) }
}
