import ArgumentParser
import Foundation
import RestorationArchive

struct TreeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tree",
        abstract: "Show an archive's restoration tree: each node indented under its parent, with class, version and size.",
        discussion: """
            Reads the newest generation of --archive (main by default), or --generation. \
            --format dot prints a Graphviz graph (render it with 'dot -Tsvg'). Opens the store \
            read-only; safe while the app is running.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, dot
    }

    @OptionGroup var options: StoreOptions

    @Option(name: .long, parsing: .unconditional, help: "A retained generation to read instead of the newest.")
    var generation: Int64?

    @Option(name: .long, help: "Output format: text, json or dot (Graphviz).")
    var format: Format = .text

    func run() throws {
        let store = try options.openReadOnly()
        let snapshot = options.snapshot(in: store, generation: generation, keepingDamagedNodes: true)
        switch format {
        case .text: print(Self.text(snapshot), terminator: "")
        case .json: print(try JSONOutput.render(TreeJSON(snapshot)))
        case .dot: print(Self.dot(snapshot), terminator: "")
        }
        // A damaged node is shown where it is, marked; then named on stderr (status 1).
        Diagnostics.failIfAny(Diagnostics.damagedNodes(in: snapshot))
    }

    static func text(_ snapshot: ArchiveSnapshot) -> String {
        var out = "Archive \(TerminalText.escaped(snapshot.header.archive.rawValue)), generation \(snapshot.header.generation)"
        out += " (\(snapshot.nodes.count) nodes, \(snapshot.header.totalBytes) bytes)\n"
        // Each node right after its parent. Nodes come sorted by the bytes of their paths, where
        // a sibling can come between a parent and its children (`Menu`, `Menu#2`, `Menu/Detail`:
        // "#" sorts before "/"), so indenting them in that order put `Detail` under `Menu#2`.
        // Siblings stay in that order; a node whose parent is not there (an orphan) starts a
        // tree of its own, at its own depth.
        let nodes = snapshot.nodes
        let present = Set(nodes.map(\.path))
        var children: [RestorationPath: [Int]] = [:]
        var tops: [Int] = []
        for index in nodes.indices {
            if let parent = nodes[index].parentPath, present.contains(parent) {
                children[parent, default: []].append(index)
            } else {
                tops.append(index)
            }
        }
        func write(_ index: Int) {
            let node = nodes[index]
            out += String(repeating: "  ", count: node.path.depth)
            out += "\(TerminalText.escaped(node.path.identifier))  \(TerminalText.escaped(node.className)) v\(node.classVersion)"
            out += ", \(node.state.count) bytes"
            out += snapshot.nodeDamage[node.path] != nil ? "  DAMAGED\n" : "\n"
            for child in children[node.path] ?? [] { write(child) }
        }
        for index in tops { write(index) }
        return out
    }

    static func dot(_ snapshot: ArchiveSnapshot) -> String {
        var out = "digraph \(dotString("\(snapshot.header.archive) generation \(snapshot.header.generation)")) {\n"
        out += "  node [shape=box, fontname=\"Helvetica\"];\n"
        for node in snapshot.nodes {
            let damaged = snapshot.nodeDamage[node.path] != nil ? "\nDAMAGED" : ""
            let label = "\(node.path.identifier)\n\(node.className) v\(node.classVersion), \(node.state.count) bytes\(damaged)"
            out += "  \(dotString(node.path.description)) [label=\(dotString(label))];\n"
            if let parent = node.parentPath {
                out += "  \(dotString(parent.description)) -> \(dotString(node.path.description));\n"
            }
        }
        return out + "}\n"
    }

    /// A DOT string: quoted, with quotes, backslashes and control characters escaped (a
    /// newline becomes a line break in the label).
    private static func dotString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out += TerminalText.escaped(String(scalar))
            }
        }
        return out + "\""
    }
}

/// `restorectl tree --format json`; documented in docs/cli.md.
struct TreeJSON: Encodable {
    struct Node: Encodable {
        let path: String
        let parent: String?
        let identifier: String
        let class_name: String
        let class_version: Int
        let order: Int
        let size: Int
        /// `true` for a node whose checksum does not match; left out otherwise.
        let damaged: Bool?
    }

    let archive: String
    let generation: Int64
    let nodes: [Node]

    init(_ snapshot: ArchiveSnapshot) {
        archive = snapshot.header.archive.rawValue
        generation = snapshot.header.generation.rawValue
        nodes = snapshot.nodes.map { node in
            Node(
                path: node.path.description, parent: node.parentPath?.description, identifier: node.path.identifier,
                class_name: node.className, class_version: node.classVersion, order: node.order, size: node.state.count,
                damaged: snapshot.nodeDamage[node.path] != nil ? true : nil)
        }
    }
}
