import RestorationArchive

/// A restorable screen holding one `ScreenState`, for the engine operations.
final class BenchScreen: Restorable {
    static let restorationClassName = "Screen"
    let restorationIdentifier: String?
    var state: ScreenState
    var children: [BenchScreen] = []

    init(identifier: String, state: ScreenState) {
        self.restorationIdentifier = identifier
        self.state = state
    }

    var restorationChildren: [any Restorable] { children }

    func encodeRestorableState(with coder: StateEncoder) throws { try state.encode(into: coder) }

    func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        state = try ScreenState.decode(from: coder)
        children = context.children.compactMap { $0 as? BenchScreen }
    }

    /// The tree of screens at `paths` (parents before children), returning its roots.
    static func tree(paths: [RestorationPath], states: [ScreenState]) -> [BenchScreen] {
        var byPath: [RestorationPath: BenchScreen] = [:]
        var roots: [BenchScreen] = []
        for (path, state) in zip(paths, states) {
            let screen = BenchScreen(identifier: path.identifier, state: state)
            byPath[path] = screen
            if let parent = path.parent, let owner = byPath[parent] { owner.children.append(screen) } else { roots.append(screen) }
        }
        return roots
    }
}

/// A registry whose restoration class recreates every screen.
func benchRegistry() throws -> RestorationRegistry {
    var registry = RestorationRegistry()
    try registry.register(BenchScreen.self) { request in
        // Created empty: its state is decoded once, by decodeRestorableState, as the floor
        // decodes each screen once.
        BenchScreen(identifier: request.path.identifier, state: .placeholder)
    }
    return registry
}

/// An engine over `store` with `benchRegistry()`, its archive budget raised for the biggest
/// archives: the default 16 MiB holds about 59,000 of these states, and `--full`'s archives
/// of 100,000 nodes (28 MB) would otherwise be saved in part, as the budget says. The budget
/// is one comparison a save; the smaller archives run as with the default.
func benchEngine(store: ArchiveStore, app: AppIdentity) throws -> RestorationEngine {
    try RestorationEngine(
        store: store, app: app, registry: try benchRegistry(),
        configuration: RestorationEngine.Configuration(maximumArchiveBytes: 64 << 20))
}
