import CSQLite
import Foundation
import Testing
@testable import RestorationArchive

/// Raw SQL against a store file, bypassing the library, to damage it the way a bad disk,
/// another program or a newer library would.
func tamper(with path: String, _ sql: String) throws {
    let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
    try connection.execute(sql)
}

/// Replaces `from` with `to` in the schema text of a store file's `table`, as damage to the
/// page holding the schema would: SQLite reads the damaged text at the next open.
func tamperWithSchema(of path: String, table: String, replacing from: String, with to: String) throws {
    var handle: OpaquePointer?
    defer { sqlite3_close_v2(handle) }
    let sql = """
        PRAGMA writable_schema = ON;
        UPDATE sqlite_schema SET sql = replace(sql, '\(from)', '\(to)') WHERE name = '\(table)';
        PRAGMA writable_schema = OFF;
        """
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
        sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK
    else {
        throw DatabaseError(handle: handle, code: sqlite3_errcode(handle), sql: sql)
    }
}

/// Changes, in place, the root page of the table or index `name` of a store file, as damage
/// to its bytes does: `edit` gets the page and the offset of its b-tree header in it (100 on
/// the first page). The write-ahead log is checkpointed first, so that the file holds the
/// page; open the store anew afterwards (an open one may have the page cached).
private func editRootPage(of name: String, at path: String, _ edit: (inout [UInt8], _ header: Int) throws -> Void) throws {
    let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
    try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    let root = try #require(try connection.pragmaInteger("SELECT rootpage FROM sqlite_schema WHERE name = '\(name)'"))
    let pageSize = try #require(try connection.pragmaInteger("PRAGMA page_size"))
    let handle = try #require(FileHandle(forUpdatingAtPath: path))
    defer { try? handle.close() }
    let start = UInt64((root - 1) * pageSize)
    try handle.seek(toOffset: start)
    var page = [UInt8](try #require(try handle.read(upToCount: Int(pageSize))))
    try edit(&page, root == 1 ? 100 : 0)
    try handle.seek(toOffset: start)
    try handle.write(contentsOf: page)
}

/// Makes the root page of `index` of a store file one SQLite cannot read, as damage to its
/// first byte does: the page's type is none SQLite knows ("malformed" at any read through the
/// index); its table keeps its rows.
func damagePageType(ofIndex index: String, at path: String) throws {
    try editRootPage(of: index, at: path) { page, header in
        try #require(page[header] == 0x0A, "the root page of '\(index)' is a leaf page of an index")
        page[header] = 0x07
    }
}

/// Makes the root page of the table or index `name` of a store file one SQLite cannot read,
/// as damage to its first byte does: the page's type is none SQLite knows ("malformed" at
/// any read of it), while the rest of the file, the schema with it, stays readable.
func makeRootPageUnreadable(of name: String, at path: String) throws {
    try editRootPage(of: name, at: path) { page, header in page[header] = 0x07 }
}

/// Takes the last entry (by key) out of `index` of a store file, as damage to its page does:
/// the index, a single leaf page here, counts one cell fewer; its table keeps the row.
func dropLastEntry(ofIndex index: String, at path: String) throws {
    try editRootPage(of: index, at: path) { page, header in
        try #require(page[header] == 0x0A, "the root page of '\(index)' is a leaf page of an index")
        let cells = Int(page[header + 3]) << 8 | Int(page[header + 4])
        try #require(cells > 0)
        page[header + 3] = UInt8((cells - 1) >> 8)
        page[header + 4] = UInt8((cells - 1) & 0xFF)
    }
}

/// Replaces the bytes `from` with `to` (as many) in the root page of `index` of a store file,
/// in place, as damage to them does: an entry's key, or the row it points to, changes, and
/// its table keeps the row. The index is a single leaf page here, holding `from` once.
func changeEntry(ofIndex index: String, from: [UInt8], to: [UInt8], at path: String) throws {
    try #require(from.count == to.count)
    try editRootPage(of: index, at: path) { page, header in
        try #require(page[header] == 0x0A, "the root page of '\(index)' is a leaf page of an index")
        let found = (0...(page.count - from.count)).filter { page[$0..<($0 + from.count)].elementsEqual(from) }
        try #require(found.count == 1, "'\(index)' holds the bytes once")
        page.replaceSubrange(found[0]..<(found[0] + from.count), with: to)
    }
}

/// Changes the key of row `rowid` of `table` in a store file to `key`, in place, as a flipped
/// bit in the row's cell does: the table's b-tree keeps the row where it was, out of order.
/// (SQL that changes a key moves the row.) The table is a single leaf page here, and both
/// keys are below 128 (a varint of one byte).
func changeKey(ofRow rowid: Int64, inTable table: String, to key: Int64, at path: String) throws {
    try #require((1..<128).contains(rowid) && (1..<128).contains(key))
    try editRootPage(of: table, at: path) { page, header in
        try #require(page[header] == 0x0D, "the root page of '\(table)' is a leaf page of a table")
        let cells = Int(page[header + 3]) << 8 | Int(page[header + 4])
        for cell in 0..<cells {
            let pointer = header + 8 + 2 * cell
            var offset = Int(page[pointer]) << 8 | Int(page[pointer + 1])
            while page[offset] & 0x80 != 0 { offset += 1 }  // the payload's length, a varint
            offset += 1
            guard page[offset] == UInt8(rowid) else { continue }
            page[offset] = UInt8(key)
            return
        }
        Issue.record("'\(table)' has no row \(rowid) on its page")
    }
}

/// Raw SQL against a store file's `table` with its `STRICT` taken away while `sql` runs, so
/// that a column can be given a value of another storage class, as only a damaged file (a
/// bad disk, another program writing the pages) otherwise holds. The schema text is put back
/// as it was afterwards; the rows keep what `sql` wrote.
func tamperBypassingStrict(with path: String, table: String, _ sql: String) throws {
    func execute(_ sql: String) throws {
        // A plain connection: the library's is defensive, which forbids writing the schema.
        var handle: OpaquePointer?
        defer { sqlite3_close_v2(handle) }
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
            sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK
        else {
            throw DatabaseError(handle: handle, code: sqlite3_errcode(handle), sql: sql)
        }
    }
    func setSchema(_ from: String, _ to: String) throws {
        try execute(
            """
            PRAGMA writable_schema = ON;
            UPDATE sqlite_schema SET sql = replace(sql, '\(from)', '\(to)') WHERE type = 'table' AND name = '\(table)';
            PRAGMA writable_schema = OFF;
            """)
    }
    // Tables with and without rowids; the comment says which form to put back.
    try setSchema(") STRICT, WITHOUT ROWID", ") WITHOUT ROWID /*STRICT*/")
    try setSchema(") STRICT", ") /*STRICT*/")
    try execute(sql)  // a new connection: it reads the schema without STRICT
    try setSchema(") WITHOUT ROWID /*STRICT*/", ") STRICT, WITHOUT ROWID")
    try setSchema(") /*STRICT*/", ") STRICT")
}

/// The assignments that make a crash marker or a journal entry name `process` as its writer,
/// with the process's start as the library records it (schema v0010).
func writer(_ process: Process) throws -> String {
    let start = try #require(ProcessIdentity.start(of: process.processIdentifier))
    return "process_id = \(process.processIdentifier), process_boot = '\(start.boot)', process_start = \(start.ticks)"
}

/// Rewrites the crash marker of `archive` at `path` as the library writes one, changed by
/// `change`, its checksum (schema v0013) made again: another process played, not damage.
func rewriteMarker(at path: String, of archive: ArchiveName = .main, _ change: (inout ArchiveStore.Marker) -> Void) throws {
    let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
    let row = try #require(try ArchiveRows.archive(named: archive, in: connection))
    var marker = try #require(try ArchiveStore.marker(of: row, connection))
    change(&marker)
    try ArchiveStore.write(marker, of: row, connection)
}

/// Writes `marker` as the crash marker of `archive` at `path`, as the library writes one
/// (with its checksum), replacing the one it has.
func writeMarker(_ marker: ArchiveStore.Marker, at path: String, of archive: ArchiveName = .main) throws {
    let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
    let row = try #require(try ArchiveRows.archive(named: archive, in: connection))
    try ArchiveStore.write(marker, of: row, connection)
}

/// Makes every lifecycle journal entry at `path` match its checksum again (schema v0012), as
/// the library writes one: after SQL that plays another process's entries, rather than
/// leaving them without a checksum, as entries written before v0012 are.
func resealJournal(at path: String) throws {
    let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
    let rows = try connection.statement("SELECT \(JournalEntryRow.columns) FROM journal")
    var checksums: [(rowid: Int64, checksum: Int64)] = []
    while try rows.step() {
        let rowid = try rows.int64(0)
        let launch = try rows.optionalInt64(1)
        let row = JournalEntryRow(
            launch: launch, startsItsLaunch: launch == rowid, at: try rows.int64(2), processID: try rows.int64(3),
            event: try rows.string(4), applicationState: try rows.optionalString(5), archive: try rows.optionalString(6),
            generation: try rows.optionalInt64(7), detail: try rows.optionalString(8),
            processBoot: try rows.optionalString(9), processStart: try rows.optionalInt64(10))
        checksums.append((rowid, row.checksum))
    }
    rows.reset()
    let update = try connection.statement("UPDATE journal SET checksum = ? WHERE rowid = ?")
    for (rowid, checksum) in checksums {
        try update.bind(checksum, at: 1)
        try update.bind(rowid, at: 2)
        try update.run()
        update.reset()
    }
}

/// Makes the crash marker of `archive` at `path` one that a process which has exited wrote,
/// as a restoration killed in another process leaves it (its checksum made again).
func markRestorationDead(at path: String, of archive: ArchiveName = .main) throws {
    let dead = Int64(try deadProcessID())
    try rewriteMarker(at: path, of: archive) { $0.processID = dead }
}

