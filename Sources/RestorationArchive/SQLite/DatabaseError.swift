internal import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// SQLite's own explanation (`sqlite3_errmsg`), or the generic text of the code. For an
    /// I/O error, a file SQLite could not open and a full disk, followed by the system's words
    /// for the error the system gave SQLite, when it gave one: "disk I/O error (No space left
    /// on device)".
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
        var message = useHandle ? String(cString: sqlite3_errmsg(handle)) : nil
        if useHandle, let reason = Self.systemReason(handle, code: extended) { message? += " (\(reason))" }
        self.init(extendedCode: useHandle ? extended : code, message: message, sql: sql)
    }

    /// The system's words for the error the system last gave SQLite's connection, for the
    /// codes an operating system error causes: SQLite's own message for a full disk that
    /// failed to grow the log's index is "disk I/O error", which reads as a broken disk. A
    /// symbolic link refused (`SQLITE_OPEN_NOFOLLOW`) is SQLite's decision after a call that
    /// succeeded: the number left then is an earlier call's, and named a reason that was not.
    private static func systemReason(_ handle: OpaquePointer, code: Int32) -> String? {
        let primary = ResultCode(rawValue: code & 0xFF)
        guard primary == .ioError || primary == .cantOpen || primary == .full,
            ResultCode(rawValue: code) != .cantOpenSymlink
        else { return nil }
        let system = sqlite3_system_errno(handle)
        guard system != 0 else { return nil }
        return String(cString: strerror(system))
    }

    public var description: String {
        var text = "SQLite error \(extendedResultCode.rawValue): \(message)"
        if let sql { text += " — while executing `\(sql)`" }
        return text
    }
}
