import ArgumentParser
import Foundation
import RestorationArchive

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show each archive's header, state, retained generations, node count and size.",
        discussion: "Opens the store read-only; safe while the app is running."
    )

    @OptionGroup var options: StoreOptions
    @OptionGroup var output: FormatOptions

    func run() throws {
        let store = try options.openReadOnly()
        let summaries: [ArchiveSummary]
        do {
            summaries = try options.selectedArchives(in: store)
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
        switch output.format {
        case .text: print(Self.text(summaries, path: store.path), terminator: "")
        case .json: print(try JSONOutput.render(InfoJSON(store: store.path, archives: summaries.map(ArchiveJSON.init))))
        }
    }

    static func text(_ summaries: [ArchiveSummary], path: String) -> String {
        var out = "Store \(TerminalText.escaped(path))\n"
        if summaries.isEmpty { out += "  (no archives)\n" }
        for summary in summaries {
            out += "\nArchive \(TerminalText.escaped(summary.name.rawValue))\n"
            out += "  state:         \(describe(summary.state))\n"
            out += "  created:       \(timestamp(summary.createdAt))\n"
            guard let header = summary.header else {
                out += "  generation:    \(summary.latestGeneration) (none retained)\n"
                continue
            }
            out += "  generation:    \(header.generation), saved \(timestamp(header.savedAt)) (\(header.saveKind.rawValue) save)\n"
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
            for generation in summary.generations {
                out += "    \(generation.generation)  saved \(timestamp(generation.savedAt))  \(generation.saveKind.rawValue)"
                out += "  \(generation.nodeCount) nodes  \(generation.totalBytes) bytes  \(describe(generation.state))\n"
            }
        }
        return out
    }

    static func describe(_ state: ArchiveState) -> String {
        switch state {
        case .valid: "valid"
        case .invalidated(let reason, let at): "invalidated at \(timestamp(at)): \(TerminalText.escaped(reason))"
        case .discarded(let reason, let at): "discarded at \(timestamp(at)): \(TerminalText.escaped(reason))"
        }
    }

    static func describe(_ value: HeaderValue) -> String {
        switch value {
        case .bool(let value): "\(value) (bool)"
        case .int(let value): "\(value) (int)"
        case .double(let value): "\(value) (double)"
        case .string(let value): "\"\(TerminalText.escaped(value))\" (string)"
        case .bytes(let value): "\(value.count) bytes (bytes)"
        }
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}

/// `restorectl info --format json`; documented in docs/cli.md.
struct InfoJSON: Encodable {
    let store: String
    let archives: [ArchiveJSON]
}

struct ArchiveJSON: Encodable {
    let name: String
    let state: ArchiveStateJSON
    let created_at: Date
    let latest_generation: Int64
    let header: HeaderJSON?
    let generations: [GenerationJSON]

    init(_ summary: ArchiveSummary) {
        name = summary.name.rawValue
        state = ArchiveStateJSON(summary.state)
        created_at = summary.createdAt
        latest_generation = summary.latestGeneration.rawValue
        header = summary.header.map(HeaderJSON.init)
        generations = summary.generations.map(GenerationJSON.init)
    }
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

    init(_ summary: GenerationSummary) {
        generation = summary.generation.rawValue
        saved_at = summary.savedAt
        save_kind = summary.saveKind.rawValue
        node_count = summary.nodeCount
        total_bytes = summary.totalBytes
        state = ArchiveStateJSON(summary.state)
    }
}
