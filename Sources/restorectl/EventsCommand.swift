import ArgumentParser
import Foundation
import RestorationArchive

struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Show the lifecycle journal and the store's events: saves, restores and their outcome, invalidations, discards.",
        discussion: """
            Merges, oldest first: the lifecycle events the app recorded (each with the state it \
            left the app in, grouped by launch), the saves of the retained generations, the kept \
            restore reports, and the generations a crash policy invalidated or archives \
            discarded, with why (archives the store has since forgotten included). The journal \
            keeps its newest 256 entries and the store its newest restore reports and retained \
            generations, so older events are gone. Opens the store read-only; safe while the \
            app is running.
            """
    )

    @OptionGroup var options: StoreOptions
    @OptionGroup var output: FormatOptions

    @Option(name: .long, parsing: .unconditional, help: "Show only the newest N events (50 by default).")
    var limit: Int = 50

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be at least 1") }
    }

    /// One line of the merged history.
    struct Event: Encodable {
        let date: Date
        let kind: String
        let archive: String?
        let generation: Int64?
        let launch: Int64?
        let detail: String
        /// Orders events of the same millisecond: the journal's own order, then saves, then reports.
        let tiebreak: Int64

        private enum CodingKeys: String, CodingKey { case date, kind, archive, generation, launch, detail }
    }

    func run() throws {
        let store = try options.openReadOnly()
        var events: [Event] = []
        var unreadable: [ArchiveStoreError] = []
        do {
            let archives = try options.selectedArchiveNames(in: store, unreadable: &unreadable)
            // Without --archive, the journal's invalidations and discards of every archive,
            // those of archives the store has since forgotten included.
            let concerns = { (archive: ArchiveName) in options.archiveName.map { $0 == archive } ?? true }
            // A damaged journal entry hides only the entries before it.
            let journal = try Diagnostics.readableNewest(&unreadable) { (limit) throws(ArchiveStoreError) in
                try store.journal(limit: limit)
            }
            for entry in journal {
                switch entry.kind {
                case .lifecycle(let event, let state):
                    // Lifecycle events concern the whole app: shown unless --archive asks otherwise.
                    if options.archiveName == nil {
                        events.append(
                            Event(
                                date: entry.date, kind: event.rawValue, archive: nil, generation: nil, launch: entry.launch,
                                detail: "app \(state.rawValue), process \(entry.processID)", tiebreak: entry.sequence))
                    }
                case .invalidated(let archive, let generation, let reason) where concerns(archive):
                    events.append(
                        Event(
                            date: entry.date, kind: "invalidated", archive: archive.rawValue, generation: generation.rawValue,
                            launch: entry.launch, detail: reason, tiebreak: entry.sequence))
                case .discarded(let archive, let reason) where concerns(archive):
                    events.append(
                        Event(
                            date: entry.date, kind: "discarded", archive: archive.rawValue, generation: nil,
                            launch: entry.launch, detail: reason, tiebreak: entry.sequence))
                default:
                    break
                }
            }
            for archive in archives {
                // A damaged archive's saves are not listed, nor a generation whose header cannot
                // be read (named, as the archive's damage is); the rest is.
                let summary = try Diagnostics.unlessDamaged(&unreadable) { () throws(ArchiveStoreError) in
                    try store.summary(of: archive)
                } ?? nil
                for (generation, reason) in (summary?.damagedGenerations ?? [:]).sorted(by: { $0.key < $1.key }) {
                    unreadable.append(.damagedArchive(archive, generation, reason))
                }
                // Oldest first (the store lists them newest first): the sort below keeps
                // events of one millisecond in the order they came.
                for generation in (summary?.generations ?? []).reversed() {
                    events.append(
                        Event(
                            date: generation.savedAt, kind: "saved", archive: archive.rawValue,
                            generation: generation.generation.rawValue, launch: nil,
                            detail: "\(generation.saveKind.rawValue) save, \(generation.nodeCount) nodes, \(generation.totalBytes) bytes",
                            tiebreak: Int64.max - 1))
                }
                // A damaged restore report hides only its archive's older reports.
                let reports = try Diagnostics.readableNewest(&unreadable) { (limit) throws(ArchiveStoreError) in
                    try store.restoreReports(of: archive, limit: limit)
                }
                for report in reports.reversed() {
                    events.append(
                        Event(
                            date: report.date, kind: "restored", archive: archive.rawValue,
                            generation: report.generation?.rawValue, launch: nil, detail: Self.outcome(report),
                            tiebreak: Int64.max))
                }
            }
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
        let shown = Array(Self.inOrder(events).suffix(limit))
        switch output.format {
        case .text:
            var out = "Store \(TerminalText.escaped(store.path))\n"
            if shown.isEmpty { out += "  (no events)\n" }
            var launch: Int64?
            for event in shown {
                if let current = event.launch, current != launch {
                    out += "launch \(current):\n"
                    launch = current
                }
                out += "  \(Timestamp.text(event.date))  \(event.kind)"
                if let archive = event.archive { out += "  archive \(TerminalText.escaped(archive))" }
                if let generation = event.generation { out += " generation \(generation)" }
                out += ": \(TerminalText.escapedReason(event.detail))\n"  // only a reason given can be blank
            }
            print(out, terminator: "")
        case .json:
            print(try JSONOutput.render(EventsJSON(store: store.path, events: shown)))
        }
        Diagnostics.failIfAny(unreadable)
    }

    /// The events oldest first: by the millisecond, the precision the store keeps times in,
    /// then by ``Event/tiebreak``. Compared as exact dates, a restore report kept by an earlier
    /// version of the library (which kept the restoration's exact start) sorted before the
    /// journal's `willFinishLaunching` of its own launch when that was rounded up to the same
    /// millisecond, and was shown under the launch before. The sort is stable: events of one
    /// millisecond without a journal sequence stay in the order they came.
    static func inOrder(_ events: [Event]) -> [Event] {
        func millisecond(_ event: Event) -> Double { (event.date.timeIntervalSince1970 * 1000).rounded() }
        return events.sorted { (millisecond($0), $0.tiebreak) < (millisecond($1), $1.tiebreak) }
    }

    static func outcome(_ report: RestoreReport) -> String {
        switch report.outcome {
        case .restored: "restored \(report.restoredCount) of \(report.nodes.count) nodes"
        case .nothingToRestore: "nothing to restore"
        case .refused(let reason): "refused: \(TerminalText.shownReason(reason))"
        case .failed(let reason): "failed: \(reason)"
        }
    }
}

/// `restorectl events --format json`; documented in docs/cli.md.
struct EventsJSON: Encodable {
    let store: String
    let events: [EventsCommand.Event]
}
