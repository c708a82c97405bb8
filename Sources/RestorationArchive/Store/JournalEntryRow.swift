/// A journal entry's columns as the store keeps them, and their checksum (schema v0012).
///
/// The checksum covers every column but the entry's id, which is SQLite's key for the row
/// (its damage is SQLite's integrity check's to name): the launch, the time, the process and
/// its start, the event with the state it left the app in, and for a store event its archive,
/// generation and reason. An entry that starts the launch it belongs to, whose launch number
/// is its own id, is written before SQLite numbers it: its launch is covered as "its own",
/// which a launch number or an id that damage changed no longer is.
struct JournalEntryRow {
    /// The entry's launch number, as stored; not covered when ``startsItsLaunch``.
    var launch: Int64?
    /// Whether the entry's launch is the one it starts (its launch number is its id).
    var startsItsLaunch: Bool
    /// When it was written, in milliseconds since 1970.
    var at: Int64
    var processID: Int64
    /// A ``LifecycleEvent``'s raw value, `invalidated` or `discarded`.
    var event: String
    var applicationState: String?
    var archive: String?
    var generation: Int64?
    var detail: String?
    var processBoot: String?
    var processStart: Int64?

    var checksum: Int64 {
        var checksum = Checksum(domain: 0x4A52_4E4C)  // "JRNL"
        checksum.combine(Int64(startsItsLaunch ? 1 : 0))
        checksum.combine(startsItsLaunch ? nil : launch)
        checksum.combine(at)
        checksum.combine(processID)
        checksum.combine(event)
        checksum.combine(applicationState)
        checksum.combine(archive)
        checksum.combine(generation)
        checksum.combine(detail)
        checksum.combine(processBoot)
        checksum.combine(processStart)
        return checksum.finalize()
    }

    /// The columns of the entries' queries, in this order: the id first, what the checksum
    /// covers, then the checksum itself. The id is read as `rowid`, which the `id` column is
    /// in the store's schema, and which numbers the rows of a journal another program
    /// rebuilt without that key (its `id` NULL in the rows written since).
    static let columns =
        "rowid, launch, at, process_id, event, app_state, archive, generation, detail, process_boot, process_start, checksum"

    /// The checksum a row of ``columns`` (from the statement's first column) holds, and the
    /// one its other columns make; `nil` when the row has none (written before v0012).
    /// Throws when a column cannot be read as its type.
    static func checksums(in statement: Statement) throws(ColumnError) -> (stored: Int64, computed: Int64)? {
        guard let stored = try statement.optionalInt64(11) else { return nil }
        let id = try statement.int64(0)
        let launch = try statement.optionalInt64(1)
        let row = JournalEntryRow(
            launch: launch, startsItsLaunch: launch == id, at: try statement.int64(2), processID: try statement.int64(3),
            event: try statement.string(4), applicationState: try statement.optionalString(5),
            archive: try statement.optionalString(6), generation: try statement.optionalInt64(7),
            detail: try statement.optionalString(8), processBoot: try statement.optionalString(9),
            processStart: try statement.optionalInt64(10))
        return (stored, row.checksum)
    }
}
