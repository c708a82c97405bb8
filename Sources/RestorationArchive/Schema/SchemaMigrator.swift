internal import StoreMigrations

/// Applies the store's migrations (`Migrations/*.sql`) and refuses stores it cannot serve.
///
/// Each migration runs in its own `BEGIN IMMEDIATE` transaction and is recorded in
/// `schema_migration` with a checksum of its text. Before writing anything the migrator
/// reads what the store has applied:
/// - an SQLite database of another program (a foreign `application_id`, or tables without
///   our bookkeeping) is not a store;
/// - more migrations than this library knows → ``ArchiveStoreError/schemaTooNew(storeVersion:libraryVersion:)``;
/// - an applied migration whose text differs → ``ArchiveStoreError/migrationChanged(identifier:)``;
/// - a trigger or a view, which no migration makes → ``ArchiveStoreError/damagedStore(_:)``.
struct SchemaMigrator {
    /// `PRAGMA application_id` of every store: "RSTR".
    static let applicationID: Int64 = 0x5253_5452

    let migrations: [StoreMigration]

    init(migrations: [StoreMigration] = StoreMigrations.all) {
        self.migrations = migrations
    }

    /// The schema version this library writes: the number of migrations it knows.
    var libraryVersion: Int { migrations.count }

    /// What a store needs.
    enum Status: Equatable {
        /// A new, empty database: every migration is pending.
        case empty
        /// Applied migrations match ours; `pending` remain to apply (0: up to date).
        case compatible(pending: Int)
    }

    /// Reads the store's schema history and checks it against this library. Writes nothing.
    func inspect(_ connection: Connection, path: String) throws -> Status {
        let applicationID = try connection.pragmaInteger("PRAGMA application_id") ?? 0
        // Only a database without our id can be a new one: a store skips this query.
        if applicationID == 0, try connection.pragmaInteger("SELECT count(*) FROM sqlite_schema") ?? 0 == 0 {
            return .empty
        }
        guard applicationID == Self.applicationID else {
            throw ArchiveStoreError.notAStore(
                path: path, reason: "it is an SQLite database of another program (application_id \(applicationID))")
        }
        let userVersion = try connection.pragmaInteger("PRAGMA user_version") ?? 0
        if userVersion > libraryVersion {
            throw ArchiveStoreError.schemaTooNew(storeVersion: Int(userVersion), libraryVersion: libraryVersion)
        }
        let applied = try appliedMigrations(connection, path: path)
        if applied.count > libraryVersion {
            throw ArchiveStoreError.schemaTooNew(storeVersion: applied.count, libraryVersion: libraryVersion)
        }
        for (index, record) in applied.enumerated() {
            let known = migrations[index]
            guard record.identifier == known.identifier, record.checksum == Self.checksum(of: known.sql) else {
                throw ArchiveStoreError.migrationChanged(identifier: record.identifier)
            }
        }
        try refuseStatementsOfItsOwn(connection)
        return .compatible(pending: libraryVersion - applied.count)
    }

    /// Applies the pending migrations, each in its own transaction. Safe against another
    /// process migrating the same store at the same time: each transaction checks again,
    /// under the write lock, what is already applied.
    func migrate(_ connection: Connection, path: String) throws {
        for (index, migration) in migrations.enumerated() {
            try connection.transaction(.immediate) {
                let status = try inspect(connection, path: path)
                let appliedCount: Int
                switch status {
                case .empty: appliedCount = 0
                case .compatible(let pending): appliedCount = libraryVersion - pending
                }
                guard appliedCount == index else { return }
                if index == 0 {
                    try connection.execute(
                        """
                        CREATE TABLE IF NOT EXISTS schema_migration (
                            sequence    INTEGER PRIMARY KEY,
                            identifier  TEXT NOT NULL UNIQUE,
                            checksum    TEXT NOT NULL,
                            applied_at  INTEGER NOT NULL
                        ) STRICT
                        """)
                    try connection.execute("PRAGMA application_id = \(Self.applicationID)")
                }
                try connection.execute(migration.sql)
                let record = try connection.statement(
                    "INSERT INTO schema_migration (sequence, identifier, checksum, applied_at) VALUES (?, ?, ?, ?)")
                try record.bind(index + 1, at: 1)
                try record.bind(migration.identifier, at: 2)
                try record.bind(Self.checksum(of: migration.sql), at: 3)
                try record.bind(Clock.nowMilliseconds(), at: 4)
                try record.run()
                // A constant: the schema version, readable without parsing the history.
                try connection.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }

    /// Refuses a schema holding a trigger or a view, which no migration makes: SQL of the
    /// file's own, run by the store's reads and writes. A file changed by other than this
    /// library (a view in place of a table, a trigger on the journal) made them do what it
    /// said: a recursive query in a trigger made every launch wait forever, and `check()`
    /// found nothing. One query at each opening. The rest of the schema is not compared with
    /// what the migrations make: the text SQLite keeps of a table an `ALTER TABLE` changed
    /// may differ between SQLite versions, and a false refusal would have an app erase a
    /// sound store.
    private func refuseStatementsOfItsOwn(_ connection: Connection) throws {
        // Rows rather than counts: the aggregates cost a launch more to prepare.
        let statement = try connection.statement(
            "SELECT type = 'view' FROM sqlite_schema WHERE type IN ('trigger', 'view')")
        defer { statement.reset() }
        var (triggers, views) = (0, 0)
        while try statement.step() {
            if try statement.int64(0) == 1 { views += 1 } else { triggers += 1 }
        }
        guard triggers == 0, views == 0 else {
            throw ArchiveStoreError.damagedStore(
                "its schema holds \(triggers) trigger\(triggers == 1 ? "" : "s") and \(views) "
                    + "view\(views == 1 ? "" : "s"), which no migration makes: the file was changed by other than this library")
        }
    }

    /// The checksum recorded for a migration's text, as 16 hex digits.
    static func checksum(of sql: String) -> String {
        var checksum = Checksum(domain: 0x4D49_4752)  // "MIGR"
        checksum.combine(sql)
        let value = UInt64(bitPattern: checksum.finalize())
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private func appliedMigrations(_ connection: Connection, path: String) throws -> [(
        identifier: String, checksum: String
    )] {
        // A store has the table, so it is looked for only when reading it fails, to tell a
        // store without its history from other errors: looking first cost every launch a query.
        let statement: Statement
        do {
            statement = try connection.statement("SELECT identifier, checksum FROM schema_migration ORDER BY sequence")
        } catch {
            let exists = try connection.pragmaInteger(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migration'")
            guard exists == 1 else {
                throw ArchiveStoreError.notAStore(path: path, reason: "it has no schema history")
            }
            throw error
        }
        defer { statement.reset() }
        var records: [(identifier: String, checksum: String)] = []
        while try statement.step() {
            records.append((try statement.string(0), try statement.string(1)))
        }
        return records
    }
}
