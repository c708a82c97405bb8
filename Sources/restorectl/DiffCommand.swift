import ArgumentParser
import Foundation
import RestorationArchive

struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Show what changed between two retained generations of an archive.",
        discussion: """
            Lists the nodes added, removed and changed from --from to --to, and for a changed \
            node what changed: its class or version, its place among its siblings, and which of \
            its top-level keys were added, removed or changed. A node damaged in either \
            generation is listed as damaged, then named (exit status 1). Opens the store \
            read-only; safe while the app is running.
            """
    )

    @OptionGroup var options: StoreOptions
    @OptionGroup var output: FormatOptions

    @Option(name: .long, parsing: .unconditional, help: "The older generation.")
    var from: Int64

    @Option(name: .long, parsing: .unconditional, help: "The newer generation.")
    var to: Int64

    /// One node that differs.
    struct Change: Encodable {
        let path: String
        let change: String
        let class_name: String
        let details: [String]
    }

    func run() throws {
        let store = try options.openReadOnly()
        let archive = options.selectedArchive(in: store)
        let old: ArchiveSnapshot
        let new: ArchiveSnapshot
        do {
            guard let first = try store.inspectionSnapshot(of: archive, generation: Generation(rawValue: from)),
                let second = try store.inspectionSnapshot(of: archive, generation: Generation(rawValue: to))
            else { throw ArchiveStoreError.archiveNotFound(archive) }
            (old, new) = (first, second)
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
        let changes = Self.changes(from: old, to: new)
        switch output.format {
        case .text:
            var out = "Archive \(TerminalText.escaped(archive.rawValue)): generation \(from) → \(to)"
            out += changes.isEmpty ? ": no node changed\n" : "\n"
            for change in changes {
                out += "  \(change.change.padding(toLength: 8, withPad: " ", startingAt: 0))"
                out += "\(TerminalText.escaped(change.path)) (\(TerminalText.escaped(change.class_name)))\n"
                for detail in change.details { out += "           \(TerminalText.escaped(detail))\n" }
            }
            print(out, terminator: "")
        case .json:
            print(try JSONOutput.render(DiffJSON(archive: archive.rawValue, from: from, to: to, changes: changes)))
        }
        // A damaged node is listed where it is; then named on stderr (status 1), once for each
        // generation it is damaged in.
        Diagnostics.failIfAny(Self.distinct(old, new).flatMap(Diagnostics.damagedNodes(in:)))
    }

    /// The nodes that differ from `old` to `new`; a node damaged in either is `damaged`, since
    /// what it holds there is not what was saved.
    static func changes(from old: ArchiveSnapshot, to new: ArchiveSnapshot) -> [Change] {
        let before = Dictionary(old.nodes.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Dictionary(new.nodes.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        let generations = distinct(old, new)
        var changes: [Change] = []
        for path in Set(before.keys).union(after.keys).sorted(by: { $0.description < $1.description }) {
            let damagedIn = generations.filter { $0.nodeDamage[path] != nil }.map(\.header.generation)
            if let node = after[path] ?? before[path], !damagedIn.isEmpty {
                let details = damagedIn.map { "damaged in generation \($0): what changed cannot be told" }
                changes.append(Change(path: path.description, change: "damaged", class_name: node.className, details: details))
                continue
            }
            switch (before[path], after[path]) {
            case (nil, let added?):
                changes.append(Change(path: path.description, change: "added", class_name: added.className, details: []))
            case (let removed?, nil):
                changes.append(Change(path: path.description, change: "removed", class_name: removed.className, details: []))
            case (let old?, let new?) where old != new:
                changes.append(
                    Change(path: path.description, change: "changed", class_name: new.className, details: details(old, new)))
            default:
                break
            }
        }
        return changes
    }

    /// Whether two values are written the same: `==` finds a NaN unequal to itself and `-0.0`
    /// equal to `0.0`, where what was saved is the same in the one case and not in the other.
    private static func sameEncoding(_ a: StateValue, _ b: StateValue) -> Bool {
        guard let left = try? StateValue.encode(["": a]), let right = try? StateValue.encode(["": b]) else { return a == b }
        return left == right
    }

    /// The two generations compared, or one when they are the same.
    private static func distinct(_ old: ArchiveSnapshot, _ new: ArchiveSnapshot) -> [ArchiveSnapshot] {
        old.header.generation == new.header.generation ? [old] : [old, new]
    }

    private static func details(_ old: ArchivedNode, _ new: ArchivedNode) -> [String] {
        var details: [String] = []
        if old.className != new.className { details.append("class: \(old.className) → \(new.className)") }
        if old.classVersion != new.classVersion { details.append("version: \(old.classVersion) → \(new.classVersion)") }
        if old.order != new.order { details.append("order: \(old.order) → \(new.order)") }
        guard old.state != new.state else { return details }
        guard let before = try? StateValue.decode(blob: old.state), let after = try? StateValue.decode(blob: new.state) else {
            details.append("state: \(old.state.count) → \(new.state.count) bytes (cannot be decoded)")
            return details
        }
        let keys = Set(before.keys).union(after.keys).sorted()
        let added = keys.filter { before[$0] == nil }
        let removed = keys.filter { after[$0] == nil }
        let changed = keys.filter { key in
            guard let old = before[key], let new = after[key] else { return false }
            return !sameEncoding(old, new)
        }
        if !added.isEmpty { details.append("keys added: " + added.joined(separator: ", ")) }
        if !removed.isEmpty { details.append("keys removed: " + removed.joined(separator: ", ")) }
        if !changed.isEmpty { details.append("keys changed: " + changed.joined(separator: ", ")) }
        return details
    }
}

/// `restorectl diff --format json`; documented in docs/cli.md.
struct DiffJSON: Encodable {
    let archive: String
    let from: Int64
    let to: Int64
    let changes: [DiffCommand.Change]
}
