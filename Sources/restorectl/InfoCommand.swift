import ArgumentParser
import Foundation
import RestorationArchive

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show each archive's header, state, retained generations, node count, size and crash-policy status.",
        discussion: """
            The crash-policy status is what the next launch's crash policy acts on: how the last \
            launch in the journal ended, each archive's crash marker (a restoration in progress \
            or one that died), and per retained generation the restorations begun since one \
            last completed and whether one ever completed. Every retained generation's nodes \
            are read and their checksums verified: a damaged node is counted under its \
            generation and named on stderr, and the exit status is 1 (sealed states are left \
            to check, which verifies them without the key). So is an older generation whose \
            header cannot be read, listed as damaged among the others. The store's size \
            comes first: its file, the free pages in it, and its write-ahead log. Opens the \
            store read-only; safe while the app is running.
            """
    )

    @OptionGroup var options: StoreOptions
    @OptionGroup var output: FormatOptions

    func run() throws {
        let store = try options.openReadOnly()
        let status: CrashStatus
        do {
            // Each archive read on its own: a damaged one is named, and the others shown.
            var archives: [CrashStatus.Archive] = []
            var listDamage: [ArchiveStoreError] = []
            let selected = try options.selectedArchiveNames(in: store, unreadable: &listDamage)
            for name in selected {
                var damage: [ArchiveStoreError] = []
                let summary = try Diagnostics.unlessDamaged(&damage) { () throws(ArchiveStoreError) in
                    try store.summary(of: name)
                }
                if let error = damage.first {
                    archives.append(.damaged(name, error))
                } else if let summary = summary ?? nil {
                    archives.append(.readable(summary, damage: try Self.generationDamage(of: summary, in: store)))
                }
            }
            let markers = Dictionary(
                try store.crashMarkers().filter { selected.contains($0.archive) }.map { ($0.archive, $0) },
                uniquingKeysWith: { first, _ in first })
            // A damaged journal hides only the last launch.
            var journalDamage: [ArchiveStoreError] = []
            let lastLaunch = try Diagnostics.unlessDamaged(&journalDamage) { () throws(ArchiveStoreError) in
                try store.previousLaunch()
            }
            status = CrashStatus(
                archives: archives, listDamage: listDamage.first, markers: markers, lastLaunch: lastLaunch ?? nil,
                journalDamage: journalDamage.first, footprint: try store.footprint())
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
        switch output.format {
        case .text: print(Self.text(status, path: store.path), terminator: "")
        case .json: print(try JSONOutput.render(InfoJSON(store: store.path, status)))
        }
        Diagnostics.failIfAny(
            [status.listDamage, status.journalDamage].compactMap { $0 } + status.archives.flatMap(\.damage),
            problems: status.markers.values.sorted { $0.archive < $1.archive }.compactMap(MarkersCommand.damage))
    }

    /// The damage of each retained generation of an archive: a header that cannot be read (the
    /// summary names it), or nodes, read as `check` reads them, keeping damaged nodes: a
    /// header reads `valid` (never refused) whether or not its nodes match their checksums.
    /// A generation that the app's saves pruned since the summary was read is left out, and
    /// so is one whose states are sealed (the Encryption trait): without the key they cannot
    /// be read as nodes, and `check` verifies them by their checksums.
    static func generationDamage(of summary: ArchiveSummary, in store: ArchiveStore) throws(ArchiveStoreError)
        -> [Generation: CrashStatus.GenerationDamage]
    {
        var found = summary.damagedGenerations.mapValues(CrashStatus.GenerationDamage.header)
        for generation in summary.generations {
            var unreadable: [ArchiveStoreError] = []
            var snapshot: ArchiveSnapshot? = nil
            do {
                snapshot = try Diagnostics.unlessDamaged(&unreadable) { () throws(ArchiveStoreError) in
                    try store.inspectionSnapshot(of: summary.name, generation: generation.generation)
                } ?? nil
            } catch {
                switch error {
                case .generationNotFound, .encryptionKeyRequired: continue
                default: throw error
                }
            }
            if let error = unreadable.first {
                found[generation.generation] = .unreadable(error)
            } else if let snapshot, !snapshot.nodeDamage.isEmpty {
                found[generation.generation] = .nodes(Diagnostics.damagedNodes(in: snapshot))
            }
        }
        return found
    }

    /// What `info` shows besides the archives themselves: the state the crash policies act on.
    struct CrashStatus {
        /// An archive as `info` could read it.
        enum Archive {
            /// Its summary, and the damage found in its retained generations.
            case readable(ArchiveSummary, damage: [Generation: GenerationDamage])
            /// Its row, or its newest generation's header, cannot be read or does not match its checksum.
            case damaged(ArchiveName, ArchiveStoreError)

            /// Every error to name on stderr, generations oldest first.
            var damage: [ArchiveStoreError] {
                switch self {
                case .damaged(_, let error): [error]
                case .readable(let summary, let damage):
                    damage.sorted { $0.key < $1.key }.flatMap { $0.value.errors(of: summary.name, $0.key) }
                }
            }
        }

        /// What is damaged in a retained generation.
        enum GenerationDamage {
            /// Its header cannot be read, for this reason: the generation is not in the
            /// summary's list, and its nodes are not read.
            case header(String)
            /// The nodes that do not match their checksums or whose seals do not open, in tree
            /// order, each as the error that names it.
            case nodes([ArchiveStoreError])
            /// Damage that kept the generation's nodes from being read at all (a node lost or
            /// added, a path that cannot be read).
            case unreadable(ArchiveStoreError)

            /// The errors to name on stderr for this damage to `generation` of `archive`.
            func errors(of archive: ArchiveName, _ generation: Generation) -> [ArchiveStoreError] {
                switch self {
                case .header(let reason): [.damagedArchive(archive, generation, reason)]
                case .nodes(let errors): errors
                case .unreadable(let error): [error]
                }
            }

            /// The end of a generation's line in `info`'s text.
            var text: String {
                switch self {
                case .header(let reason): "DAMAGED: \(TerminalText.escaped(reason))"
                case .nodes(let errors): errors.count == 1 ? "; DAMAGED: 1 node" : "; DAMAGED: \(errors.count) nodes"
                case .unreadable(let error): "; DAMAGED: \(TerminalText.escaped(error.description))"
                }
            }
        }

        let archives: [Archive]
        /// Why the store's archives could not be listed (it lost archives), when they could
        /// not: `archives` then holds the one selected, or none.
        let listDamage: ArchiveStoreError?
        /// The crash marker of each archive that has one.
        let markers: [ArchiveName: CrashMarker]
        /// The newest launch in the journal (this command records none).
        let lastLaunch: LaunchSummary?
        /// Why the journal could not be read, when it could not.
        let journalDamage: ArchiveStoreError?
        /// What the store takes on disk.
        let footprint: StoreFootprint
    }

    static func text(_ status: CrashStatus, path: String) -> String {
        var out = "Store \(TerminalText.escaped(path))\n"
        let footprint = status.footprint
        out += "  size:          \(footprint.storeBytes) bytes, \(footprint.freeBytes) of them free"
        if footprint.fileBytes != footprint.storeBytes {
            // Saves the log still holds (a killed app's, a running app's), or a compaction
            // waiting for its checkpoint: the file has another length until the log is copied
            // back. Without a log: a store of an older schema, read through a copy migrated in
            // memory, or a file longer than SQLite's count of its pages.
            out += " (its file \(footprint.fileBytes) bytes"
                + (footprint.logBytes > 0 ? " until the write-ahead log is copied back)" : ")")
        }
        out += "; write-ahead log \(footprint.logBytes) bytes\n"
        if let damage = status.journalDamage {
            out += "  last launch:   cannot be read: \(TerminalText.escaped(damage.description))\n"
        } else {
            out += "  last launch:   \(describe(status.lastLaunch))\n"
        }
        if let damage = status.listDamage {
            out += "  archives:      cannot be listed: \(TerminalText.escaped(damage.description)) "
                + "(restorectl check lists what the store holds)\n"
        } else if status.archives.isEmpty {
            out += "  (no archives)\n"
        }
        for archive in status.archives {
            let summary: ArchiveSummary
            let damage: [Generation: CrashStatus.GenerationDamage]
            switch archive {
            case .readable(let readable, let found):
                summary = readable
                damage = found
            case .damaged(let name, let error):
                out += "\nArchive \(TerminalText.escaped(name.rawValue))\n"
                out += "  state:         damaged: \(TerminalText.escaped(error.description))\n"
                out += "  crash marker:  \(describe(status.markers[name]))\n"
                out +=
                    error.isUnusableStore
                    // Damage to the store itself (a lost archive row): no save of the archive
                    // goes through; an app erases such a store and starts afresh.
                    ? "  (restorectl check lists the store's problems; an app erases such a store and starts afresh)\n"
                    : "  (restorectl check lists its problems; the app's next full save writes it afresh, a discard deletes it)\n"
                continue
            }
            out += "\nArchive \(TerminalText.escaped(summary.name.rawValue))\n"
            out += "  state:         \(describe(summary.state))\n"
            out += "  created:       \(Timestamp.text(summary.createdAt))\n"
            out += "  crash marker:  \(describe(status.markers[summary.name]))\n"
            guard let header = summary.header else {
                out += "  generation:    \(summary.latestGeneration) (none retained)\n"
                continue
            }
            out += "  generation:    \(header.generation), saved \(Timestamp.text(header.savedAt)) (\(header.saveKind.rawValue) save)\n"
            out += "  app:           version \(TerminalText.escaped(header.appVersion)), build \(TerminalText.escaped(header.appBuild))\n"
            let idiom = header.idiom.isEmpty ? "" : " / " + TerminalText.escaped(header.idiom)
            out += "  platform:      \(TerminalText.escaped(header.platform))\(idiom)\n"
            out += "  store format:  \(header.storeFormat)\n"
            out += "  nodes:         \(header.nodeCount) (\(header.totalBytes) bytes of state)\n"
            if header.appValues.isEmpty {
                out += "  app values:    (none)\n"
            } else {
                out += "  app values:\n"
                for key in header.appValues.keys.sorted() {
                    out += "    \(TerminalText.escaped(key)) = \(describe(header.appValues[key]!))\n"
                }
            }
            out += "  retained generations:\n"
            // Newest first, those whose header cannot be read among them.
            let listed = Dictionary(summary.generations.map { ($0.generation, $0) }, uniquingKeysWith: { first, _ in first })
            for number in Set(listed.keys).union(summary.damagedGenerations.keys).sorted(by: >) {
                guard let generation = listed[number] else {
                    out += "    \(number)  \(damage[number]?.text ?? "")\n"
                    continue
                }
                out += "    \(generation.generation)  saved \(Timestamp.text(generation.savedAt))  \(generation.saveKind.rawValue)"
                out += "  \(generation.nodeCount) nodes  \(generation.totalBytes) bytes  \(describe(generation.state))"
                out += "; \(restorations(of: generation))\(damage[generation.generation]?.text ?? "")\n"
            }
        }
        return out
    }

    static func describe(_ launch: LaunchSummary?) -> String {
        guard let launch else { return "none recorded" }
        let last = "launch \(launch.launch), process \(launch.processID), last event \(launch.lastEvent.rawValue) at \(Timestamp.text(launch.lastEventAt))"
        return switch launch.ending {
        case .terminated: "\(last): terminated normally"
        case .inBackground: "\(last): ended in the background (state is meant to be restored)"
        case .inForeground where launch.processIsRunning: "\(last): in the foreground, its process runs"
        case .inForeground: "\(last): died in the foreground"
        }
    }

    static func describe(_ marker: CrashMarker?) -> String {
        guard let marker else { return "none (no restoration in progress or died)" }
        if marker.isDamaged {
            return "generation \(marker.generation), damaged (\(MarkersCommand.damaged)): \(MarkersCommand.meaning(of: marker))"
        }
        return "generation \(marker.generation), begun \(Timestamp.text(marker.startedAt)): \(MarkersCommand.meaning(of: marker))"
    }

    /// What the crash policies know of a generation's restorations.
    static func restorations(of generation: GenerationSummary) -> String {
        let clean = generation.restoredCleanly ? "restored cleanly before" : "never restored cleanly"
        switch generation.restoreAttempts {
        case 0: return generation.restoredCleanly ? "restored cleanly" : "not restored yet"
        case 1: return "1 restoration begun since one completed, \(clean)"
        case let attempts: return "\(attempts) restorations begun since one completed, \(clean)"
        }
    }

    static func describe(_ state: ArchiveState) -> String {
        switch state {
        case .valid: "valid"
        case .invalidated(let reason, let at): "invalidated at \(Timestamp.text(at)): \(TerminalText.escaped(reason))"
        case .discarded(let reason, let at): "discarded at \(Timestamp.text(at)): \(TerminalText.escapedReason(reason))"
        }
    }

    static func describe(_ value: HeaderValue) -> String {
        switch value {
        case .bool(let value): "\(value) (bool)"
        case .int(let value): "\(value) (int)"
        case .double(let value): "\(NonFiniteNumber.text(value)) (double)"
        case .string(let value): "\"\(TerminalText.escaped(value))\" (string)"
        case .bytes(let value): "\(value.count) bytes (bytes)"
        }
    }
}

