public import Foundation

/// The bytes of a file, or `nil` when it does not exist: what is really on disk, read around
/// the library. (With `fread`: Foundation's `FileManager.contents(atPath:)` can leak a 4 KiB
/// buffer on Linux, which LeakSanitizer reports.)
public func fileBytes(_ path: String) -> [UInt8]? {
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

/// Writes `bytes` over a file's bytes from `offset`, in place: the file keeps its inode and
/// mode, as damage from a bad disk would leave it.
public func overwrite(_ path: String, from offset: Int, with bytes: [UInt8]) throws {
    guard let file = fopen(path, "r+b") else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    defer { fclose(file) }
    guard fseek(file, offset, SEEK_SET) == 0, fwrite(bytes, 1, bytes.count, file) == bytes.count else {
        throw POSIXError(.init(rawValue: errno) ?? .EIO)
    }
}

/// Whether anything (a file, a folder, a symbolic link, even a dangling one) is at `path`.
public func fileExists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

/// The size in bytes of what is at `path` (not following a symbolic link), or `nil`; read
/// without opening the file.
public func fileSize(_ path: String) -> Int? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return Int(info.st_size)
}

/// The permission bits of what is at `path` (not following a symbolic link), or `nil`.
public func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o777
}

/// The size and time of last change of the file at `path`, which any write changes once a
/// tick of the system's coarse clock (a few milliseconds) has passed since the last; empty
/// when there is no file. Read by `stat`, never by opening the file: a descriptor of the
/// caller's own, closed, releases every lock its process's SQLite connections hold on it.
public func fileSizeAndChangeTime(_ path: String) -> [Int] {
    var info = stat()
    guard stat(path, &info) == 0 else { return [] }
    return [Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
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

/// The POSIX advisory locks this process holds on the file at `path`, as Linux lists them in
/// `/proc/locks` (type and byte range, such as "READ 1073741826 1073742335"); `nil` where
/// there is no such list or no such file. They belong to the process and the file, whichever
/// descriptor took them: closing any descriptor of the file releases them all.
///
/// The list is read until two readings agree: a long list takes several `read` calls, and a
/// lock taken or released between two of them by another thread (tests run in parallel in
/// one process) can drop or repeat a line of the reading.
public func locksHeldByThisProcess(on path: String) -> [String]? {
    var previous = locksListed(on: path)
    for _ in 0..<10 {
        let next = locksListed(on: path)
        if next == previous { return next }
        previous = next
    }
    return previous
}

private func locksListed(on path: String) -> [String]? {
    var info = stat()
    guard stat(path, &info) == 0, let list = fileBytes("/proc/locks") else { return nil }
    let device = UInt64(info.st_dev)
    let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~0xFFF)
    let minor = (device & 0xFF) | ((device >> 12) & ~0xFF)
    let file = String(format: "%02llx:%02llx:%llu", major, minor, UInt64(info.st_ino))
    let process = String(getpid())
    // "1: POSIX  ADVISORY  READ 12892 fe:00:16328066 1073741826 1073742335"
    return String(decoding: list, as: UTF8.self).split(separator: "\n").compactMap { line in
        let fields = line.split(separator: " ")
        guard fields.count >= 8, fields[1] == "POSIX", fields[4] == process, fields[5] == file else { return nil }
        return "\(fields[3]) \(fields[6]) \(fields[7])"
    }
}

/// The text of one of the package's own files (`docs/cli.md`), found from a test's source
/// file by going up to the folder that holds `Package.swift`.
public func packageFileText(_ relativePath: String, testFile: String = #filePath) throws -> String {
    try fileText(packageRoot(testFile: testFile).appendingPathComponent(relativePath).path)
}

/// The package's folder: the nearest above a test's source file that holds `Package.swift`.
public func packageRoot(testFile: String = #filePath) throws -> URL {
    var folder = URL(fileURLWithPath: testFile).deletingLastPathComponent()
    while !fileExists(folder.appendingPathComponent("Package.swift").path) {
        guard folder.pathComponents.count > 1 else { throw CocoaError(.fileNoSuchFile) }
        folder.deleteLastPathComponent()
    }
    return folder
}

/// The text of a file, read as ``fileBytes(_:)`` reads it.
public func fileText(_ path: String) throws -> String {
    guard let bytes = fileBytes(path) else { throw CocoaError(.fileNoSuchFile) }
    return String(decoding: bytes, as: UTF8.self)
}
