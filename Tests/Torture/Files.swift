import CSQLite
import Foundation

/// File helpers besides TestSupport's (`fileBytes`, `fileExists`, `fileMode`).
enum Files {
    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(filePath: path))
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The first value of the first row that `sql` gives, as text, read by a read-only
    /// connection of SQLite's own (not the library's); `nil` when it cannot be read.
    static func firstValue(of sql: String, in path: String) -> String? {
        var database: OpaquePointer?
        defer { sqlite3_close(database) }
        guard sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return nil }
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK,
            sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0)
        else { return nil }
        return String(cString: text)
    }

    /// The store file and its side files.
    static func storeFiles(_ path: String) -> [String] {
        [path, path + "-wal", path + "-shm", path + "-journal"]
    }

    /// With `TORTURE_KEEP_FAILED=FOLDER` set, a copy of the store's files at `path` (the store
    /// and its side files, as a killed app left them) in a new folder `name` of FOLDER, for
    /// ``settle(_:of:children:)`` to keep if the trial fails; `nil` otherwise.
    static func keepCopy(of path: String, named name: String) -> String? {
        guard let folder = ProcessInfo.processInfo.environment["TORTURE_KEEP_FAILED"], !folder.isEmpty else { return nil }
        let copy = "\(folder)/\(name)"
        remove(copy)
        guard (try? FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)) != nil else { return nil }
        for file in storeFiles(path) where FileManager.default.fileExists(atPath: file) {
            try? FileManager.default.copyItem(atPath: file, toPath: copy + "/" + URL(filePath: file).lastPathComponent)
        }
        return copy
    }

    /// Removes the copy ``keepCopy(of:named:)`` made when `trial` passed; when it failed,
    /// keeps it with what the children said (`children.txt`) and names it in the failure.
    static func settle(_ copy: String, of trial: inout Trial, children: [Child]) {
        guard !trial.problems.isEmpty else { return remove(copy) }
        let said = children.map { $0.lines.joined(separator: "\n") }.joined(separator: "\n--- next child\n")
        try? Data((said + "\n").utf8).write(to: URL(filePath: copy + "/children.txt"))
        trial.fail("the store's files as the children left them are kept in \(copy)")
    }

    /// The largest resident set this process has had, in bytes.
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }
}