/// `restorectl info --format json`; documented in docs/cli.md.
struct InfoJSON: Encodable {
    let store: String
    let size: SizeJSON
    let last_launch: LaunchJSON?
    let archives: [ArchiveJSON]
    /// The archives that could not be read; left out when there is none.
    let damaged_archives: [DamagedArchiveJSON]?
    /// Why the journal could not be read (`last_launch` is then left out); left out when it could.
    let journal_error: String?
    /// Why the archives could not be listed (the store lost archives); left out when they could.
    let archives_error: String?

    init(store: String, _ status: InfoCommand.CrashStatus) {
        self.store = store
        size = SizeJSON(status.footprint)
        last_launch = status.lastLaunch.map(LaunchJSON.init)
        var archives: [ArchiveJSON] = []
        var damaged: [DamagedArchiveJSON] = []
        for archive in status.archives {
            switch archive {
            case .readable(let summary, let damage):
                archives.append(ArchiveJSON(summary, marker: status.markers[summary.name], damage: damage))
            case .damaged(let name, let error):
                damaged.append(
                    DamagedArchiveJSON(
                        name: name.rawValue, error: error.description,
                        crash_marker: status.markers[name].map(MarkerJSON.init)))
            }
        }
        self.archives = archives
        damaged_archives = damaged.isEmpty ? nil : damaged
        journal_error = status.journalDamage?.description
        archives_error = status.listDamage?.description
    }
}

