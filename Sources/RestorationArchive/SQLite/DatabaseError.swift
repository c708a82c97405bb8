internal import CSQLite

/// An error reported by SQLite.
///
/// It carries SQLite's result codes, its message and the SQL text of the statement that
/// failed. It never carries the values bound to that statement: restoration state is the
/// user's data and must not end up in logs or crash reports.
public struct DatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The primary result code, such as ``ResultCode/busy`` or ``ResultCode/corrupt``.
    public var resultCode: ResultCode { extendedResultCode.primary }
    /// The extended result code, such as ``ResultCode/cantOpenSymlink``.
    public let extendedResultCode: ResultCode
    /// SQLite's own explanation (`sqlite3_errmsg`), or the generic text of the code.
    public let message: String
    /// The SQL text that failed, if a statement was involved. Never bound values.
    public let sql: String?

    init(extendedCode: Int32, message: String?, sql: String? = nil) {
        self.extendedResultCode = ResultCode(rawValue: extendedCode)
        self.message = message ?? String(cString: sqlite3_errstr(extendedCode))
        self.sql = sql
    }

    /// Reads the last error of `handle`.
    init(handle: OpaquePointer?, code: Int32, sql: String? = nil) {
        guard let handle else {
            self.init(extendedCode: code, message: nil, sql: sql)
            return
        }
        let extended = sqlite3_extended_errcode(handle)
        // The handle's last error may belong to an earlier call when `code` came from a
        // function that does not set it; trust `code` then.
        let useHandle = extended & 0xFF == code & 0xFF
        self.init(
            extendedCode: useHandle ? extended : code,
            message: useHandle ? String(cString: sqlite3_errmsg(handle)) : nil,
            sql: sql
        )
    }

    public var description: String {
        var text = "SQLite error \(extendedResultCode.rawValue): \(message)"
        if let sql { text += " — while executing `\(sql)`" }
        return text
    }
}
