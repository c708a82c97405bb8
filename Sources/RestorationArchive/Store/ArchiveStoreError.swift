#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An error from the archive store.
///
/// Every case names what went wrong and where (a path, an archive, a generation), and
/// never includes stored values: restoration state is the user's data.
public enum ArchiveStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    // MARK: Opening

    /// Nothing exists at the store's path (read-only mode never creates a store).
    case storeNotFound(path: String)
    /// The store's path is a symbolic link; stores are never opened through one.
    case symbolicLinkAtStorePath(path: String)
    /// The file exists but is not an archive store: empty, not SQLite, a directory, or
    /// another program's SQLite database. Or the path of its write-ahead log, the log's
    /// index or a rollback journal (`-wal`, `-shm`, `-journal`) holds what SQLite never
    /// makes there (a symbolic link, a folder, a pipe), through which SQLite cannot open or
    /// write the store; an erase removes it. Or, for a read-write open, the file has other
    /// names (hard links): SQLite keeps a write-ahead log beside each name, and saves through
    /// one are lost to the others or damage the file; an erase gives the path a new store of
    /// its own and leaves the file to the other names.
    case notAStore(path: String, reason: String)
    /// The store was written by a newer version of this library.
    case schemaTooNew(storeVersion: Int, libraryVersion: Int)
    /// A migration this store applied has a different text in this library: the schema it
    /// has is not the schema this code expects.
    case migrationChanged(identifier: String)
    /// A read-only open found a write-ahead log with an index (`-shm`) that stays torn, or
    /// without a read mark a reader can use, while another process has it open; or without
    /// its index and one only SQLite's recovery may judge (a version of the log's format
    /// SQLite does not know, a commit needing pages neither the file nor the log holds, or
    /// pages of another size than the database's), or beside a store too large to replay in
    /// memory (over 1 GiB); only a read-write open can recover it. (A
    /// killed app's log without its index, as a backup that leaves `-shm` out copies it, is
    /// read: replayed in memory as the app's next open will recover it.)
    ///
    /// Or an open (or a read, a check) found the write-ahead log shorter than its index says,
    /// made again without the commits its index names (another process's writes after them
    /// read as zeros, not as damage), or missing while its index names commits the store's
    /// file does not hold yet: the log was removed or cut while another store had the store
    /// open, in this process or another (that store refuses to write,
    /// ``storeFileMoved(path:)``), or after a process was killed with the store open, or by a
    /// power cut (which takes back the log's writes not yet synced). What those commits held
    /// is lost; a read-only open does not read the file alone as if it were the store, and a
    /// read-write open, which would commit after them where the next launch does not read,
    /// opens nothing. A store already open refuses its writes so too, and when the log was cut
    /// in place under it (the same file, emptied or shortened: nothing says the file moved),
    /// it is answered as ``storeFileMoved(path:)`` is: release the store, then open it again.
    /// The index is rebuilt from what is left once every store holding it is released (or
    /// its process ends), by the next read-write open.
    case writeAheadLogNeedsRecovery(path: String)
    /// A write was attempted on a store opened read-only.
    case readOnly
    /// The store's file was removed, renamed or replaced after the store was opened (the
    /// user or a cleaning tool deleted the app's files while it ran), or its write-ahead log
    /// or the log's index (the files beside it named with `-wal` and `-shm`) was removed or
    /// renamed (a store opened at the path since may have made a new one), and nothing was
    /// written: the write would have gone to a file the path no longer names, where the next
    /// launch would not find it, or, through an index of its own, over another process's
    /// saves. Release this store (and the engine on it), then open a store at the path
    /// again, which makes a new, empty one if nothing is there, and write through it (an
    /// engine on the new store saves in full). Until it is released, this store still reads
    /// the file as it was. Release it first: a store opened at the path while this one is
    /// open may be refused with ``writeAheadLogNeedsRecovery(path:)``, since this one keeps
    /// the removed log's commits in the index they share (`self.store = try ArchiveStore(…)`
    /// opens the new store before it releases the old one), and so may one opened while any
    /// other store of the app that was open as the log went is.
    ///
    /// When the log went, what it held since SQLite last copied it into the file went with
    /// it: the store opened again reads the file as it was then. The release copies nothing
    /// from the log it still holds, since a kill during that copy would leave the file torn,
    /// with no log to finish it from. When only the index went, nothing is lost: the store
    /// opened again rebuilds it from the log. The store's logger says which of the files
    /// went, at each write it refuses.
    case storeFileMoved(path: String)
    /// The store's node states are sealed under another encryption key.
    case wrongEncryptionKey
    /// A node's state is sealed, and the store was opened without an encryption key (or by a
    /// library built without the Encryption trait).
    case encryptionKeyRequired(ArchiveName, RestorationPath)
    /// A file-system call failed.
    case fileSystem(operation: String, path: String, errno: Int32)
    /// The default location cannot be determined (`$HOME` unset), the app identifier is
    /// unusable, or the store's path names no file (empty, or ending with `/`, `.` or `..`)
    /// or is longer than SQLite opens.
    case invalidLocation(String)

    // MARK: Arguments

    /// An identifier or restoration path is empty, too long or too deep.
    case invalidRestorationPath(String)
    /// An archive name is empty, too long or holds control characters.
    case invalidArchiveName(String)
    /// A header key or value is unusable.
    case invalidHeaderValue(String)
    /// A node is unusable (its class name, for instance).
    case invalidNode(RestorationPath, String)
    /// Two nodes of one save share a path.
    case duplicatePath(RestorationPath, firstClass: String, secondClass: String)
    /// A node's parent is neither in the archive nor in the save.
    case missingParent(RestorationPath)
    /// A configuration value is out of range.
    case invalidConfiguration(String)
    /// A restore report could not be recorded (larger than a blob may be, for instance).
    case reportNotRecorded(String)

    // MARK: Archives

    /// No archive of that name exists in the store: none was ever saved under it, or it was
    /// discarded and the store has since forgotten it
    /// (``ArchiveStore/retainedDiscardedArchives``).
    case archiveNotFound(ArchiveName)
    /// The archive does not retain that generation (never saved, pruned or discarded).
    case generationNotFound(ArchiveName, Generation)
    /// An incremental save was based on a generation that is no longer the newest: another
    /// save committed in between. Save in full, or read the archive again.
    case generationConflict(ArchiveName, expected: Generation, found: Generation)

    // MARK: Damage

    /// A node's checksum does not match its content: the file was damaged.
    case damagedNode(ArchiveName, RestorationPath, Generation)
    /// An archive's header or its set of nodes does not match its checksums.
    case damagedArchive(ArchiveName, Generation, String)
    /// A node's state does not open under the store's encryption key: it was changed, moved
    /// from another node, archive or generation, given another class name, class version or
    /// order, or saved unsealed, before the store had a key.
    case sealRejected(ArchiveName, RestorationPath, Generation)
    /// The store holds data the schema rules out (a wrong column type, invalid UTF-8 text),
    /// SQLite finds the file malformed (`SQLITE_CORRUPT`), its header says what no store has
    /// (a file format version SQLite does not write, text in UTF-16), its schema holds a
    /// trigger or a view, SQL of its own that no migration makes, or a write broke a
    /// constraint of its schema (a unique index another program added): the file was
    /// damaged, or changed by other than this library.
    case damagedStore(String)
    /// The store's history of past launches is damaged: an entry of its lifecycle journal
    /// (``ArchiveStore/journal(limit:)``, ``ArchiveStore/previousLaunch()``) or a restore
    /// report (``ArchiveStore/restoreReports(of:limit:)``) cannot be read, or a journal entry
    /// does not match its checksum (one written since schema version 12). Archives and their
    /// state are not affected, and the store stays usable: the journal's and the reports'
    /// pruning delete the damaged entry in time, and ``CrashPolicy/discardAfterForegroundDeath``
    /// takes a launch it cannot read for one that died in the foreground.
    case damagedHistory(String)

    // MARK: SQLite

    /// SQLite reported an error: busy past the timeout, disk full, I/O error, …
    case database(DatabaseError)

    /// Whether the error says the store's file is damaged (a node, an archive, the file
    /// itself, its history, or a sealed state that does not open), rather than busy, missing,
    /// read-only, … Damage to a node or an archive does not stop the app: the next full save
    /// replaces it; nor does damage to the history.
    /// Damage to the file itself is ``isUnusableStore``.
    public var isDamage: Bool {
        switch self {
        case .damagedNode, .damagedArchive, .damagedStore, .damagedHistory, .sealRejected: true
        default: false
        }
    }

    /// Whether the store cannot be used as it is, so that the app starts afresh by erasing it
    /// (``ArchiveStore/erase(at:busyTimeout:logger:)``): its file is damaged
    /// (``damagedStore(_:)``) or is not a store (``notAStore(path:reason:)``), its schema is
    /// newer than this library's or was changed, or it was sealed with another key. The erase
    /// still refuses another program's database. Busy, read-only and file-system errors are
    /// not: they are worth a retry or a report.
    public var isUnusableStore: Bool {
        switch self {
        case .damagedStore, .notAStore, .schemaTooNew, .migrationChanged, .wrongEncryptionKey: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .storeNotFound(let path):
            "No archive store exists at '\(path)'."
        case .symbolicLinkAtStorePath(let path):
            "The store path '\(path)' is a symbolic link; stores are never opened through one."
        case .notAStore(let path, let reason):
            "'\(path)' is not an archive store: \(reason)."
        case .schemaTooNew(let storeVersion, let libraryVersion):
            "The store's schema is version \(storeVersion), newer than this library's version \(libraryVersion); "
                + "open it with a newer version of the library."
        case .migrationChanged(let identifier):
            "The store applied migration '\(identifier)', whose text differs in this library."
        case .writeAheadLogNeedsRecovery(let path):
            "'\(path)' has a write-ahead log only a read-write open can recover: its index (-shm) must be rebuilt "
                + "(nothing is lost), or is gone beside a log only SQLite's recovery may read (of a format version this "
                + "library does not know, or whose pages do not fit the file) or beside a store too large to replay "
                + "in memory (over 1 GiB), or names commits the log does not have (the log was removed or cut while "
                + "a process had the store open, after one was killed, or by a power cut: those commits are lost); "
                + "the app recovers it with its next read of the store, once it releases the store, or at its next "
                + "launch; then try again."
        case .readOnly:
            "The store is open read-only."
        case .storeFileMoved(let path):
            "The store's file at '\(path)', its write-ahead log or the log's index was removed, renamed or "
                + "replaced after the store was opened; nothing was written. Release this store and open it again "
                + "to write to that path."
        case .wrongEncryptionKey:
            "The store's states are sealed under another encryption key."
        case .encryptionKeyRequired(let name, let path):
            "The state of the node at '\(path)' in archive '\(name)' is sealed; open the store with its encryption key."
        case .fileSystem(let operation, let path, let errno):
            "\(operation) failed for '\(path)': \(String(cString: strerror(errno))) (errno \(errno))."
        case .invalidLocation(let reason):
            "Unusable store location: \(reason)."
        case .invalidRestorationPath(let reason):
            "Invalid restoration path: \(reason)."
        case .invalidArchiveName(let reason):
            "Invalid archive name: \(reason)."
        case .invalidHeaderValue(let reason):
            "Invalid header value: \(reason)."
        case .invalidNode(let path, let reason):
            "Invalid node at '\(path)': \(reason)."
        case .duplicatePath(let path, let first, let second):
            "Two objects share the restoration path '\(path)': one of class \(first) and one of class \(second)."
        case .missingParent(let path):
            "The node at '\(path)' has no parent in the archive."
        case .invalidConfiguration(let reason):
            "Invalid configuration: \(reason)."
        case .reportNotRecorded(let reason):
            "The restore report was not recorded: \(reason)."
        case .archiveNotFound(let name):
            "No archive named '\(name)': it was never saved, or it was discarded and the store has since forgotten it."
        case .generationNotFound(let name, let generation):
            "Archive '\(name)' does not retain generation \(generation)."
        case .generationConflict(let name, let expected, let found):
            "Archive '\(name)' is at generation \(found), not \(expected): another save committed in between."
        case .damagedNode(let name, let path, let generation):
            "The node at '\(path)' in archive '\(name)' (generation \(generation)) is damaged: its checksum does not match."
        case .damagedArchive(let name, let generation, let reason):
            "Archive '\(name)' generation \(generation) is damaged: \(reason)."
        case .sealRejected(let name, let path, let generation):
            "The state of the node at '\(path)' in archive '\(name)' (generation \(generation)) does not open "
                + "under the store's key: it was changed, moved from another node or generation, given another class, "
                + "or saved unsealed, before the store had a key."
        case .damagedStore(let reason):
            "The store is damaged: \(reason)."
        case .damagedHistory(let reason):
            "The store's history is damaged: \(reason)."
        case .database(let error):
            error.description
        }
    }
}