struct SizeJSON: Encodable {
    let file_bytes: Int
    let store_bytes: Int
    let free_bytes: Int
    let log_bytes: Int

    init(_ footprint: StoreFootprint) {
        (file_bytes, store_bytes, free_bytes, log_bytes) =
            (footprint.fileBytes, footprint.storeBytes, footprint.freeBytes, footprint.logBytes)
    }
}

struct DamagedArchiveJSON: Encodable {
    let name: String
    let error: String
    let crash_marker: MarkerJSON?
}

struct LaunchJSON: Encodable {
    let launch: Int64
    let process_id: Int64
    let process_running: Bool
    let started_at: Date
    let last_event: String
    let last_event_at: Date
    /// "terminated", "background" or "foreground".
    let ended: String

    init(_ launch: LaunchSummary) {
        self.launch = launch.launch
        process_id = launch.processID
        process_running = launch.processIsRunning
        started_at = launch.startedAt
        last_event = launch.lastEvent.rawValue
        last_event_at = launch.lastEventAt
        ended =
            switch launch.ending {
            case .terminated: "terminated"
            case .inBackground: "background"
            case .inForeground: "foreground"
            }
    }
}

struct ArchiveJSON: Encodable {
    let name: String
    let state: ArchiveStateJSON
    let created_at: Date
    let latest_generation: Int64
    let crash_marker: MarkerJSON?
    let header: HeaderJSON?
    let generations: [GenerationJSON]
    /// The retained generations whose header cannot be read; left out when there is none.
    let damaged_generations: [DamagedGenerationJSON]?

