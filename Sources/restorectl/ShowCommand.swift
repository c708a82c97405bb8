import ArgumentParser
import Foundation
import RestorationArchive

struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show one node: its class, version, checksum status and decoded values as a typed tree.",
        discussion: """
            PATH is a restoration path such as Tabs/MenuNavigation/MenuItemDetail ('/' inside an \
            identifier is written %2F, '%' is %25). Values are decoded without the app's code: \
            integers stay integers, floats stay floats, bytes are shown as bytes.
            """
    )

    @OptionGroup var options: StoreOptions
    @OptionGroup var output: FormatOptions

    @Argument(help: "The node's restoration path, e.g. Tabs/MenuNavigation/MenuItemDetail.")
    var path: String

    @Option(name: .long, parsing: .unconditional, help: "A retained generation to read instead of the newest.")
    var generation: Int64?

    func validate() throws {
        do {
            _ = try RestorationPath(parsing: path)
        } catch {
            throw ValidationError(TerminalText.escaped(error.description))
        }
    }

    func run() throws {
        let store = try options.openReadOnly()
        let archive = options.selectedArchive(in: store)
        let nodePath = try RestorationPath(parsing: path)
        let (node, damage) = read(nodePath, in: archive, from: store)
        let values: Result<[String: StateValue], StateCodingError>?
        do {
            values = damage == nil ? .success(try StateValue.decode(blob: node.state)) : nil
        } catch {
            values = .failure(error)
        }
        switch output.format {
        case .text:
            var out = "\(TerminalText.escaped(node.path.description))\n"
            out += "  class:     \(TerminalText.escaped(node.className)), version \(node.classVersion)\n"
            out += "  order:     \(node.order)\n"
            out += "  size:      \(node.state.count) bytes\n"
            out += "  checksum:  \(NodeJSON.checksumText(of: damage))\n"
            switch values {
            case .success(let root)?:
                out += "  state:\n" + StateRendering.text(root, indent: "    ")
            case .failure(let error)?:
                out += "  state:     cannot be decoded: \(TerminalText.escaped(error.description))\n"
            case nil:
                out += "  state:     not shown: it is not what was saved\n"
            }
            print(out, terminator: "")
        case .json:
            print(try JSONOutput.render(NodeJSON(node: node, values: values, damage: damage)))
        }
        if let damage { Diagnostics.fail(damage, exitCode: 1) }
        if case .failure? = values { throw ExitCode(1) }
    }
}

extension ShowCommand {
    /// The node at `path`, and the damage its checksum or (with a key) its seal shows, if any:
    /// what the store holds is shown then, but not its state, which is not what was saved.
    /// Exits with status 1 when the generation has no node at `path`, or on any other error.
    private func read(_ path: RestorationPath, in archive: ArchiveName, from store: ArchiveStore)
        -> (node: ArchivedNode, damage: ArchiveStoreError?)
    {
        do {
            if let found = try store.node(at: path, in: archive, generation: generation.map { Generation(rawValue: $0) }) {
                return (found, nil)
            }
        } catch .generationNotFound where generation == nil {
            StoreOptions.failRetainingNothing(archive, in: store)
        } catch {
            switch error {
            case .damagedNode, .sealRejected: break
            default: Diagnostics.fail(error, exitCode: 1)
            }
            let snapshot = options.snapshot(in: store, generation: generation, keepingDamagedNodes: true)
            guard let found = snapshot.nodes.first(where: { $0.path == path }) else { Diagnostics.fail(error, exitCode: 1) }
            return (found, error)
        }
        let generation = generation.map { " generation \($0)" } ?? ""
        Diagnostics.printError("Archive '\(archive)'\(generation) has no node at '\(path)'.")
        RestoreCtl.exit(withError: ExitCode(1))
    }
}

/// `restorectl show --format json`; documented in docs/cli.md.
struct NodeJSON: Encodable {
    let path: String
    let class_name: String
    let class_version: Int
    let order: Int
    let size: Int
    let checksum: String
    let state: [String: StateRendering.JSONValue]?
    let state_error: String?

    /// `values` is `nil` for a damaged node, whose state is not shown; `damage` says how it is
    /// damaged.
    init(node: ArchivedNode, values: Result<[String: StateValue], StateCodingError>?, damage: ArchiveStoreError?) {
        path = node.path.description
        class_name = node.className
        class_version = node.classVersion
        order = node.order
        size = node.state.count
        if case .damagedNode? = damage { checksum = "mismatch" } else { checksum = "ok" }
        switch values {
        case .success(let root)?:
            state = root.mapValues(StateRendering.JSONValue.init)
            state_error = nil
        case .failure(let error)?:
            state = nil
            state_error = error.description
        case nil:
            state = nil
            if case .sealRejected? = damage {
                state_error = "its state does not open under the store's key: the node is damaged"
            } else {
                state_error = "the node is damaged: its state is not what was saved"
            }
        }
    }

    /// `show`'s checksum line for a node with `damage` (`nil`: none).
    static func checksumText(of damage: ArchiveStoreError?) -> String {
        switch damage {
        case nil: "ok"
        case .sealRejected?: "ok, but its state does not open under the store's key: the node is damaged"
        default: "does not match: the node is damaged"
        }
    }
}
