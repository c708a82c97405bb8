import ArgumentParser
import Foundation
import RestorationArchive

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a store: SQLite integrity, node checksums, decodable state, orphans, duplicate paths.",
        discussion: """
            Checks every retained generation of every archive, and that crash markers, restore \
            reports and the lifecycle journal can be read. Exit status: 0 when the store is \
            healthy, 1 when problems were found (each listed with its archive, generation and \
            path), 2 when the store cannot be opened or has no archive named --archive. Opens \
            the store read-only; safe while the app is running.
            """
    )

    @OptionGroup var options: StoreOptions
    @OptionGroup var output: FormatOptions

    func run() throws {
        let store = try options.openReadOnly()
        var problems: [StoreProblem]
        do {
            problems = try store.check()
        } catch {
            Diagnostics.fail(error, exitCode: 2)
        }
        if let typed = options.archiveName {
            let name = (try? store.archiveNames()).map { StoreOptions.stored(typed, among: $0, exitCode: 2) } ?? typed
            // An archive that is not there is an error; one the damage hides is not.
            do {
                if try store.summary(of: name) == nil {
                    Diagnostics.fail(ArchiveStoreError.archiveNotFound(name), exitCode: 2)
                }
            } catch {
                // The archive list is unreadable: the problems found say why.
            }
            problems = problems.filter { problem in problem.archive.map { $0 == name } ?? true }
        }
        switch output.format {
        case .text:
            var out = "Store \(TerminalText.escaped(store.path)): "
            out += problems.isEmpty ? "healthy\n" : "\(problems.count) problem\(problems.count == 1 ? "" : "s")\n"
            for problem in problems { out += "  \(TerminalText.escaped(problem.description))\n" }
            print(out, terminator: "")
        case .json:
            print(try JSONOutput.render(CheckJSON(store: store.path, problems: problems)))
        }
        if !problems.isEmpty { throw ExitCode(1) }
    }
}

/// `restorectl check --format json`; documented in docs/cli.md.
struct CheckJSON: Encodable {
    struct Problem: Encodable {
        let archive: String?
        let generation: Int64?
        let path: String?
        let problem: String
    }

    let store: String
    let healthy: Bool
    let problems: [Problem]

    init(store: String, problems: [StoreProblem]) {
        self.store = store
        healthy = problems.isEmpty
        self.problems = problems.map { problem in
            Problem(
                archive: problem.archive?.rawValue, generation: problem.generation?.rawValue,
                path: problem.path?.description, problem: problem.problem)
        }
    }
}
