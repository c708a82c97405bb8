internal import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where stores live, and how their files are created: owner-only (0700 folders, 0600 files)
/// whatever the process's umask, and never through a symbolic link.
enum StoreLocation {
    /// The file name of a store in its default folder.
    static let defaultFileName = "restoration.sqlite"

    /// The default store path for an app: `$XDG_STATE_HOME/<app>/restoration.sqlite` or
    /// `~/.local/state/<app>/restoration.sqlite` on Linux,
    /// `~/Library/Application Support/<app>/restoration.sqlite` on Apple platforms.
    static func defaultPath(appIdentifier: String) throws(ArchiveStoreError) -> String {
        guard !appIdentifier.isEmpty, appIdentifier != ".", appIdentifier != "..",
            appIdentifier.utf8.count <= 255,
            !appIdentifier.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 < 0x20 || $0 == 0x7F })
        else {
            throw .invalidLocation("the app identifier must be a non-empty file name without '/' or control characters")
        }
        return try baseDirectory() + "/" + appIdentifier + "/" + defaultFileName
    }

    private static func baseDirectory() throws(ArchiveStoreError) -> String {
        #if canImport(Darwin)
        guard let home = try environment("HOME"), isAbsolute(home) else { throw .invalidLocation("$HOME is not set") }
        return home + "/Library/Application Support"
        #else
        // The XDG base directory specification ignores relative paths.
        if let state = try environment("XDG_STATE_HOME"), isAbsolute(state) {
            return state
        }
        guard let home = try environment("HOME"), isAbsolute(home) else {
            throw .invalidLocation("neither $XDG_STATE_HOME nor $HOME is set to an absolute path")
        }
        return home + "/.local/state"
        #endif
    }

    /// Refuses a store path that names no file whatever is there: an empty one, or one whose
    /// last part is empty (it ends with `/`), `.` or `..`, each a folder. A read-write open of
    /// `state/` made the folder and then failed to open it ("Is a directory"); an empty path
    /// failed with "No such file or directory", and its erase did nothing without a word.
    static func checkNamesAFile(_ path: String) throws(ArchiveStoreError) {
        guard !path.isEmpty else { throw .invalidLocation("the store path is empty") }
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let name = slash.map { path[path.utf8.index(after: $0)...] } ?? path[...]
        guard name.isEmpty || name == "." || name == ".." else { return }
        throw .invalidLocation(
            "the store path '\(path)' ends with '\(name.isEmpty ? "/" : name)', which names a folder: a store is a file")
    }

    /// Whether a path starts at the root. By its first byte: `hasPrefix("/")` compares
    /// characters, and a "/" followed by a combining mark (a folder whose name starts with
    /// U+0301) is not that character.
    static func isAbsolute(_ path: String) -> Bool {
        path.utf8.first == UInt8(ascii: "/")
    }

    /// An environment variable's value; `nil` when it is unset or empty. One that is not
    /// UTF-8 (a folder named in another encoding, such as `café` in Latin-1) is refused: a
    /// `String` would hold it with U+FFFD in place of its bytes, and so name another folder,
    /// which a read-write open would create.
    private static func environment(_ name: String) throws(ArchiveStoreError) -> String? {
        guard let value = getenv(name) else { return nil }
        guard let string = String(validatingCString: value) else {
            throw .invalidLocation(
                "$\(name) is not UTF-8: a folder named in another encoding cannot hold the store "
                    + "(give ArchiveStore(path:) a path in UTF-8 instead)")
        }
        return string.isEmpty ? nil : string
    }

    // MARK: Creating

    /// Makes sure a store file exists at `path` for a read-write open: missing folders are
    /// created 0700, a missing file is created 0600 (both set explicitly, so the umask does
    /// not matter, and SQLite gives `-wal` and `-shm` the same mode as the file).
    ///
    /// - Returns: the file's identity, from the `stat` the check took, the file name to give
    ///   SQLite (``sqliteFilename(for:)``, its length checked), and the files found beside it.
    static func prepareForWriting(path: String) throws(ArchiveStoreError) -> (
        file: StoreFileIdentity, sqliteFilename: String, beside: Set<FileBeside.Kind>
    ) {
        try checkNamesAFile(path)
        var filename = try checkedSQLiteFilename(for: path)
        // Folders made now may resolve otherwise than the path did before they were there.
        if try createDirectories(for: path) { filename = try checkedSQLiteFilename(for: path) }
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd >= 0 {
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else { throw .fileSystem(operation: "fchmod", path: path, errno: errno) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw .fileSystem(operation: "fstat", path: path, errno: errno) }
            // As for an existing store: files left beside the path (a killed app's log, what
            // SQLite never makes there) are checked, or SQLite would fail at them, saying less.
            let beside = try checkAccess(toFilesOf: path, R_OK | W_OK, "open for writing")
            return (StoreFileIdentity(info), filename, beside)
        }
        switch errno {
        case EEXIST:
            let file = try checkExisting(path: path)
            let beside = try checkAccess(toFilesOf: path, R_OK | W_OK, "open for writing")
            return (file, filename, beside)
        case ELOOP:
            throw .symbolicLinkAtStorePath(path: path)
        case let code:
            throw .fileSystem(operation: "open", path: path, errno: code)
        }
    }

    /// Throws `operation`'s file-system error, naming the file, when the process may not
    /// access the store file at `path` as `mode` says (`R_OK`, `W_OK`), nor the files SQLite
    /// keeps beside it when they are there (``filesBeside(_:)``, each checked first by
    /// ``check(_:of:info:)``). A file SQLite may not write it opens read-only without a word,
    /// and the first write fails as if the store were damaged; one it may not read fails with
    /// only "unable to open database file"; and an index this user may not read is not one
    /// that is missing or must be rebuilt. A log and an index stay where an app was killed
    /// with them open, with the owner and mode of then.
    ///
    /// Asked of the file system by the effective user and groups, not by opening the file:
    /// closing a descriptor of it would release the locks SQLite holds on it in this process.
    ///
    /// - Returns: the files found beside the store.
    @discardableResult
    private static func checkAccess(toFilesOf path: String, _ mode: Int32, _ operation: String)
        throws(ArchiveStoreError) -> Set<FileBeside.Kind>
    {
        try checkAccess(to: path, mode, operation)
        var found: Set<FileBeside.Kind> = []
        for beside in filesBeside(path) {
            guard let info = try existing(beside.path) else { continue }
            try check(beside, of: path, info: info)
            // Gone since it was seen: as if it never was. Another process's opening of a new
            // store makes a rollback journal and removes it at once (its first write is in
            // that mode), and an erase removes the files beside the store: an opening beside
            // them failed with "No such file or directory" (the `processes` torture scenario).
            guard try checkAccess(to: beside.path, mode, operation, goneIsNone: true) else { continue }
            found.insert(beside.kind)
        }
        return found
    }

    /// Throws `operation`'s file-system error unless the process may access `file` so;
    /// with `goneIsNone`, a file that is not there returns `false` instead.
    @discardableResult
    private static func checkAccess(to file: String, _ mode: Int32, _ operation: String, goneIsNone: Bool = false)
        throws(ArchiveStoreError) -> Bool
    {
        guard faccessat(AT_FDCWD, file, mode, AT_EACCESS) == 0 else {
            if goneIsNone, errno == ENOENT { return false }
            throw .fileSystem(operation: operation, path: file, errno: errno)
        }
        return true
    }

    /// A file SQLite keeps beside a store's, named by the store's path and a suffix.
    struct FileBeside {
        /// The write-ahead log (`-wal`), the log's index (`-shm`), or a rollback journal
        /// (`-journal`), which a store never has (it is in write-ahead logging from its first
        /// write) but SQLite looks for at each opening.
        enum Kind: CaseIterable {
            case log, index, journal

            var suffix: String {
                switch self {
                case .log: "-wal"
                case .index: "-shm"
                case .journal: "-journal"
                }
            }

            /// What it is to the store, in words.
            var role: String {
                switch self {
                case .log: "write-ahead log"
                case .index: "log's index"
                case .journal: "rollback journal"
                }
            }
        }

        let kind: Kind
        let path: String
    }

    /// The files SQLite keeps beside the store at `path`.
    static func filesBeside(_ path: String) -> [FileBeside] {
        FileBeside.Kind.allCases.map { FileBeside(kind: $0, path: path + $0.suffix) }
    }

    /// Refuses what SQLite never makes at the path of a file it keeps beside a store: a
    /// symbolic link, a folder, a pipe, a device. SQLite fails to open or write through it,
    /// and failed at every launch after with errors that named neither the file nor a remedy
    /// ("unable to open database file", "disk I/O error", "attempt to write a readonly
    /// database", a log said to need a recovery that never came), or opened a pipe at the
    /// log's path as the log, or waited forever on one at the journal's. The store is
    /// unusable as it is; an erase removes the file (``removeWhatSQLiteNeverMakes(beside:)``).
    /// A folder with files in it is named so: the erase leaves it (their files are not the
    /// store's), which the remedy says.
    private static func check(_ beside: FileBeside, of path: String, info: stat) throws(ArchiveStoreError) {
        guard info.st_mode & S_IFMT != S_IFREG else { return }
        let holdsFiles = info.st_mode & S_IFMT == S_IFDIR && folderHoldsFiles(beside.path)
        throw .notAStore(
            path: path,
            reason: "the path of its \(beside.kind.role), '\(beside.path)', holds "
                + (holdsFiles
                    ? "a folder with files in it, which SQLite never makes there; move or remove it (erasing the store "
                        + "leaves it: its files are not the store's)"
                    : "\(kind(of: info)), which SQLite never makes there; remove it (erasing the store removes it too)"))
    }

    /// Whether the folder at `path` holds anything (what `rmdir` refuses to remove); `false`
    /// when it cannot be read.
    private static func folderHoldsFiles(_ path: String) -> Bool {
        var holdsFiles = false
        FolderListing.forEachName(inFolderAt: path) { _, _ in
            holdsFiles = true
            return false
        }
        return holdsFiles
    }

    /// What a file that is not a regular one is, in words.
    private static func kind(of info: stat) -> String {
        switch info.st_mode & S_IFMT {
        case S_IFLNK: "a symbolic link"
        case S_IFDIR: "a folder"
        case S_IFIFO: "a pipe"
        case S_IFSOCK: "a socket"
        case S_IFCHR, S_IFBLK: "a device"
        default: "something other than a regular file"
        }
    }

    /// Removes what ``check(_:of:info:)`` refuses beside the store, for an erase: the link
    /// itself (never what it points to), the pipe, socket or device node, the folder if it is
    /// empty. A folder with files in it is refused: they are not the store's to delete.
    ///
    /// - Returns: the paths removed, with what each held.
    static func removeWhatSQLiteNeverMakes(beside path: String) throws(ArchiveStoreError) -> [String] {
        var removed: [String] = []
        for beside in filesBeside(path) {
            let file = beside.path
            guard let info = try existing(file), info.st_mode & S_IFMT != S_IFREG else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                guard rmdir(file) == 0 else { throw .fileSystem(operation: "rmdir", path: file, errno: errno) }
            } else {
                guard unlink(file) == 0 else { throw .fileSystem(operation: "unlink", path: file, errno: errno) }
            }
            removed.append("\(kind(of: info)) at '\(file)'")
        }
        return removed
    }

    /// The folder a store's file is in, where SQLite creates its write-ahead log.
    static func folder(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
    }

    /// The error for a folder in which SQLite could not create the store's write-ahead log.
    static func folderNotWritable(for path: String) -> ArchiveStoreError {
        let folder = folder(of: path)
        let code = faccessat(AT_FDCWD, folder, W_OK, AT_EACCESS) == 0 ? EACCES : errno
        return .fileSystem(operation: "create the write-ahead log (-wal) in the folder", path: folder, errno: code)
    }

    /// How many bytes of a store's header ``headerDamage(header:)`` reads: SQLite's header up
    /// to its text encoding.
    static let checkedHeaderBytes = 60

    /// The damage of a store whose header says what no store has, if it does. Asked when
    /// SQLite refused the file, found it malformed or would not write it, not at every opening.
    /// - The file format's write or read version (header bytes 18 and 19) is 1 or 2 in every
    ///   file SQLite writes; a larger one makes SQLite open the file read-only without a word,
    ///   so that every write fails as if the file were read-only (`SQLITE_READONLY`).
    /// - The text encoding (bytes 56 to 59, a big-endian integer whose two low bits SQLite
    ///   reads) is 1, UTF-8, in every store this library makes; 2 or 3, UTF-16, makes SQLite
    ///   read the schema's UTF-8 text as UTF-16 and find it malformed (`SQLITE_CORRUPT`) under
    ///   names that mean nothing.
    ///
    /// - Parameter header: the file's first ``checkedHeaderBytes`` bytes, or as many as it has
    ///   (the versions are read from 20).
    static func headerDamage(header: [UInt8]) -> ArchiveStoreError? {
        guard header.count >= 20, header[..<16].elementsEqual("SQLite format 3\0".utf8) else { return nil }
        for (offset, which) in [(18, "write"), (19, "read")] where !(1...2).contains(header[offset]) {
            return .damagedStore(
                "its header's file format \(which) version is \(header[offset]), which SQLite does not write")
        }
        guard header.count >= checkedHeaderBytes else { return nil }
        let encoding = headerWord(header, at: 56)
        guard (2...3).contains(encoding & 3) else { return nil }
        return .damagedStore(
            "its header says its text is UTF-16 (text encoding \(encoding)), where a store's is UTF-8 (1)")
    }

    /// What is wrong with a store file shorter than its header says, if it is: a copy or a
    /// download stopped part-way, a file cut by a full disk. SQLite finds such a file
    /// malformed (its header counts pages the file does not have), or, with its last page
    /// cut, reads the rest of that page as zeros, and says no more. Asked when SQLite found
    /// the file malformed, and by ``ArchiveStore/check()``.
    ///
    /// The header's count of pages (bytes 28 to 31) is SQLite's only while its change counter
    /// (24 to 27) matches the version it was written for (92 to 95); otherwise SQLite counts
    /// the file's own pages. A write-ahead log longer than its 32-byte header may hold pages
    /// the file has yet to receive (a checkpoint killed part-way writes the file's header
    /// first): then nothing is said.
    ///
    /// - Parameter header: the file's first 100 bytes, or as many as it has.
    static func cutShort(path: String, header: [UInt8]) -> String? {
        guard header.count >= 100 else { return nil }
        let pageSizeField = UInt32(header[16]) << 8 | UInt32(header[17])
        let pageSize = pageSizeField == 1 ? 65_536 : pageSizeField
        let pages = headerWord(header, at: 28)
        guard pageSize >= 512, pageSize.nonzeroBitCount == 1, pages > 0,
            headerWord(header, at: 24) == headerWord(header, at: 92)
        else { return nil }
        if let log = FileStamp(path: path + "-wal"), log.size > writeAheadLogHeaderBytes { return nil }
        guard let file = FileStamp(path: path) else { return nil }
        let counted = Int64(pages) * Int64(pageSize)
        guard file.size < counted else { return nil }
        return "the file is cut short: its header counts \(pages) pages of \(pageSize) bytes (\(counted) bytes), and the "
            + "file holds \(file.size) (a copy or a write that stopped part-way, a full disk)"
    }

    /// The big-endian 32-bit word at `offset` of a database file's header, as SQLite writes
    /// each of its fields.
    private static func headerWord(_ header: [UInt8], at offset: Int) -> UInt32 {
        header[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Checks what exists at `path` before a read-only open, which never creates anything.
    ///
    /// - Returns: the file as the `lstat` the check took saw it, the file name to give SQLite
    ///   (``sqliteFilename(for:)``, its length checked), the files found beside it, looked
    ///   for after that `lstat`, and the file's number of names (hard links).
    static func checkForReading(path: String) throws(ArchiveStoreError) -> (
        stamp: FileStamp, sqliteFilename: String, beside: Set<FileBeside.Kind>, names: Int
    ) {
        try checkNamesAFile(path)
        guard let info = try existing(path) else { throw .storeNotFound(path: path) }
        try checkExisting(path: path, info: info)
        let filename = try checkedSQLiteFilename(for: path)
        // A store is created 0600: another user may read none of it.
        let beside = try checkAccess(toFilesOf: path, R_OK, "open for reading")
        if info.st_size == 0 { throw .notAStore(path: path, reason: "the file is empty") }
        return (FileStamp(info), filename, beside, Int(info.st_nlink))
    }

    /// Checks what exists at `path` before an erase, which creates nothing, and removes what
    /// SQLite never makes at the paths of the files it keeps beside it
    /// (``removeWhatSQLiteNeverMakes(beside:)``), whether or not a file is at `path`.
    ///
    /// - Returns: the file name to give SQLite (``sqliteFilename(for:)``, its length checked),
    ///   `nil` when nothing is at `path`; what was removed; and how many names the file has
    ///   besides `path` (hard links, which a read-write open refuses: ``checkExisting(path:)``).
    ///   Whatever a regular file holds is for the erase to judge.
    static func prepareForErasing(path: String) throws(ArchiveStoreError) -> (
        sqliteFilename: String?, removed: [String], otherNames: Int
    ) {
        try checkNamesAFile(path)
        let info = try existing(path)
        if let info { try checkRegularFile(path: path, info: info) }
        let removed = try removeWhatSQLiteNeverMakes(beside: path)
        guard let info else { return (nil, removed, 0) }
        let filename = try checkedSQLiteFilename(for: path)
        try checkAccess(toFilesOf: path, R_OK | W_OK, "open for writing")
        return (filename, removed, Int(info.st_nlink) - 1)
    }

    /// Removes the store's name `path`, for an erase of a file with other names, and the
    /// files SQLite keeps beside it, which hold what was written through that name and not yet
    /// copied into the file: an erase leaves none of the old store. (SQLite itself deletes a
    /// log it finds beside an empty file, as the new store made at the path is at its first
    /// opening; the erase does not count on it.)
    static func removeName(_ path: String) throws(ArchiveStoreError) {
        for file in filesBeside(path).map(\.path) + [path] where unlink(file) != 0 && errno != ENOENT {
            throw .fileSystem(operation: "unlink", path: file, errno: errno)
        }
    }

    /// ``sqliteFilename(for:)``, refused when longer than SQLite opens: it opens a database
    /// whose full path (absolute, its folders resolved) leaves room for the name of its
    /// journal, 8 bytes more than the default VFS's longest path (504 bytes on Linux), and
    /// fails any other with only "unable to open database file".
    static func checkedSQLiteFilename(for path: String) throws(ArchiveStoreError) -> String {
        let filename = sqliteFilename(for: path)
        var full = filename
        if !isAbsolute(full), let directory = getcwd(nil, 0) {
            // SQLite drops the `./` that `sqliteFilename(for:)` adds.
            full = String(cString: directory) + "/" + (full.hasPrefix("./") ? String(full.dropFirst(2)) : full)
            free(directory)
        }
        let limit = Int(sqlite3_vfs_find(nil)?.pointee.mxPathname ?? 512) - 8
        guard full.utf8.count <= limit else {
            throw .invalidLocation(
                "the store path '\(path)' is \(full.utf8.count) bytes long (absolute, its folders resolved), and SQLite "
                    + "opens no path longer than \(limit) bytes")
        }
        return filename
    }

    /// What `lstat` says is at `path`, or `nil` when nothing is (nor can be: a folder on the
    /// way is a file).
    private static func existing(_ path: String) throws(ArchiveStoreError) -> stat? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw .fileSystem(operation: "lstat", path: path, errno: errno)
        }
        return info
    }

    /// Whether the store's write-ahead log exists (some connection has the store open, or
    /// one was killed with it open).
    static func writeAheadLogExists(for path: String) -> Bool {
        var info = stat()
        return lstat(path + "-wal", &info) == 0
    }

    /// Checks an existing store file for a read-write open: ``checkExisting(path:info:)``, and
    /// that the file has no other name (hard link).
    ///
    /// SQLite keeps the write-ahead log and its index beside a name, not a file: connections
    /// through two names of one file write two logs and lock two indexes, and each copies its
    /// log into the file over the other's pages. A store saved through one name and opened
    /// through another lost the saves its log held, and then read as malformed ("database disk
    /// image is malformed") once both had copied. A read-only open writes nothing, and reads
    /// through any name.
    private static func checkExisting(path: String) throws(ArchiveStoreError) -> StoreFileIdentity {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .fileSystem(operation: "lstat", path: path, errno: errno) }
        try checkExisting(path: path, info: info)
        if info.st_nlink > 1 { throw .notAStore(path: path, reason: otherNames(Int(info.st_nlink))) }
        return StoreFileIdentity(info)
    }

    /// Why a store file with `names` names (hard links) is refused for a read-write open.
    static func otherNames(_ names: Int) -> String {
        "its file has \(names) names (hard links), and SQLite keeps a write-ahead log beside each: saves through "
            + "one name are lost to the others and can leave the file damaged; remove the other names (erasing the "
            + "store gives this one a file of its own)"
    }

    /// How many names (hard links) the file at `path` has; 1 when that cannot be told.
    static func names(ofFileAt path: String) -> Int {
        var info = stat()
        return lstat(path, &info) == 0 ? Int(info.st_nlink) : 1
    }

    private static func checkExisting(path: String, info: stat) throws(ArchiveStoreError) {
        try checkRegularFile(path: path, info: info)
        // SQLite may take a file shorter than its 16-byte header string for an empty
        // database (3.40 does with one byte), and a read-write open would write a new store
        // over it, as if nothing had been saved. Neither SQLite nor this library leaves one
        // (the first write is a whole page).
        if (1..<16).contains(info.st_size) {
            throw .notAStore(path: path, reason: "it is too short to be an SQLite database (\(info.st_size) bytes)")
        }
    }

    private static func checkRegularFile(path: String, info: stat) throws(ArchiveStoreError) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFLNK: throw .symbolicLinkAtStorePath(path: path)
        case S_IFDIR: throw .notAStore(path: path, reason: "it is a directory")
        default: throw .notAStore(path: path, reason: "it is not a regular file")
        }
    }

    /// Creates the folders leading to `path` that do not exist, each 0700, and syncs the
    /// folder each was made in (``syncFolder(_:)``).
    ///
    /// - Returns: whether it created one.
    @discardableResult
    private static func createDirectories(for path: String) throws(ArchiveStoreError) -> Bool {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return false }
        let directory = String(path[..<slash])
        guard !directory.isEmpty else { return false }
        var info = stat()
        if stat(directory, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw .fileSystem(operation: "mkdir", path: directory, errno: ENOTDIR)
            }
            return false
        }
        try createDirectories(for: directory)
        guard mkdir(directory, 0o700) == 0 else {
            // There already (made meanwhile, or reached through `..`): not this library's
            // folder to set the mode of.
            if errno == EEXIST { return false }
            throw .fileSystem(operation: "mkdir", path: directory, errno: errno)
        }
        guard chmod(directory, 0o700) == 0 else {
            throw .fileSystem(operation: "chmod", path: directory, errno: errno)
        }
        syncFolder(folder(of: directory))
        return true
    }

    /// Makes the names in `folder` durable (an `fsync` of the folder): a folder just made in
    /// it then survives a power loss, with the store that later commits put in it. SQLite
    /// does so for the store's own folder when it makes the write-ahead log, not for the
    /// folders above, which only the library makes. Best effort, as SQLite's: a folder that
    /// cannot be opened for reading, or a file system that refuses the sync, leaves it to
    /// the file system.
    private static func syncFolder(_ folder: String) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// The file name to give SQLite for the store at `path`: the path with the folder it is
    /// in resolved (symbolic links on the way followed). A relative path left as it is
    /// starts with `./`: SQLite takes the name `:memory:` for a database that lives in memory
    /// and is never written to a file, and, built to read file names as URIs (`USE_URI`, as
    /// Debian's is), a name starting with `file:` for one (`file:x.sqlite` opened
    /// `x.sqlite`, and `file:x.sqlite?mode=memory` a database in memory); `./:memory:` and
    /// `./file:x.sqlite` name the files.
    ///
    /// `SQLITE_OPEN_NOFOLLOW` refuses a link anywhere on the path, but a link among the
    /// folders is the user's own arrangement (a state folder moved to another disk, a home
    /// reached through a link): only the store file itself must never be one, which that
    /// flag still checks on the resolved path, as the store's own checks do on `path`. A
    /// folder that cannot be resolved (it does not exist) is left as it is, for SQLite to
    /// report.
    static func sqliteFilename(for path: String) -> String {
        let unresolved = isAbsolute(path) ? path : "./" + path
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return unresolved }
        guard let resolved = realpath(folder(of: path), nil) else { return unresolved }
        defer { free(resolved) }
        let resolvedFolder = String(cString: resolved)
        return (resolvedFolder == "/" ? "" : resolvedFolder) + String(path[slash...])
    }

    // MARK: Read-only URIs

    /// How a read-only open that creates no file reads the store. With a `-wal` present (the
    /// app is running, or was killed), `readonly_shm` reads it through the existing `-shm`
    /// without writing; with none, the file is complete on its own and `immutable` reads it
    /// without locks or side files, as long as it stays as ``ReadOnlyOpening/source`` says.
    /// So is it with a `-wal` no longer than its header, which holds no commit (the log
    /// started over, and the app was killed, or the power cut, before a frame of its next
    /// commit reached the disk): through such a log of exactly 32 bytes, with no app holding
    /// the index, SQLite rebuilds a private index without the log's salts, finds them
    /// differing from the log's, and tries again for 10 seconds before it fails with
    /// `SQLITE_PROTOCOL` ("locking protocol"). A `-wal` with frames and no `-shm` (a killed
    /// app's store, copied without it, or whose `-shm` a cleaning tool removed) is one only a
    /// connection that writes the index can read through SQLite (which fails the read with
    /// `SQLITE_CANTOPEN`): the file and its log are read and replayed in memory
    /// (``LogReplay``), as that connection's recovery will read them.
    struct ReadOnlyOpening {
        /// How the connection reads the store.
        enum Reader {
            /// SQLite opens this URI.
            case uri(String)
            /// The file and its log, read into memory and replayed there.
            case replayedLog
        }

        /// How the connection reads the store.
        let reader: Reader
        /// What the connection will read: the file as it was before the open, with no `-wal`
        /// (immutable), or with the `-wal` it had (replayed), or the store live, through the
        /// write-ahead log.
        let source: ReadOnlySource
    }

    /// See ``ReadOnlyOpening``.
    ///
    /// - Parameters:
    ///   - file: the file as ``checkForReading(path:)`` saw it, before it looked for a
    ///     `-wal`: one that appears after that look is caught by the next.
    ///   - sqliteFilename: the file name ``checkForReading(path:)`` gave.
    ///   - log: the `-wal` as a look after ``checkForReading(path:)``'s saw it, `nil` when
    ///     there is none: a log that grows after it is caught by the next look.
    ///   - indexExists: whether ``checkForReading(path:)`` found the log's index (`-shm`).
    static func readOnlyOpening(file: FileStamp, sqliteFilename: String, log: FileStamp?, indexExists: Bool)
        -> ReadOnlyOpening
    {
        if let log, log.size > writeAheadLogHeaderBytes {
            guard indexExists else { return ReadOnlyOpening(reader: .replayedLog, source: .frozen(file: file, log: log)) }
            return ReadOnlyOpening(reader: .uri(uri(sqliteFilename, "mode=ro&readonly_shm=1")), source: .live)
        }
        return ReadOnlyOpening(reader: .uri(fileAloneURI(sqliteFilename)), source: .frozen(file: file, log: log))
    }

    /// The length of a write-ahead log's header, before its first frame.
    static let writeAheadLogHeaderBytes: Int64 = 32

    /// The URI that reads the file `sqliteFilename` alone, as immutable: without locks, and
    /// without the log and index beside it.
    static func fileAloneURI(_ sqliteFilename: String) -> String {
        uri(sqliteFilename, "mode=ro&immutable=1")
    }

    private static func uri(_ sqliteFilename: String, _ parameters: String) -> String {
        "file:" + percentEncoded(sqliteFilename) + "?" + parameters
    }

    /// A store file as `lstat` saw it: its identity, size and times of change. SQLite writes
    /// a store in write-ahead log mode only through a `-wal`, and copies the log back into
    /// the file in checkpoints, which change its size or times: a file read as immutable
    /// changed when its stamp did.
    struct FileStamp: Equatable {
        let file: StoreFileIdentity
        private let sizeAndTimes: [Int64]

        /// The file's length, in bytes.
        var size: Int64 { sizeAndTimes[0] }

        init(_ info: stat) {
            file = StoreFileIdentity(info)
            #if canImport(Darwin)
            let (modified, changed) = (info.st_mtimespec, info.st_ctimespec)
            #else
            let (modified, changed) = (info.st_mtim, info.st_ctim)
            #endif
            sizeAndTimes = [
                Int64(info.st_size), Int64(modified.tv_sec), Int64(modified.tv_nsec), Int64(changed.tv_sec),
                Int64(changed.tv_nsec),
            ]
        }

        /// The file at `path` now (never through a symbolic link, as every look at a store
        /// path); `nil` when nothing is there.
        init?(path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            self.init(info)
        }
    }

    /// What a read-only connection reads, and so when it no longer reads the store as it is.
    enum ReadOnlySource {
        /// The store through its write-ahead log: every commit is seen.
        case live
        /// The store as its file and `-wal` were (`nil`: none), stamped before the connection
        /// read them: the file alone read as immutable (with no log, or one that holds no
        /// frame), or a copy in memory (a store of an older schema, migrated in the copy; a
        /// log whose index is gone, replayed into the copy).
        /// Stale once either changes, gone or replaced included: a `-wal` that appears or
        /// grows means an app writes, and what it commits is only in the log until a
        /// checkpoint copies it into the file.
        case frozen(file: FileStamp, log: FileStamp?)

        func isStale(path: String) -> Bool {
            switch self {
            case .live: false
            case .frozen(let file, let log): FileStamp(path: path) != file || FileStamp(path: path + "-wal") != log
            }
        }
    }

    private static func percentEncoded(_ path: String) -> String {
        var result = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
            }
        }
        return result
    }
}

/// A store file as this process's registries of restorations and launches in progress know
/// it: its device and inode, so that two spellings of one path (a relative one and an
/// absolute one, `.` or `..`, a hard link) name one store.
struct StoreFileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    init(_ info: stat) {
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
    }
}
