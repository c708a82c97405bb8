import ArgumentParser
import Foundation
import RestorationArchive

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write an archive as a JSON document: its header and every node's typed values.",
        discussion: """
            Exports the newest generation of --archive (main by default). A damaged node is \
            exported marked, without its state, and named afterwards (exit status 1). The file \
            is created owner-only (0600), as the store is, since it holds the same state; an \
            existing file is refused unless --force; a symbolic link, a device, a pipe or a \
            folder at the output path always is, as are the store and its write-ahead log \
            files. With --output -, the \
            document goes to standard output, and nothing else does. Opens the store \
            read-only; safe while the app is running.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(name: .long, help: "The JSON file to write, or - for standard output.")
    var output: String

    @Flag(name: .long, help: "Overwrite the output file if it exists.")
    var force = false

    func run() throws {
        let store = try options.openReadOnly()
        let archive = options.selectedArchive(in: store)
        // A damaged node is exported as `show` shows it: marked, without its state, which is
        // not what was saved. The rest is written, then the damage is named (status 1).
        let snapshot = options.snapshot(in: store, keepingDamagedNodes: true)
        let damaged = Diagnostics.damagedNodes(in: snapshot)
        let document = ExportJSON(
            store: store.path, archive: archive.rawValue, header: HeaderJSON(snapshot.header),
            nodes: snapshot.nodes.map { node in
                if let damage = snapshot.nodeDamage[node.path] { return NodeJSON(node: node, values: nil, damage: damage) }
                return NodeJSON(
                    node: node, values: Result { () throws(StateCodingError) in try StateValue.decode(blob: node.state) },
                    damage: nil)
            })
        let text = try JSONOutput.render(document) + "\n"
        if output == "-" {
            print(text, terminator: "")
            Diagnostics.failIfAny(damaged)
            return
        }
        do {
            try Self.write(text, to: output, replacing: force, sparing: store.path)
        } catch {
            Diagnostics.printError("cannot write '\(output)': \(error)")
            throw ExitCode(1)
        }
        let leftOut =
            switch damaged.count {
            case 0: ""
            case 1: ", 1 of them damaged and exported without its state"
            case let count: ", \(count) of them damaged and exported without their states"
            }
        print(
            "Exported archive \(TerminalText.escaped(archive.rawValue)), generation \(snapshot.header.generation) "
                + "(\(snapshot.nodes.count) nodes\(leftOut)), to \(TerminalText.escaped(output)).")
        Diagnostics.failIfAny(damaged)
    }

    /// Writes `text` to a file created 0600, never through a symbolic link; an existing file
    /// is an error unless `replacing`, and must be a regular file (a device or a pipe would
    /// have been truncated and had its mode changed: `/dev/null` made 0600 for everyone).
    /// Never the store at `storePath` or its write-ahead log files, whatever path names them:
    /// `--force` would have replaced the app's saved state.
    ///
    /// The document is written whole to a new file beside `path`, then put in its place: a
    /// write that fails part-way (a full disk) leaves no partial document there, and a
    /// replaced file as it was; nor does one interrupted or terminated by a signal, which
    /// removes the new file (``InterruptedWrite``).
    static func write(_ text: String, to path: String, replacing: Bool, sparing storePath: String) throws {
        // What the path names now; a device or a pipe is not even opened (opening one can act
        // on it, or wait for a reader).
        var existing = stat()
        if lstat(path, &existing) == 0 {
            switch existing.st_mode & S_IFMT {
            case S_IFLNK: throw ExportError("it is a symbolic link")
            case S_IFREG: break
            default: throw ExportError("it is not a regular file (use --output - for standard output)")
            }
            guard replacing else { throw ExportError("the file exists (use --force to replace it)") }
            for (suffix, what) in [("", "the store being exported")] + storeLogFiles {
                var info = stat()
                if stat(storePath + suffix, &info) == 0, info.st_dev == existing.st_dev, info.st_ino == existing.st_ino {
                    throw ExportError("it is \(what)")
                }
            }
        }
        // By name too: a log file the app has not made yet would be taken by SQLite for the
        // store's, and the store read as one needing recovery until the app opens it.
        if let what = storeFileNamed(path, store: storePath) { throw ExportError("it is \(what)") }
        let template = split(path).folder + ".restorectl-export-XXXXXX"
        try InterruptedWrite.withTemporaryFile(template: template) { descriptor, temporary in
            try place(text, descriptor, temporary, at: path, replacing: replacing)
        }
    }

    /// Writes `text` into the new file `temporary` (open as `descriptor`), then puts it at
    /// `path`; removes it when that fails.
    private static func place(
        _ text: String, _ descriptor: Int32, _ temporary: String, at path: String, replacing: Bool
    ) throws {
        var placed = false
        defer { if !placed { unlink(temporary) } }
        do {
            defer { close(descriptor) }
            if let failure = writeAll(Array(text.utf8), to: descriptor) {
                throw ExportError(String(cString: strerror(failure)))
            }
            guard fsync(descriptor) == 0 else { throw ExportError(String(cString: strerror(errno))) }
        }
        if !replacing {
            // The name taken first, failing if a file appeared there since, rather than
            // replacing it (a hard link would do it in one step, but some file systems, FAT
            // among them, have none); the document then takes the empty file's place.
            let reserved = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard reserved >= 0 else {
                let failure = errno
                throw ExportError(
                    failure == EEXIST ? "the file exists (use --force to replace it)" : String(cString: strerror(failure)))
            }
            close(reserved)
        }
        // Replaces the entry itself, whatever it is by now: a symbolic link put there since
        // is replaced, not followed.
        guard rename(temporary, path) == 0 else {
            let failure = errno
            if !replacing { unlink(path) }  // the empty file reserved above
            throw ExportError(String(cString: strerror(failure)))
        }
        placed = true
    }
}

/// The files SQLite keeps beside a store, by the suffix of their names, and what they are.
private let storeLogFiles = [
    ("-wal", "the store's write-ahead log"), ("-shm", "the store's write-ahead log index"),
    ("-journal", "the store's rollback journal"),
]

/// What `path` names among ``storeLogFiles`` by name, whether they exist or not. The folders
/// are compared resolved.
private func storeFileNamed(_ path: String, store: String) -> String? {
    func place(_ path: String) -> (folder: String, name: String)? {
        let (folder, name) = split(path)
        guard let resolved = realpath(folder.isEmpty ? "." : folder, nil) else { return nil }
        defer { free(resolved) }
        return (String(cString: resolved), name)
    }
    guard let output = place(path), let store = place(store), output.folder == store.folder else { return nil }
    return storeLogFiles.first { output.name == store.name + $0.0 }?.1
}

/// `path` split after its last slash: its folder, the slash kept ("" for the current folder),
/// and the name in it. The slash is found by its byte: as a character, a "/" followed by a
/// combining mark (a name starting with U+0301) is not one.
private func split(_ path: String) -> (folder: String, name: String) {
    guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("", path) }
    let name = path.utf8.index(after: slash)
    return (String(path[..<name]), String(path[name...]))
}

/// Writes all of `bytes`; the `errno` of a write that failed, or `nil`.
private func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Int32? {
    var written = 0
    while written < bytes.count {
        let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return count < 0 ? errno : EIO }
        written += count
    }
    return nil
}

/// Why the export file could not be written.
struct ExportError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `restorectl export`; documented in docs/cli.md.
struct ExportJSON: Encodable {
    let store: String
    let archive: String
    let header: HeaderJSON
    let nodes: [NodeJSON]
}
