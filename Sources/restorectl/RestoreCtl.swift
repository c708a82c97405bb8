import ArgumentParser
import RestorationArchive
// `stdout`, a C global that Swift 6 reads only from a module imported so, for `ferror`.
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
@preconcurrency import Darwin
#endif

@main
struct RestoreCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restorectl",
        abstract: "Inspect and manage restoration archive stores.",
        discussion: """
            A store is one SQLite file holding the preserved UI state of an app: one archive per \
            scene or window, each with its recent generations. Inspecting commands open the store \
            read-only and work while the app is running.
            """,
        version: versionText,
        subcommands: [
            InfoCommand.self, TreeCommand.self, ShowCommand.self, MarkersCommand.self, EventsCommand.self,
            ReportCommand.self, DiffCommand.self, CheckCommand.self, ExportCommand.self, DiscardCommand.self,
            EraseCommand.self, DemoCommand.self,
        ]
    )

    /// What `--version` prints: the stores this build reads and writes, and the SQLite it
    /// runs (there is no release number yet). Quoted in a bug report about a store.
    static let versionText =
        "restorectl: store schema version \(ArchiveStore.schemaVersion), archive format \(ArchiveStore.storeFormat); "
        + "SQLite \(ArchiveStore.sqliteVersion)"

    /// Runs the command as `ParsableCommand.main()` does, then checks that what it printed
    /// reached standard output. A write that failed there (a full disk behind `> file`) was
    /// lost without a word and the command exited 0: `restorectl export --output - > a.json`
    /// on a full disk left a document cut short that looked complete.
    static func main() {
        if let (position, argument) = argumentNotInUTF8() {
            Diagnostics.printError(
                "argument \(position) ('\(argument)') is not UTF-8: restorectl reads paths and names in UTF-8 "
                    + "(rename a file or folder named in another encoding)")
            exit(withError: ExitCode.validationFailure)
        }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            exit(withError: error)
        }
        // A write too large for the buffer failed on its own, and left only the stream's
        // error flag; one that fitted fails again here.
        let flushed = fflush(stdout) == 0
        let code = errno
        guard !flushed || ferror(stdout) != 0 else { return }
        let reason = flushed ? "a write to it failed" : String(cString: strerror(code))
        Diagnostics.printError("cannot write standard output: \(reason); what was printed is incomplete")
        exit(withError: ExitCode(1))
    }

    /// The first argument that is not UTF-8, counted from 1, as a `String` holds it (U+FFFD
    /// in place of each byte that is not). Taken as it was, `restorectl info café.sqlite`
    /// with the name in Latin-1 said that no store exists at `caf�.sqlite`, and `demo`
    /// created a store there, in another folder than the one named.
    private static func argumentNotInUTF8() -> (Int, String)? {
        // From the first after the program's name (a range from 1 would trap without one).
        for position in (0..<Int(CommandLine.argc)).dropFirst() {
            guard let argument = CommandLine.unsafeArgv[position], String(validatingCString: argument) == nil else {
                continue
            }
            return (position, String(cString: argument))
        }
        return nil
    }
}
