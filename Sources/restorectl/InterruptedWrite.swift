#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
@preconcurrency import Darwin
#endif

/// A temporary file that a signal ending the process (SIGINT, SIGTERM, SIGHUP) removes:
/// `export` writes its document to such a file beside the output, and Ctrl-C or a `kill`
/// during that write left the file there, part of the archive's state under a hidden name.
/// The process then dies of the signal, as it would have. A signal the process ignores
/// (SIGINT in a shell's background job, SIGHUP under `nohup`) stays ignored.
enum InterruptedWrite {
    /// The name of the file the handler removes, as a C string in ``room``: the template
    /// until `mkstemp` makes the file, then the file's name (no file has the template's
    /// name); `nil` when there is none.
    ///
    /// `nonisolated(unsafe)`: set by ``withTemporaryFile(template:_:)`` before it installs
    /// the handler and cleared after it puts the previous handlers back, on the one thread
    /// that writes; the handler only reads it.
    nonisolated(unsafe) fileprivate static var file: UnsafeMutablePointer<CChar>?

    /// Where the name is kept: allocated once, and never freed, since a handler running on
    /// another thread as ``file`` is cleared may still read it (held here, it is no leak).
    /// `nonisolated(unsafe)`: written only as ``file`` is set, before any handler reads it.
    nonisolated(unsafe) private static let room = UnsafeMutablePointer<CChar>.allocate(capacity: Int(PATH_MAX) + 1)

    /// Makes a file with `mkstemp` from `template` (a path ending in `XXXXXX`; the file is
    /// 0600) and runs `body` with its descriptor and path; should one of the signals end the
    /// process from before the file exists until `body` returns, the file is removed. `body`
    /// closes the descriptor, and removes or renames the file.
    static func withTemporaryFile<Result>(
        template: String, _ body: (_ descriptor: Int32, _ path: String) throws -> Result
    ) throws -> Result {
        let bytes = Array(template.utf8)
        guard bytes.count <= Int(PATH_MAX) else { throw ExportError(String(cString: strerror(ENAMETOOLONG))) }
        for (index, byte) in bytes.enumerated() { room[index] = CChar(bitPattern: byte) }
        room[bytes.count] = 0
        file = room
        let previous = [SIGINT, SIGTERM, SIGHUP].map { number in
            let old = signal(number, removeThenDie)
            if unsafeBitCast(old, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { signal(number, SIG_IGN) }
            return (number, old)
        }
        defer {
            for (number, old) in previous { signal(number, old) }
            file = nil
        }
        // Made in the name the handler reads: it names the file from the moment there is one.
        let descriptor = mkstemp(room)
        guard descriptor >= 0 else { throw ExportError(String(cString: strerror(errno))) }
        return try body(descriptor, String(cString: room))
    }
}

/// The signal handler: removes the file, then dies of the signal by its default action.
/// Calls only what a handler may (`unlink`, `signal`, `raise`).
private func removeThenDie(_ number: Int32) {
    if let file = InterruptedWrite.file { unlink(file) }
    signal(number, SIG_DFL)
    raise(number)
}
