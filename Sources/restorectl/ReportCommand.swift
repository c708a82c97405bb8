import ArgumentParser
import Foundation
import RestorationArchive

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Show the restore reports the store kept: each node restored, skipped or failed, and why.",
        discussion: """
            Shows the newest restore report of each archive (or of --archive), or every retained \
            report with --all. A damaged report hides only its archive's older reports; it is \
            named on stderr (exit status 1). Opens the store read-only; safe while the app is \
            running.
            """
    )

    @OptionGroup var options: StoreOptions
    @OptionGroup var output: FormatOptions

    @Flag(name: .long, help: "Show every retained report, newest first, instead of the newest only.")
    var all = false

    func run() throws {
        let store = try options.openReadOnly()
        var reports: [RestoreReport] = []
        var unreadable: [ArchiveStoreError] = []
        do {
            // Reports have checksums of their own: damage to their archive does not hide them,
            // and a damaged report hides only its archive's older reports.
            for name in try options.selectedArchiveNames(in: store, unreadable: &unreadable) {
                reports += try Diagnostics.readableNewest(&unreadable) { (limit) throws(ArchiveStoreError) in
                    try store.restoreReports(of: name, limit: all ? limit : 1)
                }
            }
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
        switch output.format {
        case .text: print(Self.text(reports, path: store.path), terminator: "")
        case .json: print(try JSONOutput.render(ReportsJSON(store: store.path, reports: reports.map(ReportJSON.init))))
        }
        Diagnostics.failIfAny(unreadable)
    }

    static func text(_ reports: [RestoreReport], path: String) -> String {
        var out = "Store \(TerminalText.escaped(path))\n"
        if reports.isEmpty { out += "  (no restore reports)\n" }
        for report in reports {
            out += "\nArchive \(TerminalText.escaped(report.archive.rawValue)), restoration at \(Timestamp.text(report.date))\n"
            if let generation = report.generation { out += "  generation:  \(generation)\n" }
            switch report.outcome {
            case .restored:
                out += "  outcome:     restored \(report.restoredCount) of \(report.nodes.count) nodes\n"
            case .nothingToRestore:
                out += "  outcome:     nothing to restore\n"
            case .refused(let reason):
                out += "  outcome:     refused: \(TerminalText.escapedReason(reason))\n"
            case .failed(let reason):
                out += "  outcome:     failed: \(TerminalText.escaped(reason))\n"
            }
            for node in report.nodes {
                let (word, reason) = Self.describe(node.outcome)
                out += "  \(word.padding(toLength: 9, withPad: " ", startingAt: 0))"
                out += "\(TerminalText.escaped(node.path.description)) (\(TerminalText.escaped(node.className)) v\(node.classVersion))"
                if let reason { out += ": \(TerminalText.escaped(reason.description))" }
                out += "\n"
            }
        }
        return out
    }

    static func describe(_ outcome: RestoreReport.NodeOutcome) -> (String, RestoreReport.Reason?) {
        switch outcome {
        case .restored: ("restored", nil)
        case .skipped(let reason): ("skipped", reason)
        case .failed(let reason): ("failed", reason)
        }
    }
}

/// `restorectl report --format json`; documented in docs/cli.md.
struct ReportsJSON: Encodable {
    let store: String
    let reports: [ReportJSON]
}

struct ReportJSON: Encodable {
    struct Outcome: Encodable {
        let kind: String
        let reason: String?
    }

    struct Node: Encodable {
        let path: String
        let class_name: String
        let class_version: Int
        let outcome: String
        let reason_kind: String?
        let reason: String?
    }

    let archive: String
    let date: Date
    let generation: Int64?
    let outcome: Outcome
    let restored_count: Int
    let nodes: [Node]

    init(_ report: RestoreReport) {
        archive = report.archive.rawValue
        date = report.date
        generation = report.generation?.rawValue
        outcome =
            switch report.outcome {
            case .restored: Outcome(kind: "restored", reason: nil)
            case .nothingToRestore: Outcome(kind: "nothing_to_restore", reason: nil)
            case .refused(let reason): Outcome(kind: "refused", reason: reason)
            case .failed(let reason): Outcome(kind: "failed", reason: reason)
            }
        restored_count = report.restoredCount
        nodes = report.nodes.map { node in
            let (word, reason) = ReportCommand.describe(node.outcome)
            return Node(
                path: node.path.description, class_name: node.className, class_version: node.classVersion,
                outcome: word, reason_kind: reason.map(Self.kind), reason: reason?.description)
        }
    }

    /// A stable name for each reason, for scripts.
    static func kind(_ reason: RestoreReport.Reason) -> String {
        switch reason {
        case .noRestorationClass: "no_restoration_class"
        case .declined: "declined"
        case .classMismatch: "class_mismatch"
        case .versionTooNew: "version_too_new"
        case .decodeFailed: "decode_failed"
        case .parentNotRestored: "parent_not_restored"
        case .checksumMismatch: "checksum_mismatch"
        case .overBudget: "over_budget"
        }
    }
}
