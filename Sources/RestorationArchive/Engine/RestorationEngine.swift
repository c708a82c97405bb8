public import Logging

/// Preserves a tree of ``Restorable`` objects into an ``ArchiveStore`` and restores it at the
/// next launch: UIKit's state preservation and restoration, for any Swift object.
///
/// ```swift
/// let store = try ArchiveStore(appIdentifier: "com.example.orders")
/// var registry = RestorationRegistry()
/// try registry.register(MenuItemDetail.self) { request in
///     MenuItemDetail(item: try request.coder.decode(MenuItem.self, forKey: "item"))
/// }
/// let engine = try RestorationEngine(
///     store: store, app: AppIdentity(version: "11.0", build: "1024"), registry: registry)
///
/// // At launch, once the app's normal start-up has built its root objects:
/// let restoration = try engine.restore([tabs])
/// logger.info("\(restoration.report.restoredCount) screens restored")
///
/// // Going to the background:
/// try engine.preserve([tabs])
/// ```
///
/// An engine is not thread-safe: use it from the thread or actor that owns the objects
/// (usually the main actor). Saves are incremental when only some objects changed: the
/// engine remembers the archive it last saved or restored and writes only the nodes whose
/// encoded bytes differ.
public final class RestorationEngine {
    /// Budgets and limits of an engine.
    public struct Configuration: Hashable, Sendable {
        /// The largest encoded state of one object, in bytes. A larger object is left out of
        /// the save (with its subtree) and reported; at restoration, a larger node is skipped.
        /// 1 MiB by default.
        public var maximumNodeBytes: Int
        /// The largest total encoded state of one archive, in bytes. Objects that would take the
        /// save over it are left out (with their subtrees) and reported. 16 MiB by default.
        public var maximumArchiveBytes: Int
        /// Limits applied when decoding each node's state. Set stricter than
        /// ``DecodingLimits/default`` (which bounds what the coder writes), they bound what a
        /// save writes too: an object whose state they would refuse is left out of the save
        /// with its subtree (``PreservationResult/Reason/exceedsDecodingLimits(_:)``), as its
        /// restoration would fail; each object's state is then read back once per save.
        public var decodingLimits: DecodingLimits

        /// A configuration with these budgets; each defaults to the value given above.
        public init(
            maximumNodeBytes: Int = 1 << 20, maximumArchiveBytes: Int = 16 << 20,
            decodingLimits: DecodingLimits = .default
        ) {
            self.maximumNodeBytes = maximumNodeBytes
            self.maximumArchiveBytes = maximumArchiveBytes
            self.decodingLimits = decodingLimits
        }
    }

    /// Writes app-level values into the header of the save about to happen, and may veto it (R5).
    public typealias SaveGate = (inout HeaderValues) -> SaveDecision
    /// Decides whether an archive header may be restored by this app (R5).
    public typealias RestoreGate = (ArchiveHeader, AppIdentity) -> RestoreDecision

    /// The store archives are saved to and restored from.
    public let store: ArchiveStore
    /// The running app, written into every header.
    public let app: AppIdentity
    /// The restoration classes and fallback.
    public let registry: RestorationRegistry
    /// Budgets and limits.
    public let configuration: Configuration
    /// Called before every save; by default it saves with no app values.
    public var saveGate: SaveGate = { _ in .save }
    /// Called before every restoration; ``RestoreDecision/standard(for:app:)`` by default.
    public var restoreGate: RestoreGate = RestoreDecision.standard(for:app:)

    let logger: Logger?
    /// The nodes of each archive's newest generation as this engine last saved or restored
    /// them: what an incremental save compares against.
    ///
    /// Kept as they came, and indexed by path only when a save compares against them: a
    /// launch restores, and the index would cost it a hash of every path, for a save that
    /// may never come.
    var lastKnown = KeyedList<ArchiveName, KnownGeneration>()

    /// An archive's newest generation as this engine last saved or restored it.
    struct KnownGeneration {
        let generation: Generation
        /// The generation's node digest: the store's generation of that number is this one
        /// only if its digest is this too (an erased store numbers its generations afresh).
        let nodeDigest: Int64
        let nodes: [ArchivedNode]
        /// Whether a preservation's walk found these paths unique (R2). A restored
        /// generation's paths are unique by their bytes, but not always as paths compare (a
        /// store written directly may hold an identifier in two Unicode forms), so they are not.
        let pathsAreChecked: Bool
    }

    /// Remembers `nodes` as the newest `generation` of `archive`, whose node digest is `nodeDigest`.
    func remember(
        _ nodes: [ArchivedNode], as generation: Generation, nodeDigest: Int64, of archive: ArchiveName,
        pathsAreChecked: Bool
    ) {
        lastKnown[archive] = KnownGeneration(
            generation: generation, nodeDigest: nodeDigest, nodes: nodes, pathsAreChecked: pathsAreChecked)
    }

    /// `nodes` by their path's text, as paths compare (the last of two nodes with one path
    /// wins). Not keyed by path: `RestorationObjects` says why.
    static func byPath(_ nodes: [ArchivedNode]) -> [String: ArchivedNode] {
        var byPath: [String: ArchivedNode] = [:]
        byPath.reserveCapacity(nodes.count)
        for index in nodes.indices { byPath[nodes[index].path.description] = nodes[index] }
        return byPath
    }

    /// - Parameters:
    ///   - store: the store to save into and restore from; restoring also records a report,
    ///     which a read-only store skips.
    ///   - app: the running app's version, build, platform and idiom.
    ///   - registry: the app's restoration classes and fallback.
    ///   - configuration: budgets and limits.
    ///   - logger: where diagnostics go (paths, class names, counts; never stored values).
    /// - Throws: ``RestorationError/invalidConfiguration(_:)`` for a budget below 1, or an
    ///   app version, build, platform or idiom longer than ``SaveHeader/maximumTextLength``
    ///   bytes (every save would refuse its header).
    public init(
        store: ArchiveStore, app: AppIdentity, registry: RestorationRegistry,
        configuration: Configuration = Configuration(), logger: Logger? = nil
    ) throws(RestorationError) {
        guard configuration.maximumNodeBytes >= 1, configuration.maximumArchiveBytes >= 1 else {
            throw .invalidConfiguration("budgets must be at least 1 byte")
        }
        let header = SaveHeader(appVersion: app.version, appBuild: app.build, platform: app.platform, idiom: app.idiom)
        if let problem = header.textTooLong(names: ["version", "build", "platform", "idiom"]) {
            throw .invalidConfiguration("the app identity's \(problem)")
        }
        self.store = store
        self.app = app
        self.registry = registry
        self.configuration = configuration
        self.logger = logger
    }
}
