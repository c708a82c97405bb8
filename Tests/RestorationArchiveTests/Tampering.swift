import CSQLite
import Foundation
@testable import RestorationArchive

/// Raw SQL against a store file, bypassing the library, to damage it the way a bad disk,
/// another program or a newer library would.
func tamper(with path: String, _ sql: String) throws {
    let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
    try connection.execute(sql)
}

/// The bytes of a file, or `nil` when it does not exist.
func fileBytes(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count == 0 { break }
        bytes.append(contentsOf: buffer[0..<count])
    }
    return bytes
}

func fileExists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o777
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, count >= needle.count else { return false }
        return (0...(count - needle.count)).contains { start in
            self[start] == needle[0] && Array(self[start..<start + needle.count]) == needle
        }
    }
}
