import CSQLite
import RestorationArchive
import TestSupport

/// 7c. Schema tampering: real stores whose schema another program changed through SQLite (a
/// tool, a script, a hand with the `sqlite3` shell), where `damage` changes bytes: a trigger,
/// a view (beside a table, or in place of one), an index dropped or added, a table dropped,
/// added, renamed or made again without its key and constraints, a column added, renamed or
/// dropped, or the file's settings changed (page size, auto-vacuum, journal mode, statistics
/// for the query planner, the schema's version number). The file stays one SQLite finds
/// sound. No crash, no hang (a trigger or a view that never ends included), no silent
/// change: every read returns exactly what was saved, or a typed error; then the app goes on
/// as after `damage` (saves again, or erases the store and starts afresh), and a schema
/// that stops its saves must be one it answers by erasing (`damagedStore`, `notAStore`).
///
/// The trials run in `damage`'s batches of child processes (`damage-batch ... schema`), so a
/// hang is counted against its trial.
enum SchemaTampering {
    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        try Damage.runBatches(
            Scenario("schema-tampering"), trials: scale.trials(quick: 150, full: 1_500), child: ["damage-batch"],
            arguments: ["schema"], makeStores: Damage.makeStores(in:random:), random: &random)
    }

    /// Tables of every store, with columns any tampering may name.
    static let tables: [(name: String, columns: [String])] = [
        ("archive", ["name", "generation", "checksum"]),
        ("generation", ["saved_at", "node_count", "epoch", "checksum"]),
        ("node", ["path", "class_name", "state", "died"]),
        ("journal", ["event", "at", "launch"]),
        ("restore_report", ["outcome", "report"]),
        ("crash_marker", ["generation", "started_at"]),
        ("state_sealing", ["key_check"]),
        ("schema_migration", ["identifier", "checksum"]),
    ]

    /// A query that never ends, for a trigger's or a view's body.
    static let endless =
        "SELECT x FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c) WHERE x < 0"

    /// Changes the schema of the store at `path` through SQLite, one change drawn from the
    /// kinds above. Returns the kind, with `-refused` when SQLite refused the change (the
    /// store is then as it was).
    static func tamper(_ path: String, using random: inout SeededGenerator) -> String {
        let (table, columns) = tables[Int.random(in: 0..<tables.count, using: &random)]
        let column = columns[Int.random(in: 0..<columns.count, using: &random)]
        let (kind, sql): (String, String)
        var inTransaction = true
        switch Int.random(in: 0..<13, using: &random) {
        case 0, 1:
            let timing = ["BEFORE", "AFTER"][Int.random(in: 0..<2, using: &random)]
            let event = ["INSERT", "UPDATE", "DELETE"][Int.random(in: 0..<3, using: &random)]
            let body = [
                "SELECT count(*) FROM (\(endless))", "SELECT RAISE(ABORT, 'tampered')", "DELETE FROM node",
                "UPDATE archive SET generation = generation + 1",
            ][Int.random(in: 0..<4, using: &random)]
            (kind, sql) = ("trigger", "CREATE TRIGGER tampered \(timing) \(event) ON \(table) BEGIN \(body); END")
        case 2:
            (kind, sql) = ("view", "CREATE VIEW tampered AS \(Bool.random(using: &random) ? endless : "SELECT * FROM \(table)")")
        case 3:
            (kind, sql) = ("view-in-place", "DROP TABLE \(table); CREATE VIEW \(table) AS SELECT * FROM (\(endless))")
        case 4:
            let index = ["node_retired", "journal_by_launch"][Int.random(in: 0..<2, using: &random)]
            (kind, sql) = ("drop-index", "DROP INDEX \(index)")
        case 5:
            let unique = Bool.random(using: &random) ? "UNIQUE " : ""
            (kind, sql) = ("add-index", "CREATE \(unique)INDEX tampered ON \(table) (\(column))")
        case 6:
            (kind, sql) = ("drop-table", "DROP TABLE \(table)")
        case 7:
            (kind, sql) = ("add-table", "CREATE TABLE tampered (x)")
        case 8:
            (kind, sql) = ("add-column", "ALTER TABLE \(table) ADD COLUMN tampered TEXT DEFAULT 'x'")
        case 9:
            (kind, sql) = ("rename", Bool.random(using: &random)
                ? "ALTER TABLE \(table) RENAME TO tampered" : "ALTER TABLE \(table) RENAME COLUMN \(column) TO tampered")
        case 10:
            (kind, sql) = ("drop-column", "ALTER TABLE \(table) DROP COLUMN \(column)")
        case 11:
            // Made again as `CREATE TABLE … AS SELECT` makes it: no key, no constraint, no
            // types, the columns in their order.
            (kind, sql) = (
                "rebuilt-bare",
                "CREATE TABLE tampered AS SELECT * FROM \(table); DROP TABLE \(table); ALTER TABLE tampered RENAME TO \(table)"
            )
        default:
            inTransaction = false
            (kind, sql) = [
                ("page-size", "PRAGMA page_size = 1024; VACUUM"), ("auto-vacuum", "PRAGMA auto_vacuum = FULL; VACUUM"),
                ("rollback-journal", "PRAGMA journal_mode = DELETE"), ("analyze", "ANALYZE"),
                ("user-version", "PRAGMA user_version = 0"),
            ][Int.random(in: 0..<5, using: &random)]
        }
        var database: OpaquePointer?
        defer { sqlite3_close(database) }
        guard sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
            sqlite3_exec(database, inTransaction ? "BEGIN; \(sql); COMMIT" : sql, nil, nil, nil) == SQLITE_OK
        else {
            sqlite3_exec(database, "ROLLBACK", nil, nil, nil)
            return kind + "-refused"
        }
        return kind
    }
}
