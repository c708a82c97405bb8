#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a store's files (the database, its `-wal`, its `-shm`) without SQLite, and without
/// taking SQLite's locks from it.
///
/// A descriptor this process already has open on the file (SQLite's, for another store
/// object at the same path) is read, and left open: closing any descriptor of a file
/// releases every POSIX lock the process holds on it, SQLite's among them (on the index, a
/// process opening the store next would take it for unused and rebuild it under that
/// connection; on the database file, another process could write or checkpoint under a
/// connection that believes it holds a lock). Only with none open is a descriptor of its own
/// opened and closed (the process then holds no lock on the file to lose).
enum StoreFileBytes {
    /// The first `count` bytes of the file at `path`; `nil` when no regular file is there (a
    /// symbolic link is not followed), it cannot be read (a read error, too), or it holds
    /// fewer than `count` bytes.
    static func read(at path: String, count: Int) -> [UInt8]? {
        withFile(at: path) { file in
            var bytes = [UInt8](repeating: 0, count: count)
            return bytes.withUnsafeMutableBytes { file.read(at: 0, into: $0) } == count ? bytes : nil
        } ?? nil
    }

    /// An open file, read at any offset.
    struct OpenFile {
        fileprivate let descriptor: Int32
        /// The file's size when it was opened.
        let size: Int

        /// Reads the file from `offset` into `buffer`: how many bytes it read, fewer than the
        /// buffer holds only at the file's end; `nil` on a read error.
        func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
            var done = 0
            while done < buffer.count {
                let read = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
                if read < 0, errno == EINTR { continue }
                guard read >= 0 else { return nil }
                if read == 0 { break }
                done += read
            }
            return done
        }
    }

    /// `body` of the file at `path`, read through a descriptor this process already has open
    /// on it, or one of its own, closed after; `nil` when no regular file is there (a
    /// symbolic link is not followed) or it cannot be opened.
    static func withFile<Result>(at path: String, _ body: (OpenFile) throws -> Result) rethrows -> Result? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        if let shared = descriptorOpen(on: status) { return try withFile(open: shared, body) }
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return try withFile(open: descriptor, body)
    }

    /// See ``withFile(at:_:)``: `body` of the file open as `descriptor`.
    private static func withFile<Result>(open descriptor: Int32, _ body: (OpenFile) throws -> Result) rethrows
        -> Result?
    {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return try body(OpenFile(descriptor: descriptor, size: Int(status.st_size)))
    }

    /// A descriptor this process has open on the file `file` describes (the same device and
    /// inode), found in the list of its descriptors (`/dev/fd`); `nil` when it has none, or
    /// the list cannot be read.
    private static func descriptorOpen(on file: stat) -> Int32? {
        var found: Int32?
        FolderListing.forEachName(inFolderAt: "/dev/fd") { name, listing in
            guard let descriptor = Int32(name), descriptor != listing else { return true }
            var status = stat()
            if fstat(descriptor, &status) == 0, status.st_dev == file.st_dev, status.st_ino == file.st_ino {
                found = descriptor
            }
            return found == nil
        }
        return found
    }
}

extension LogReplay.Bytes {
    /// The bytes of `file`, as long as its size said when it was opened.
    init(_ file: StoreFileBytes.OpenFile) {
        self.init(count: file.size) { offset, buffer in file.read(at: offset, into: buffer) }
    }
}
