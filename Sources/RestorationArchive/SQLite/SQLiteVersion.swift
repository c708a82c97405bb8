internal import CSQLite

/// The SQLite the process links, against the oldest that can serve a store.
enum SQLiteVersion {
    /// 3.37.0: the store's tables are `STRICT`. (`RETURNING` came in 3.35.0.)
    static let minimum: Int32 = 3_037_000
    static let minimumText = "3.37.0"

    /// The running library's version number (`3_040_001` for 3.40.1).
    static var running: Int32 { sqlite3_libversion_number() }

    /// Refuses an SQLite older than ``minimum``: it fails a new store's migration with a
    /// syntax error, and reads an existing store's schema as malformed, which an app would
    /// take for damage and erase. Checked before any store is opened or erased.
    static func check() throws(ArchiveStoreError) {
        try check(running: running, text: String(cString: sqlite3_libversion()))
    }

    static func check(running: Int32, text: String) throws(ArchiveStoreError) {
        guard running >= minimum else {
            throw .invalidConfiguration(
                "this process links SQLite \(text), and archive stores need \(minimumText) or newer (their tables are STRICT)")
        }
    }
}
