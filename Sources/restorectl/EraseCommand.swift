import ArgumentParser
import Foundation
import Logging
import RestorationArchive

struct EraseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase",
        abstract: "Erase a store that cannot be used, leaving an empty store in its place.",
        discussion: """
            For a store the app can no longer open: damaged or cut short, newer than this \
            library, or sealed with a key the app no longer has. Every archive, generation, \
            crash marker, restore report and journal entry is deleted; the app's next launch \
            restores nothing and its next save starts afresh. A healthy store can be erased \
            too. The file is replaced where it is by an empty store, so its owner and mode \
            stay, and an app that has it open goes on with the empty store. A file with \
            other names (hard links) is left as it was to them, and the path given a new \
            store. Another program's SQLite database, a \
            folder or a symbolic link is refused and left as it is, and nothing is created \
            where there is no file. A file that is not an SQLite database at all is erased, \
            since damage to a store's first page looks like that: check the path. Requires \
            --yes.
            """
    )

    @Argument(help: "The path of the store.")
    var db: String

    @Flag(name: .long, help: "Confirm the erase: everything in the store is deleted.")
    var yes = false

    func validate() throws {
        guard yes else {
            throw ValidationError(
                "erase deletes every archive, crash marker, restore report and journal entry in the store; pass --yes to erase it")
        }
    }

    /// How long the erase waits for another connection's write lock (a save in progress).
    static let busyTimeout: Duration = .seconds(5)

    func run() throws {
        // `erase(at:)` does nothing where there is nothing; a person who typed a wrong path
        // should hear so, as the other commands say it. `lstat`: a symbolic link is the
        // library's to refuse, and any other failure its to report.
        var status = stat()
        if lstat(db, &status) != 0 && errno == ENOENT {
            Diagnostics.fail(ArchiveStoreError.storeNotFound(path: db), exitCode: 2)
        }
        do {
            // What the erase did beside erasing the store, said as it does it: a file it
            // removed beside the store (a link, a pipe), a name it gave a file of its own. Its
            // line saying it erased the store is the command's own last line.
            let erased = "Erased the archive store at '\(db)'"
            let steps = Diagnostics.libraryLog(from: .info) { message in
                if message != erased { print(TerminalText.escaped(message) + ".") }
            }
            try ArchiveStore.erase(at: db, busyTimeout: Self.busyTimeout, logger: steps)
        } catch {
            switch error {
            case .database, .fileSystem:
                // Began and failed: busy, read-only, the disk full, an I/O error...
                Diagnostics.failWriting(
                    db, error, busyTimeout: Self.busyTimeout,
                    whenTheDiskIsFull: """
                        the file holds the old store, or an empty database that the next opening \
                        of the store completes. Free some space and try again
                        """)
            default:
                // Another program's database, a folder, a link: refused as opening refuses them.
                Diagnostics.fail(error, exitCode: 2)
            }
        }
        print("Erased '\(TerminalText.escaped(db))': it is an empty store now.")
    }
}
