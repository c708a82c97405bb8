import Foundation

/// File helpers besides TestSupport's (`fileBytes`, `fileExists`, `fileMode`).
enum Files {
    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(filePath: path))
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The store file and its side files.
    static func storeFiles(_ path: String) -> [String] {
        [path, path + "-wal", path + "-shm", path + "-journal"]
    }

    /// The largest resident set this process has had, in bytes.
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }
}