    init(_ summary: ArchiveSummary, marker: CrashMarker?, damage: [Generation: InfoCommand.CrashStatus.GenerationDamage]) {
        name = summary.name.rawValue
        state = ArchiveStateJSON(summary.state)
        created_at = summary.createdAt
        latest_generation = summary.latestGeneration.rawValue
        crash_marker = marker.map(MarkerJSON.init)
        header = summary.header.map(HeaderJSON.init)
        generations = summary.generations.map { GenerationJSON($0, damage: damage[$0.generation]) }
        let unreadable = summary.damagedGenerations.sorted { $0.key > $1.key }
        damaged_generations =
            unreadable.isEmpty ? nil : unreadable.map { DamagedGenerationJSON(generation: $0.key.rawValue, error: $0.value) }
    }
}

struct DamagedGenerationJSON: Encodable {
    let generation: Int64
    /// What is wrong with its header.
    let error: String
}

struct HeaderJSON: Encodable {
    let generation: Int64
    let store_format: Int
    let app_version: String
    let app_build: String
    let platform: String
    let idiom: String
    let saved_at: Date
    let save_kind: String
    let node_count: Int
    let total_bytes: Int
    let state: ArchiveStateJSON
    let app_values: [String: HeaderValueJSON]

    init(_ header: ArchiveHeader) {
        generation = header.generation.rawValue
        store_format = header.storeFormat
        app_version = header.appVersion
        app_build = header.appBuild
        platform = header.platform
        idiom = header.idiom
        saved_at = header.savedAt
        save_kind = header.saveKind.rawValue
        node_count = header.nodeCount
        total_bytes = header.totalBytes
        state = ArchiveStateJSON(header.state)
        app_values = header.appValues.mapValues(HeaderValueJSON.init)
    }
}

struct GenerationJSON: Encodable {
    let generation: Int64
    let saved_at: Date
    let save_kind: String
    let node_count: Int
    let total_bytes: Int
    let state: ArchiveStateJSON
    let restore_attempts: Int
    let restored_cleanly: Bool
    /// The paths of its nodes that do not match their checksums; left out when there is none.
    let damaged_nodes: [String]?
    /// Why its nodes could not be read; left out when they could.
    let error: String?

    init(_ summary: GenerationSummary, damage: InfoCommand.CrashStatus.GenerationDamage?) {
        generation = summary.generation.rawValue
        saved_at = summary.savedAt
        save_kind = summary.saveKind.rawValue
        node_count = summary.nodeCount
        total_bytes = summary.totalBytes
        state = ArchiveStateJSON(summary.state)
        restore_attempts = summary.restoreAttempts
        restored_cleanly = summary.restoredCleanly
        switch damage {
        case .nodes(let errors):
            damaged_nodes = errors.compactMap(Diagnostics.path(of:)).map(\.description)
            error = nil
        case .unreadable(let unreadable):
            damaged_nodes = nil
            error = unreadable.description
        case .header, nil:
            damaged_nodes = nil
            error = nil
        }
    }
}
