import Foundation
public import RestorationArchive

/// Runs `body` with a fresh, empty directory that is removed afterwards, whatever happens.
///
/// Each call gets its own directory, so tests running in parallel never share a store.
public func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    var template = Array((NSTemporaryDirectory() + "/restoration-test-XXXXXX").utf8CString)
    guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw POSIXError(.init(rawValue: errno) ?? .EIO)
    }
    let path = String(cString: created)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Runs `body` with the path of a store that does not exist yet, in a temporary directory.
public func withTemporaryStorePath<Result>(_ body: (String) throws -> Result) throws -> Result {
    try withTemporaryDirectory { directory in try body(directory + "/store.sqlite") }
}

/// Runs `body` with a new read-write store in a temporary directory.
public func withTemporaryStore<Result>(
    configuration: ArchiveStore.Configuration = .init(), _ body: (ArchiveStore) throws -> Result
) throws -> Result {
    try withTemporaryStorePath { path in
        try body(ArchiveStore(path: path, configuration: configuration))
    }
}

/// Another path naming the same file: `/./` before its last component.
public func spelledAnotherWay(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "./" + path }
    return path[..<slash] + "/." + path[slash...]
}
