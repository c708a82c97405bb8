public import Foundation

/// The bytes of a file, or `nil` when it does not exist: what is really on disk, read around
/// the library.
public func fileBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

/// Whether anything (a file, a folder, a symbolic link, even a dangling one) is at `path`.
public func fileExists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

/// The permission bits of what is at `path` (not following a symbolic link), or `nil`.
public func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o777
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    public func contains(bytes needle: [UInt8]) -> Bool {
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
