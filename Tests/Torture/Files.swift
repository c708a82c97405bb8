import Foundation

/// File helpers that go around the library, as damage and inspection do.
enum Files {
    static func read(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(filePath: path))
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The permission bits, or `nil` when nothing is at `path`.
    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The store file and its side files.
    static func storeFiles(_ path: String) -> [String] {
        [path, path + "-wal", path + "-shm", path + "-journal"]
    }

    /// A fresh directory, removed when `body` returns.
    static func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
        var template = Array((NSTemporaryDirectory() + "/restoration-torture-XXXXXX").utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        let path = String(cString: created)
        defer { remove(path) }
        return try body(path)
    }

    /// The largest resident set this process has had, in bytes.
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func contains(bytes needle: [UInt8]) -> Bool {
        guard let first = needle.first, count >= needle.count else { return false }
        var start = 0
        while start <= count - needle.count {
            guard let found = self[start...(count - needle.count)].firstIndex(of: first) else { return false }
            if self[found..<found + needle.count].elementsEqual(needle) { return true }
            start = found + 1
        }
        return false
    }
}
