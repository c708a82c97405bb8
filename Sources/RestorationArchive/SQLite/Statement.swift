internal import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A prepared statement, owned and cached by its ``Connection``.
///
/// Not thread-safe: used only while its connection's owner holds the connection.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    private unowned let connection: Connection

    init(connection: Connection, sql: String) throws(DatabaseError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(
            connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw DatabaseError(handle: connection.handle, code: code, sql: sql)
        }
        self.handle = statement
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Clears bindings and resets the statement so it can run again.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Binding (parameters are 1-based, as in SQLite)

    func bind(_ value: Int64, at index: Int32) throws(DatabaseError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    func bind(_ value: Int, at index: Int32) throws(DatabaseError) {
        try bind(Int64(value), at: index)
    }

    func bind(_ value: Double, at index: Int32) throws(DatabaseError) {
        try check(sqlite3_bind_double(handle, index, value))
    }

    func bind(_ value: String, at index: Int32) throws(DatabaseError) {
        try check(UTF8Text.withBytes(of: value) { bindText($0, at: index, copied: true) })
    }

    private func bindText(_ utf8: UnsafeRawBufferPointer, at index: Int32, copied: Bool) -> Int32 {
        // A zero-length text still needs a non-NULL pointer, or SQLite stores NULL.
        sqlite3_bind_text64(
            handle, index, utf8.baseAddress?.assumingMemoryBound(to: CChar.self) ?? UnsafePointer(bitPattern: 1),
            UInt64(utf8.count), copied ? restoration_sqlite_transient() : nil, UInt8(SQLITE_UTF8))
    }

    private func bindBlob(_ bytes: UnsafeRawBufferPointer, at index: Int32, copied: Bool) -> Int32 {
        // A zero-length blob still needs a non-NULL pointer, or SQLite stores NULL.
        sqlite3_bind_blob64(
            handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(bytes.count),
            copied ? restoration_sqlite_transient() : nil)
    }

    // Bytes bound in place: SQLite reads them where they are, without a copy of its own, so
    // they must stay valid until the statement is reset (which clears its bindings): bind,
    // run and reset inside the scope that lends them.

    func bind(inPlaceText utf8: UnsafeRawBufferPointer, at index: Int32) throws(DatabaseError) {
        try check(bindText(utf8, at: index, copied: false))
    }

    func bind(inPlaceBlob bytes: UnsafeRawBufferPointer, at index: Int32) throws(DatabaseError) {
        try check(bindBlob(bytes, at: index, copied: false))
    }

    func bind(_ value: Int64?, at index: Int32) throws(DatabaseError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    func bind(_ value: String?, at index: Int32) throws(DatabaseError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    func bind(_ value: Substring?, at index: Int32) throws(DatabaseError) {
        guard let value else { return try bindNull(at: index) }
        try check(UTF8Text.withBytes(of: value) { bindText($0, at: index, copied: true) })
    }

    func bind(bytes: [UInt8], at index: Int32) throws(DatabaseError) {
        try check(bytes.withUnsafeBytes { bindBlob($0, at: index, copied: true) })
    }

    func bindNull(at index: Int32) throws(DatabaseError) {
        try check(sqlite3_bind_null(handle, index))
    }

    /// Binds the value in `column` of `other`'s current row as it is, of whatever type (a copy:
    /// `other` may step or reset after).
    func bind(valueIn column: Int32, of other: Statement, at index: Int32) throws(DatabaseError) {
        try check(sqlite3_bind_value(handle, index, sqlite3_column_value(other.handle, column)))
    }

    // MARK: Stepping

    /// Runs one step: `true` when a row is available, `false` when done.
    func step() throws(DatabaseError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = DatabaseError(handle: connection.handle, code: code, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs the statement to completion, ignoring any rows.
    func run() throws(DatabaseError) {
        while try step() {}
    }

    // MARK: Columns (0-based, as in SQLite)

    /// Whether `column` holds text (its storage class, before any conversion).
    func isText(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_TEXT
    }

    func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// An integer column. A value of another storage class (a damaged file) is an error.
    func int64(_ column: Int32) throws(ColumnError) -> Int64 {
        guard sqlite3_column_type(handle, column) == SQLITE_INTEGER else {
            throw ColumnError.unexpectedType(column: columnName(column), expected: "integer")
        }
        return sqlite3_column_int64(handle, column)
    }

    /// An integer column as SQLite converts it, its storage class not checked: only for a
    /// column whose value a checksum covers, so that a value of another class (a damaged file)
    /// fails that checksum rather than this read. It saves a `sqlite3_column_type` call, about
    /// 55 instructions.
    func uncheckedInt64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func optionalInt64(_ column: Int32) throws(ColumnError) -> Int64? {
        isNull(column) ? nil : try int64(column)
    }

    func double(_ column: Int32) throws(ColumnError) -> Double {
        guard sqlite3_column_type(handle, column) == SQLITE_FLOAT else {
            throw ColumnError.unexpectedType(column: columnName(column), expected: "real")
        }
        return sqlite3_column_double(handle, column)
    }

    /// A text column, validated as UTF-8: invalid bytes are an error, never repaired.
    func string(_ column: Int32) throws(ColumnError) -> String {
        try string(column, stored: storedText(column))
    }

    /// The text of `column` as read in place by ``storedText(_:)``, validated as UTF-8.
    func string(_ column: Int32, stored bytes: UnsafeRawBufferPointer) throws(ColumnError) -> String {
        try Self.string(validating: bytes, column: columnName(column))
    }

    /// The text of a column whose bytes were copied out of the statement, validated as UTF-8;
    /// `column` names it in the error.
    static func string(validating bytes: UnsafeRawBufferPointer, column: @autoclosure () -> String)
        throws(ColumnError) -> String
    {
        guard let string = UTF8Text.string(validating: bytes.assumingMemoryBound(to: UInt8.self)) else {
            throw ColumnError.invalidUTF8(column: column())
        }
        return string
    }

    func optionalString(_ column: Int32) throws(ColumnError) -> String? {
        isNull(column) ? nil : try string(column)
    }

    /// A blob column, copied out (from a typed buffer: an array made from a raw one cost
    /// about 70 more instructions for a state of 300 bytes).
    func bytes(_ column: Int32) throws(ColumnError) -> [UInt8] {
        [UInt8](try storedBlob(column).assumingMemoryBound(to: UInt8.self))
    }

    // The bytes of a column in place, neither copied nor validated: valid only until the
    // statement steps or is reset. A value of another storage class is an error.

    func storedText(_ column: Int32) throws(ColumnError) -> UnsafeRawBufferPointer {
        try stored(column, type: SQLITE_TEXT, expected: "text")
    }

    func storedBlob(_ column: Int32) throws(ColumnError) -> UnsafeRawBufferPointer {
        try stored(column, type: SQLITE_BLOB, expected: "blob")
    }

    /// The bytes of a text or blob column in place, as ``storedBlob(_:)`` reads them but with
    /// its storage class not checked (a number reads as its text, `NULL` as empty): only for a
    /// column whose bytes a checksum covers, as for ``uncheckedInt64(_:)``.
    func uncheckedBytes(_ column: Int32) -> UnsafeRawBufferPointer {
        storedBytes(column)
    }

    private func stored(_ column: Int32, type: Int32, expected: String) throws(ColumnError) -> UnsafeRawBufferPointer {
        guard sqlite3_column_type(handle, column) == type else {
            throw ColumnError.unexpectedType(column: columnName(column), expected: expected)
        }
        return storedBytes(column)
    }

    private func storedBytes(_ column: Int32) -> UnsafeRawBufferPointer {
        // `sqlite3_column_blob` converts nothing, text included; it comes before
        // `sqlite3_column_bytes`, as SQLite asks.
        let pointer = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        // No pointer for an empty value, or when SQLite is out of memory: read as empty.
        guard count > 0, let pointer else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: pointer, count: count)
    }

    private func columnName(_ column: Int32) -> String {
        sqlite3_column_name(handle, column).map { String(cString: $0) } ?? "#\(column)"
    }

    private func check(_ code: Int32) throws(DatabaseError) {
        guard code == SQLITE_OK else {
            throw DatabaseError(handle: connection.handle, code: code, sql: sql)
        }
    }
}

/// A column whose content is not what the schema promises: only a damaged file does that.
enum ColumnError: Error, Sendable, Hashable, CustomStringConvertible {
    case unexpectedType(column: String, expected: String)
    case invalidUTF8(column: String)

    var description: String {
        switch self {
        case .unexpectedType(let column, let expected): "column '\(column)' holds a value that is not \(expected)"
        case .invalidUTF8(let column): "column '\(column)' holds text that is not valid UTF-8"
        }
    }
}
