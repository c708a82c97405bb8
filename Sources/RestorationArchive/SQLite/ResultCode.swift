/// A result code returned by SQLite: primary (low byte) or extended.
///
/// Compare a code against the named constants, or use ``primary`` to match the
/// family of an extended code. The store's calls throw ``ArchiveStoreError``, which carries
/// SQLite's errors as ``ArchiveStoreError/database(_:)``:
///
/// ```swift
/// do {
///     try store.save(nodes, header: header)
/// } catch ArchiveStoreError.database(let error) where error.resultCode == .busy {
///     saveAgainLater()  // another connection held the write lock past the busy timeout
/// }
/// ```
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The integer value SQLite returned.
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low byte of an extended code).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// `SQLITE_OK`
    public static let ok = ResultCode(rawValue: 0)
    /// `SQLITE_ERROR`: a generic error, usually in the SQL itself.
    public static let error = ResultCode(rawValue: 1)
    /// `SQLITE_INTERNAL`
    public static let `internal` = ResultCode(rawValue: 2)
    /// `SQLITE_PERM`: the file's permissions refuse the access.
    public static let permission = ResultCode(rawValue: 3)
    /// `SQLITE_ABORT`
    public static let abort = ResultCode(rawValue: 4)
    /// `SQLITE_BUSY`: another connection holds a conflicting lock past the busy timeout.
    public static let busy = ResultCode(rawValue: 5)
    /// `SQLITE_LOCKED`
    public static let locked = ResultCode(rawValue: 6)
    /// `SQLITE_NOMEM`
    public static let noMemory = ResultCode(rawValue: 7)
    /// `SQLITE_READONLY`: a write was attempted on a read-only connection or file.
    public static let readOnly = ResultCode(rawValue: 8)
    /// `SQLITE_INTERRUPT`
    public static let interrupt = ResultCode(rawValue: 9)
    /// `SQLITE_IOERR`: the operating system reported an I/O error.
    public static let ioError = ResultCode(rawValue: 10)
    /// `SQLITE_CORRUPT`: the database file is damaged.
    public static let corrupt = ResultCode(rawValue: 11)
    /// `SQLITE_FULL`: the disk (or `max_page_count`) is full.
    public static let full = ResultCode(rawValue: 13)
    /// `SQLITE_CANTOPEN`: the file could not be opened.
    public static let cantOpen = ResultCode(rawValue: 14)
    /// `SQLITE_PROTOCOL`
    public static let `protocol` = ResultCode(rawValue: 15)
    /// `SQLITE_SCHEMA`
    public static let schema = ResultCode(rawValue: 17)
    /// `SQLITE_TOOBIG`: a string or blob exceeds SQLite's length limit.
    public static let tooBig = ResultCode(rawValue: 18)
    /// `SQLITE_CONSTRAINT`: a constraint (unique, check, foreign key) was violated.
    public static let constraint = ResultCode(rawValue: 19)
    /// `SQLITE_MISMATCH`
    public static let mismatch = ResultCode(rawValue: 20)
    /// `SQLITE_MISUSE`
    public static let misuse = ResultCode(rawValue: 21)
    /// `SQLITE_RANGE`
    public static let range = ResultCode(rawValue: 25)
    /// `SQLITE_NOTADB`: the file is not an SQLite database.
    public static let notADatabase = ResultCode(rawValue: 26)
    /// `SQLITE_ROW`
    public static let row = ResultCode(rawValue: 100)
    /// `SQLITE_DONE`
    public static let done = ResultCode(rawValue: 101)

    /// `SQLITE_CANTOPEN_SYMLINK`: the path is a symbolic link and `SQLITE_OPEN_NOFOLLOW` was set.
    public static let cantOpenSymlink = ResultCode(rawValue: 14 | (6 << 8))
    /// `SQLITE_READONLY_CANTINIT`: a read-only connection cannot initialise the WAL index.
    public static let readOnlyCantInit = ResultCode(rawValue: 8 | (5 << 8))
    /// `SQLITE_READONLY_RECOVERY`: a connection that cannot write the WAL index found it in
    /// need of rebuilding.
    public static let readOnlyRecovery = ResultCode(rawValue: 8 | (1 << 8))
    /// `SQLITE_READONLY_DIRECTORY`: the database's folder cannot be written, so its
    /// write-ahead log or journal cannot be created there.
    public static let readOnlyDirectory = ResultCode(rawValue: 8 | (6 << 8))
    /// `SQLITE_READONLY_DBMOVED`: the database's file was removed, renamed or replaced since
    /// the connection opened it, so what it writes would reach a file its path no longer
    /// names. The library's connections also refuse a write with it when the database's
    /// write-ahead log, or the log's index, was removed or renamed.
    public static let readOnlyDatabaseMoved = ResultCode(rawValue: 8 | (4 << 8))
    /// `SQLITE_IOERR_SHORT_READ`: a read found fewer bytes than it asked for. SQLite reads a
    /// short database file as zeros, so this comes from a write-ahead log shorter than its
    /// shared-memory index says.
    public static let ioErrorShortRead = ResultCode(rawValue: 10 | (2 << 8))
    /// `SQLITE_BUSY_SNAPSHOT`
    public static let busySnapshot = ResultCode(rawValue: 5 | (2 << 8))
    /// `SQLITE_CONSTRAINT_CHECK`: a `CHECK` constraint refused a value.
    public static let constraintCheck = ResultCode(rawValue: 19 | (1 << 8))

    public var description: String {
        "SQLite result code \(rawValue)"
    }
}
