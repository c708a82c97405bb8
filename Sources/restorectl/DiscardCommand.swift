import ArgumentParser
import Foundation
import RestorationArchive

struct DiscardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discard",
        abstract: "Discard an archive: delete all its generations and nodes, with a reason.",
        discussion: """
            One of the three commands that write, with erase and demo. The archive is marked \
            discarded with the reason (shown by info and events); deleted content is \
            overwritten in the file and the write-ahead log is truncated. The app's next save \
            starts the archive afresh. A damaged archive can be discarded. The store \
            remembers its newest \(ArchiveStore.retainedDiscardedArchives) discarded archives \
            and forgets older ones, with their restore reports. Never creates a store: a path \
            that is not one is refused. A discard that leaves most of the store free (at \
            least half of it, and at least \(ArchiveStore.compactedFreeBytes / 1024 / 1024) MiB) compacts \
            it, so that its file gives the space back.
            """
    )

    @Argument(help: "The path of the store.")
    var db: String

    @Option(name: .long, help: "The archive to discard (required; 'main' in apps without scenes).")
    var archive: String

    @Option(name: .long, help: "Why, in words for a person.")
    var reason: String

    func validate() throws {
        guard !TerminalText.isBlank(reason) else {
            throw ValidationError("--reason must say why the archive is discarded, in words for a person")
        }
        do {
            _ = try ArchiveName(archive)
        } catch {
            throw ValidationError(TerminalText.escaped(error.description))
        }
    }

    func run() throws {
        var name = try ArchiveName(archive)
        // Make sure it is a store before opening it for writing, which would create one. The
        // read-only store is closed first: in one process, it would keep SQLite's shared
        // memory read-only for the writer too. The archive is looked for by name only: a
        // damaged one can be discarded (that replaces it).
        let sizeBefore: Int
        do {
            let reader = try ArchiveStore(path: db, mode: .readOnly)
            name = StoreOptions.stored(name, among: try reader.archiveNames(), exitCode: 1)
            sizeBefore = try reader.footprint().fileBytes
        } catch {
            Diagnostics.failOpening(db, error)
        }
        let configuration = ArchiveStore.Configuration()
        do {
            // The library's warnings say why what follows the committed discard (the
            // compaction, the log's truncation) did not happen, when it failed.
            let store = try ArchiveStore(path: db, configuration: configuration, logger: Diagnostics.libraryWarnings)
            let result = try store.discard(name, reason: reason)
            print("Discarded archive \(TerminalText.escaped(name.rawValue)): \(result.nodesDeleted) node rows deleted.")
            if !result.writeAheadLogTruncated {
                print(
                    "The write-ahead log was not truncated (another connection was reading it, or the checkpoint failed, as a warning then says): it may still hold discarded content until the app's next checkpoint."
                )
            }
            if result.storeCompacted {
                let compacted = "The store was compacted to give the space back"
                if !result.writeAheadLogTruncated {
                    print("\(compacted): its file shrinks at that checkpoint.")
                } else if let sizeAfter = try? store.footprint().fileBytes {
                    // The discard is done: a size that cannot be read is not its failure.
                    print("\(compacted): its file went from \(sizeBefore) to \(sizeAfter) bytes.")
                } else {
                    print("\(compacted).")
                }
            }
        } catch {
            Diagnostics.failWriting(
                db, error, busyTimeout: configuration.busyTimeout,
                whenTheDiskIsFull: """
                    the archive is as it was (a discard writes every page the archive held to the \
                    write-ahead log before it commits). Free some space and try again, or erase the \
                    store (restorectl erase), which needs far less
                    """)
        }
    }
}
