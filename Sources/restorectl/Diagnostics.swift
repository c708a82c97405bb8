import ArgumentParser
import Foundation
import Logging
import RestorationArchive

/// Error output: a line on stderr naming the problem, never a stack trace.
enum Diagnostics {
    static func printError(_ message: String) {
        writeToStandardError("restorectl: error: " + TerminalText.escaped(message) + "\n")
    }

    /// A line on stderr about something the command went on despite.
    static func printWarning(_ message: String) {
        writeToStandardError("restorectl: warning: " + TerminalText.escaped(message) + "\n")
    }

    /// Writes a line on stderr. One that stderr does not take (closed, `2>&-`; a full disk
    /// behind `2> file`) is lost, as any program's is, and the exit status still says how the
    /// command ended: `FileHandle.write(_:)`, used before, trapped there (signal 4), so that
    /// `restorectl info missing.sqlite 2>&-` died rather than exiting 2.
    private static func writeToStandardError(_ line: String) {
        try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
    }

    /// A logger for the library that prints its warnings, and anything graver, as the
    /// command's own (``printWarning(_:)``): what the library says of a store that the person
    /// running the command should know, such as a store file with other names.
    static var libraryWarnings: Logger { libraryLog(from: .warning) { printWarning($0) } }

    /// A logger for the library that hands `write` each message at `level` or graver.
    static func libraryLog(from level: Logger.Level, _ write: @escaping @Sendable (String) -> Void) -> Logger {
        Logger(label: "restorectl") { _ in Messages(logLevel: level, write: write) }
    }

    private struct Messages: LogHandler {
        var logLevel: Logger.Level
        let write: @Sendable (String) -> Void
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) { write(event.message.description) }
    }

    /// What `read` returns, or `nil` when it met damage (`isDamage`), which is added to
    /// `unreadable`: a command names a damaged part of a store and shows the rest. Any other
    /// error is thrown.
    static func unlessDamaged<Value>(
        _ unreadable: inout [ArchiveStoreError], _ read: () throws(ArchiveStoreError) -> Value
    ) throws(ArchiveStoreError) -> Value? {
        do {
            return try read()
        } catch {
            guard error.isDamage else { throw error }
            unreadable.append(error)
            return nil
        }
    }

    /// What `read` returns with no limit; when that meets damage (added to `unreadable`), the
    /// newest items that can be read, those after the newest damaged one. `read(limit)`
    /// returns the newest `limit` items (a journal's entries, an archive's restore reports).
    /// One damaged item hid every other until the store's pruning took it. Found by reading
    /// the newest 1, 2, 4, … items, then halving the range: a few reads, each of one
    /// transaction.
    static func readableNewest<Item>(
        _ unreadable: inout [ArchiveStoreError], _ read: (Int?) throws(ArchiveStoreError) -> [Item]
    ) throws(ArchiveStoreError) -> [Item] {
        do {
            return try read(nil)
        } catch where error.isDamage {
            unreadable.append(error)
        }
        func newest(_ limit: Int) throws(ArchiveStoreError) -> [Item]? {
            do { return try read(limit) } catch where error.isDamage { return nil }
        }
        var readable: [Item] = []
        var limit = 1
        while let items = try newest(limit) {
            // Fewer than asked: everything reads now (the app wrote since).
            guard items.count == limit else { return items }
            readable = items
            limit *= 2
        }
        // The newest `low` items read, the newest `high` do not.
        var (low, high) = (readable.count, limit)
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if let items = try newest(middle) {
                (readable, low) = (items, middle)
            } else {
                high = middle
            }
        }
        return readable
    }

    /// After a command printed what it could read: one error line for each part it could not
    /// (a damaged archive, the journal), then one for each other problem it showed (a damaged
    /// crash marker, which the store's reads do not throw for), then exit status 1; nothing
    /// when there was none.
    static func failIfAny(_ unreadable: [ArchiveStoreError], problems: [String] = []) {
        let lines = unreadable.map(\.description) + problems
        guard !lines.isEmpty else { return }
        // Once each: a store that lost archives says so to the list and to a lookup by name.
        var named: [String] = []
        for line in lines where !named.contains(line) {
            named.append(line)
            printError(line)
        }
        RestoreCtl.exit(withError: ExitCode(1))
    }

    /// The damaged nodes of a snapshot read for inspection, in its (tree) order, each as the
    /// error that names it: a content that does not match its checksum, or (with a key) a
    /// seal that does not open.
    static func damagedNodes(in snapshot: ArchiveSnapshot) -> [ArchiveStoreError] {
        snapshot.nodes.compactMap { snapshot.nodeDamage[$0.path] }
    }

    /// The node a node's damage names.
    static func path(of damage: ArchiveStoreError) -> RestorationPath? {
        switch damage {
        case .damagedNode(_, let path, _), .sealRejected(_, let path, _): path
        default: nil
        }
    }

    /// Prints why the store at `path` cannot be opened and exits with status 2. The errors of
    /// opening name the file, but for damage, which is about its content: it is named here.
    static func failOpening(_ path: String, _ error: ArchiveStoreError) -> Never {
        if case .damagedStore(let reason) = error {
            printError("'\(path)' is a damaged store: \(reason).")
            RestoreCtl.exit(withError: ExitCode(2))
        }
        fail(error, exitCode: 2)
    }

    /// Prints why a write to the store at `path` (a discard, an erase) failed, and exits with
    /// status 1: the store was opened, and is as it was. A write lock another connection held
    /// for longer than `busyTimeout` (the app saving, another program), a file that cannot be
    /// written and a full disk (with `whenTheDiskIsFull`: what the command left, and what to
    /// do) are said in words for a person rather than as SQLite's codes.
    static func failWriting(
        _ path: String, _ error: ArchiveStoreError, busyTimeout: Duration,
        whenTheDiskIsFull: String = "free some space and try again"
    ) -> Never {
        switch error {
        case .database(let failure) where failure.resultCode == .busy:
            let seconds = busyTimeout.components.seconds
            printError(
                "'\(path)' is busy: another connection held its write lock for more than \(seconds) second\(seconds == 1 ? "" : "s") (the app saving?); try again")
        case .database(let failure) where failure.resultCode == .readOnly:
            printError("'\(path)' cannot be written: \(failure.message)")
        case .database(let failure) where failure.resultCode == .full:
            printError("'\(path)' cannot be written: the disk is full; \(whenTheDiskIsFull)")
        default:
            printError(error.description)
        }
        RestoreCtl.exit(withError: ExitCode(1))
    }

    /// Prints `error` and exits with `exitCode`.
    static func fail(_ error: any Error, exitCode: Int32) -> Never {
        printError((error as? ArchiveStoreError)?.description ?? String(describing: error))
        RestoreCtl.exit(withError: ExitCode(exitCode))
    }
}
