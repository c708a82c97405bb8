import ArgumentParser
import Foundation
import RestorationArchive

struct MarkersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "markers",
        abstract: "Show the crash markers present, and what each one means.",
        discussion: """
            A crash marker is committed before a launch decodes the first node of a generation, \
            and removed once that restoration is complete (asynchronous extensions included). \
            A marker whose process no longer runs is a restoration that died: the next launch \
            applies its crash policy to that generation before decoding anything. Opens the \
            store read-only; safe while the app is running.
            """
    )

    @OptionGroup var options: StoreOptions
    @OptionGroup var output: FormatOptions

    func run() throws {
        let store = try options.openReadOnly()
        let markers: [CrashMarker]
        var unreadable: [ArchiveStoreError] = []
        do {
            let selected = try Set(options.selectedArchiveNames(in: store, unreadable: &unreadable))
            // Without the list of archives (damage), the markers of every archive the store
            // still has a row of.
            let listed = unreadable.isEmpty || options.archiveName != nil
            markers = try store.crashMarkers().filter { !listed || selected.contains($0.archive) }
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
        switch output.format {
        case .text:
            var out = "Store \(TerminalText.escaped(store.path))\n"
            if markers.isEmpty { out += "  (no crash markers: no restoration is in progress or died)\n" }
            for marker in markers {
                out += "  archive \(TerminalText.escaped(marker.archive.rawValue)), generation \(marker.generation)"
                out += marker.isDamaged
                    ? ": damaged, \(Self.damaged)\n"
                    : ", begun \(Timestamp.text(marker.startedAt)) by process \(marker.processID)\n"
                out += "    \(Self.meaning(of: marker))\n"
            }
            print(out, terminator: "")
        case .json:
            print(try JSONOutput.render(MarkersJSON(store: store.path, markers: markers.map(MarkerJSON.init))))
        }
        Diagnostics.failIfAny(unreadable, problems: markers.compactMap(Self.damage))
    }

    /// What is wrong with a damaged marker (``CrashMarker/isDamaged``), which the library does
    /// not say further: a value of another type, or values that do not match its checksum.
    static let damaged = "its values cannot be read or do not match its checksum"

    static func meaning(of marker: CrashMarker) -> String {
        if marker.isDamaged {
            "the next launch takes it for a restoration that died, and applies its crash policy to generation \(marker.generation)"
        } else if marker.processIsRunning {
            "process \(marker.processID) runs: its restoration is probably still in progress"
        } else {
            "the restoration died: the next launch applies its crash policy to generation \(marker.generation)"
        }
    }

    /// The error line a damaged marker adds, after the listing, to exit status 1: damage to
    /// that row, which its archive's next launch deals with, not to the store (as `check` says it).
    static func damage(of marker: CrashMarker) -> String? {
        guard marker.isDamaged else { return nil }
        return "archive '\(marker.archive)': its crash marker is damaged (\(Self.damaged)): "
            + "the archive's next launch takes it for a restoration that died."
    }
}

/// `restorectl markers --format json`; documented in docs/cli.md.
struct MarkersJSON: Encodable {
    let store: String
    let markers: [MarkerJSON]
}

struct MarkerJSON: Encodable {
    let archive: String
    let generation: Int64
    let started_at: Date
    let process_id: Int64
    let process_running: Bool
    let damaged: Bool
    let meaning: String

    init(_ marker: CrashMarker) {
        archive = marker.archive.rawValue
        generation = marker.generation.rawValue
        started_at = marker.startedAt
        process_id = marker.processID
        process_running = marker.processIsRunning
        damaged = marker.isDamaged
        meaning = MarkersCommand.meaning(of: marker)
    }
}
