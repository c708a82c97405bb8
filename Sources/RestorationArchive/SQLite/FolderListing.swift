#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The names a folder lists, read with `readdir`: for a look at a folder the library did not
/// make (this process's descriptors in `/dev/fd`, a folder found where a store's side file
/// should be), without Foundation.
enum FolderListing {
    /// Calls `body` with each name in the folder at `path` but `.` and `..`, and with the
    /// descriptor the listing itself reads through (which `/dev/fd` lists too), until `body`
    /// returns `false`. Returns `false` when the folder cannot be opened.
    @discardableResult
    static func forEachName(inFolderAt path: String, _ body: (_ name: String, _ listing: Int32) -> Bool) -> Bool {
        guard let folder = opendir(path) else { return false }
        defer { closedir(folder) }
        let listing = dirfd(folder)
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != "." && name != ".." else { continue }
            guard body(name, listing) else { break }
        }
        return true
    }
}
