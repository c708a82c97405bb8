import Foundation
import Testing
import TestSupport

/// Running `restorectl` as `nobody`.
private enum AsNobody {
    static let restorectl = builtProduct("restorectl")
    static let setpriv = "/usr/bin/setpriv"

    /// The user and group, as Debian names them.
    static let user = getpwnam("nobody").map { $0.pointee.pw_uid }
    static let group = getgrnam("nogroup").map { $0.pointee.gr_gid }

    /// Root, `setpriv`, `nobody` and `nogroup`, and `restorectl` and every folder on its way
    /// open to others.
    static var isPossible: Bool {
        guard getuid() == 0, user != nil, group != nil, FileManager.default.isExecutableFile(atPath: setpriv) else {
            return false
        }
        var path = URL(filePath: restorectl).standardizedFileURL.path
        while !path.isEmpty && path != "/" {
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IXOTH != 0 else { return false }
            path = (path as NSString).deletingLastPathComponent
        }
        return true
    }
}

/// A store of another user: its file, its write-ahead log's index, or the folder its log goes
/// in, which this user may not read or write. Root may read and write anything, so these run
/// a real child process as `nobody` (with `setpriv`), and only where the tests run as root and
/// `nobody` can reach `restorectl`.
@Suite("A store of another user", .enabled(if: AsNobody.isPossible))
struct StorePermissionTests {
    static let restorectl = AsNobody.restorectl
    static let setpriv = AsNobody.setpriv

    /// `restorectl` with `arguments`, as `nobody`.
    private func asNobody(_ arguments: [String]) throws -> ProcessOutcome {
        try runProcess(Self.setpriv, ["--reuid=nobody", "--regid=nogroup", "--clear-groups", Self.restorectl] + arguments)
    }

    /// `restorectl demo --step save` on `path` as `nobody`.
    private func saveAsNobody(_ path: String) throws -> ProcessOutcome {
        try asNobody(["demo", "--step", "save", "--db", path])
    }

    /// A store saved by root in a folder of its own, both open to others as `folder` and
    /// `file` say, with no write-ahead log left.
    private func withStore(folder: mode_t, file: mode_t, fileOwnedByNobody: Bool = false, _ body: (String) throws -> Void)
        throws
    {
        try withTemporaryDirectory { directory in
            #expect(chmod(directory, 0o755) == 0)
            let folderPath = directory + "/state"
            let path = folderPath + "/store.sqlite"
            #expect(try runProcess(Self.restorectl, ["demo", "--step", "save", "--db", path]).status == 0)
            #expect(!fileExists(path + "-wal"), "the demo's last connection removes its log")
            #expect(chmod(folderPath, folder) == 0 && chmod(path, file) == 0)
            if fileOwnedByNobody { #expect(chown(path, try #require(AsNobody.user), try #require(AsNobody.group)) == 0) }
            try body(path)
        }
    }

    /// SQLite opens a file it may not write read-only without a word, and the first write
    /// failed with "attempt to write a readonly database", naming an internal statement. The
    /// opening says so, naming the file.
    @Test func aStoreFileItsUserCannotWriteIsRefusedAtOpening() throws {
        try withStore(folder: 0o777, file: 0o644) { path in
            let save = try saveAsNobody(path)
            #expect(save.status == 1)
            #expect(
                save.standardError.contains("open for writing failed for '\(path)': Permission denied"),
                "\(save.standardError)")
            #expect(!save.standardError.contains("INSERT"), "\(save.standardError)")
            let erase = try asNobody(["erase", path, "--yes"])
            #expect(erase.status != 0)
            #expect(erase.standardError.contains("Permission denied"), "\(erase.standardError)")
        }
    }

    /// SQLite creates the write-ahead log next to the store: a folder the user cannot write
    /// failed with "attempt to write a readonly database" on an internal pragma. The error
    /// names the folder.
    @Test func aFolderItsUserCannotWriteInIsNamed() throws {
        try withStore(folder: 0o755, file: 0o600, fileOwnedByNobody: true) { path in
            let save = try saveAsNobody(path)
            #expect(save.status == 1)
            let folder = try String(path[..<#require(path.lastIndex(of: "/"))])
            #expect(save.standardError.contains("'\(folder)': Permission denied"), "\(save.standardError)")
            #expect(!save.standardError.contains("PRAGMA"), "\(save.standardError)")
        }
    }

    /// A store is created 0600: another user inspecting it got "SQLite error 14: unable to
    /// open database file". The opening says the file may not be read.
    @Test func aStoreFileItsUserCannotReadIsSaidSo() throws {
        try withStore(folder: 0o755, file: 0o600) { path in
            let info = try asNobody(["info", path])
            #expect(info.status != 0)
            #expect(
                info.standardError.contains("open for reading failed for '\(path)': Permission denied"),
                "\(info.standardError)")
        }
    }

    /// The app runs (its log and the log's index are there) and its index may not be read by
    /// this user: it was taken for an index that is missing or must be rebuilt, and the user
    /// told to wait for the app to mend it, which it never would.
    @Test func aLogIndexItsUserCannotReadIsNotTakenForDamage() throws {
        try withStore(folder: 0o755, file: 0o644) { path in
            let ran = try withSQLiteHolder(of: path, having: "SELECT count(*) FROM node") {
                #expect(fileExists(path + "-shm"))
                #expect(chmod(path + "-wal", 0o644) == 0 && chmod(path + "-shm", 0o600) == 0)
                let info = try asNobody(["info", path])
                #expect(info.status != 0)
                #expect(
                    info.standardError.contains("open for reading failed for '\(path)-shm': Permission denied"),
                    "\(info.standardError)")
                #expect(!info.standardError.contains("rebuilt"), "\(info.standardError)")
            }
            #expect(ran)
        }
    }

    /// An app killed while its log was open leaves the log and its index behind, with the
    /// store's owner and mode then. A user who may write the store but not those (the store
    /// given to that user since) got "SQLite error 14: unable to open database file" on an
    /// internal pragma. The opening names the log.
    @Test func aLogLeftByAnotherUserIsNamed() throws {
        try withStore(folder: 0o777, file: 0o600) { path in
            // The holder is killed with the log and its index open: both stay, 0600 as the store.
            #expect(try withSQLiteHolder(of: path, having: "SELECT count(*) FROM node") {})
            #expect(fileExists(path + "-wal") && fileExists(path + "-shm"))
            #expect(chown(path, try #require(AsNobody.user), try #require(AsNobody.group)) == 0)
            let save = try saveAsNobody(path)
            #expect(save.status == 1)
            #expect(
                save.standardError.contains("open for writing failed for '\(path)-wal': Permission denied"),
                "\(save.standardError)")
        }
    }
}
