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
        // The journal's events in their order, the others placed among them by date
        // (``inOrder(journal:others:)``).
        var journalEvents: [Event] = []
        var others: [Event] = []
        var unreadable: [ArchiveStoreError] = []
        do {
            let archives = try options.selectedArchiveNames(in: store, unreadable: &unreadable)
            // Without --archive, the journal's invalidations and discards of every archive,
            // those of archives the store has since forgotten included.
            let concerns = { (archive: ArchiveName) in options.archiveName == nil || archives.contains(archive) }
            // A damaged journal entry hides only the entries before it.
            let journal = try Diagnostics.readableNewest(&unreadable) { (limit) throws(ArchiveStoreError) in
                try store.journal(limit: limit)
            }
            for entry in journal {
                switch entry.kind {
                case .lifecycle(let event, let state):
                    // Lifecycle events concern the whole app: shown unless --archive asks otherwise.
                    if options.archiveName == nil {
                        journalEvents.append(
                            Event(
                                date: entry.date, kind: event.rawValue, archive: nil, generation: nil, launch: entry.launch,
                                detail: "app \(state.rawValue), process \(entry.processID)", tiebreak: entry.sequence))
                    }
                case .invalidated(let archive, let generation, let reason) where concerns(archive):
                    journalEvents.append(
                        Event(
                            date: entry.date, kind: "invalidated", archive: archive.rawValue, generation: generation.rawValue,
                            launch: entry.launch, detail: reason, tiebreak: entry.sequence))
                case .discarded(let archive, let reason) where concerns(archive):
                    journalEvents.append(
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
                // Oldest first (the store lists them newest first).
                others.append(
                    contentsOf: (summary?.generations ?? []).reversed().map { generation in
                        Event(
                            date: generation.savedAt, kind: "saved", archive: archive.rawValue,
                            generation: generation.generation.rawValue, launch: nil,
                            detail: "\(generation.saveKind.rawValue) save, \(generation.nodeCount) nodes, \(generation.totalBytes) bytes",
                            tiebreak: Int64.max - 1)
                    })
                // A damaged restore report hides only its archive's older reports.
                let reports = try Diagnostics.readableNewest(&unreadable) { (limit) throws(ArchiveStoreError) in
                    try store.restoreReports(of: archive, limit: limit)
                }
                others.append(
                    contentsOf: reports.reversed().map { report in
                        Event(
                            date: report.date, kind: "restored", archive: archive.rawValue,
                            generation: report.generation?.rawValue, launch: nil, detail: Self.outcome(report),
                            tiebreak: Int64.max)
                    })
            }
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
        let shown = Array(Self.inOrder(journal: journalEvents, others: others).suffix(limit))
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

    /// The events oldest first: the journal's in the order of their sequence, which no step of
    /// the wall clock changes, and each other event (a save, a restore report) with the
    /// launch whose journal events' dates surround it (the newest such launch), after the last
    /// of them dated no later than it; one that no launch's dates surround, after the newest
    /// launch dated before it (else first). Sorted by date alone, a launch whose clock was
    /// behind (a device that boots with a stale clock until it is set, a user who set it back)
    /// was shown before the launches that came before it, with its saves and reports, and
    /// `--limit` left out the newest events. While the clock only goes forward, this is the
    /// order by date.
    ///
    /// Dates are compared by the millisecond, the precision the store keeps times in, then by
    /// ``Event/tiebreak``: compared as exact dates, a restore report kept by an earlier
    /// version of the library (which kept the restoration's exact start) sorted before the
    /// journal's `willFinishLaunching` of its own launch when that was rounded up to the same
    /// millisecond, and was shown under the launch before. Other events of one place, one
    /// millisecond and one tiebreak stay in the order they came.
    static func inOrder(journal: [Event], others: [Event]) -> [Event] {
        let journalKeys = journal.map(Key.init)
        // The journal's runs of events of one launch, each with the earliest and latest key.
        var runs: [(events: Range<Int>, earliest: Key, latest: Key)] = []
        for index in journal.indices {
            let date = journalKeys[index]
            if let run = runs.last, journal[run.events.upperBound - 1].launch == journal[index].launch {
                runs[runs.count - 1] = (run.events.lowerBound..<(index + 1), min(run.earliest, date), max(run.latest, date))
            } else {
                runs.append((index..<(index + 1), date, date))
            }
        }
        // How many journal events come before an event dated `date`.
        func place(_ date: Key) -> Int {
            // Surrounded to the millisecond: a save is most often of the millisecond of the
            // event before it, which its tiebreak puts after.
            if let run = runs.last(where: { $0.earliest.millisecond <= date.millisecond && date.millisecond <= $0.latest.millisecond }) {
                // Its earliest event is dated no later than `date`.
                return (run.events.last { journalKeys[$0] <= date } ?? run.events.lowerBound) + 1
            }
            return runs.last { $0.latest <= date }?.events.upperBound ?? 0
        }
        // Sorted by place, then date; the index keeps events of one place and date in order.
        let placed = others.indices
            .map { index in
                let date = Key(others[index])
                return (place: place(date), date: date, index: index)
            }
            .sorted { ($0.place, $0.date, $0.index) < ($1.place, $1.date, $1.index) }
        var ordered: [Event] = []
        ordered.reserveCapacity(journal.count + others.count)
        var next = placed.startIndex
        for count in 0...journal.count {
            if count > 0 { ordered.append(journal[count - 1]) }
            while next < placed.endIndex, placed[next].place == count {
                ordered.append(others[placed[next].index])
                next += 1
            }
        }
        return ordered
    }

    /// What ``inOrder(journal:others:)`` compares an event by: its millisecond, then its
    /// ``Event/tiebreak``.
    private struct Key: Comparable {
        let millisecond: Double
        let tiebreak: Int64

        init(_ event: Event) {
            millisecond = (event.date.timeIntervalSince1970 * 1000).rounded()
            tiebreak = event.tiebreak
        }

        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.millisecond, lhs.tiebreak) < (rhs.millisecond, rhs.tiebreak) }
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
