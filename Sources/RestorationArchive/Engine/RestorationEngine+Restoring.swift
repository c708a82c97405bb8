#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// The objects one restoration produced, and its report.
public struct RestorationResult {
    /// What happened to each node; also kept by the store.
    public let report: RestoreReport
    /// Every restored object, by path.
    ///
    /// Made the first time it is asked for (and kept): ``object(at:)`` and ``roots`` do
    /// not need it.
    public var objects: [RestorationPath: any Restorable] { restored.byPath }
    let restored: RestorationObjects
    let progress: RestorationProgress?

    /// Whether restoration is over: every node decoded and every extension an object asked
    /// for (``RestorationContext/extendRestoration()``) completed (R10). Until then the
    /// generation's crash marker stays in the store.
    public var isComplete: Bool { progress?.isComplete ?? true }

    /// The restored object at `path`, or `nil`.
    public func object(at path: RestorationPath) -> (any Restorable)? { restored.byText[path.description] }

    /// The restored top-level objects, in path order.
    public var roots: [any Restorable] {
        restored.list(where: { $0.depth == 1 }).sorted { $0.path < $1.path }.map(\.object)
    }
}

/// The objects a restoration produced, by their path's text.
///
/// Not a dictionary keyed by ``RestorationPath`` until ``RestorationResult/objects`` is asked
/// for: the first such dictionary a process made had the runtime look up `RestorationPath`'s
/// conformance to `Hashable`, a scan of every conformance record of every loaded image (about
/// 390,000 instructions at an app's first launch; BENCHMARKS.md, "Cold launches"). Paths are
/// equal, and hash, as their texts do, so a dictionary keyed by the text finds the same objects.
final class RestorationObjects {
    /// Each restored object by its path's text.
    let byText: [String: any Restorable]
    /// The report's nodes: the restored ones name the paths of `byText`.
    private let nodes: [RestoreReport.Node]

    init(byText: [String: any Restorable], nodes: [RestoreReport.Node]) {
        self.byText = byText
        self.nodes = nodes
    }

    /// The restored objects whose path passes `isIncluded`, with their paths, in the report's
    /// order. A path given twice (in two Unicode forms, by a store written directly) is listed
    /// once, in its first form, as `byText` holds one object for both.
    func list(where isIncluded: (RestorationPath) -> Bool) -> [(path: RestorationPath, object: any Restorable)] {
        var list: [(path: RestorationPath, object: any Restorable)] = []
        var listed = Set<String>()
        for node in nodes where isIncluded(node.path) {
            guard case .restored = node.outcome, let object = byText[node.path.description],
                listed.insert(node.path.description).inserted
            else { continue }
            list.append((node.path, object))
        }
        return list
    }

    /// Each restored object by path.
    private(set) lazy var byPath: [RestorationPath: any Restorable] =
        Dictionary(list(where: { _ in true }), uniquingKeysWith: { first, _ in first })
}

extension RestorationEngine {
    /// Restores the newest generation of an archive into objects.
    ///
    /// The restore gate decides first (R5). Then, parents first, each node gets its object
    /// (R6): the restoration class registered for its class name creates it (or declines),
    /// else the registry's fallback, else the object already at that path under `roots`.
    /// An object of another class is not used (R7); a node archived by a newer class version
    /// is skipped and an older one is migrated (R12). Then every object decodes its state,
    /// parents before children, and finally each is told that restoration finished (R8).
    ///
    /// Nothing about a single node throws: the report says, for every node, whether it was
    /// restored, skipped or failed, and why. The report is also recorded in the store.
    ///
    /// Until it returns, a save of this archive asked for by the restore gate or by an object
    /// (``preserve(_:in:)``, of this engine or another on the same store file) saves nothing:
    /// the objects not restored yet would be saved in their initial state.
    ///
    /// - Parameters:
    ///   - roots: the objects the app's normal start-up made (a window, a tab bar); objects
    ///     under them are found by path.
    ///   - archive: the archive to restore, ``ArchiveName/main`` by default.
    /// - Returns: the restored objects and the report. When there is nothing to restore, or
    ///   the gate refuses, no object is touched and the report says so.
    /// - Throws: nothing for a refused archive, nor for damage, to the archive or to the store's
    ///   file (the report says the restoration failed, and why; a save that meets damage to
    ///   the file throws the store's error, whose ``RestorationError/isUnusableStore`` says
    ///   to erase it); only ``RestorationError/store(_:)`` for a store that cannot be read
    ///   now (busy past its timeout, an I/O error, its file moved).
    public func restore(_ roots: [any Restorable], from archive: ArchiveName = .main) throws(RestorationError)
        -> RestorationResult
    {
        // A save of the archive asked for before this returns (by the restore gate, or an
        // object as it is restored) would save objects not restored yet: it is refused.
        let outerWork = ArchiveWork.begin(.restoring, on: archive, of: store.file)
        defer { ArchiveWork.end(on: archive, of: store.file, puttingBack: outerWork) }
        // To the millisecond, as the store keeps every time: a report and the journal's entries
        // of its launch are then in order when merged by date.
        let started = Clock.date(milliseconds: Clock.nowMilliseconds())
        func ended(_ outcome: RestoreReport.Outcome, generation: Generation?) -> RestorationResult {
            let report = RestoreReport(archive: archive, generation: generation, date: started, outcome: outcome, nodes: [])
            if outcome != .nothingToRestore { record(report) }
            return RestorationResult(report: report, restored: RestorationObjects(byText: [:], nodes: []), progress: nil)
        }
        let snapshot: ArchiveStore.RestorationSnapshot
        do {
            // R11: what an earlier launch left is dealt with before anything is decoded.
            let prepared = try store.prepareRestoration(of: archive)
            guard let read = prepared.snapshot else {
                if let refusal = prepared.refusal {
                    logger?.notice("Archive '\(archive)' not restored: \(refusal)")
                    return ended(.refused(reason: refusal), generation: nil)
                }
                logger?.info("Archive '\(archive)' has nothing to restore")
                return ended(.nothingToRestore, generation: nil)
            }
            snapshot = read
        } catch let error {
            switch error {
            case .damagedArchive, .damagedNode, .damagedStore:
                logger?.error("Archive '\(archive)' cannot be restored: \(error.description)")
                return ended(.failed(reason: error.description), generation: nil)
            default:
                throw .store(error)
            }
        }
        let header = snapshot.header
        if case .refuse(let reason) = restoreGate(header, app) {
            logger?.notice("Archive '\(archive)' generation \(header.generation) not restored: \(reason)")
            return ended(.refused(reason: reason), generation: header.generation)
        }

        // The crash marker is committed before the first node is decoded (R11).
        var token: UInt64?
        if store.mode == .readWrite {
            let start: ArchiveStore.RestorationStart
            do {
                start = try store.beginRestoration(
                    of: archive, generation: header.generation, nodeDigest: snapshot.nodeDigest)
            } catch {
                throw .store(error)
            }
            switch start {
            case .began(let began):
                token = began
            case .refused(let refusal):
                // Another thread or process began restoring the archive since it was prepared.
                logger?.notice("Archive '\(archive)' not restored: \(refusal)")
                return ended(.refused(reason: refusal), generation: nil)
            }
        }
        let progress = RestorationProgress(
            store: store, archive: archive, generation: header.generation, nodeDigest: snapshot.nodeDigest,
            token: token, logger: logger)
        var walk = RestorationWalk(
            registry: registry, configuration: configuration, header: header, existing: Self.existingObjects(roots),
            progress: progress)
        walk.run(snapshot.nodes, damaged: snapshot.damage)
        let report = RestoreReport(
            archive: archive, generation: header.generation, date: started, outcome: .restored, nodes: walk.report)
        for node in report.notRestored {
            logger?.notice("Not restored: \(node.path) (\(node.className)): \(node.outcome)")
        }
        logger?.info(
            "Restored archive '\(archive)' generation \(header.generation): \(report.restoredCount) of \(report.nodes.count) nodes")
        // The marker goes (and the report is kept) once every extension is complete too (R10).
        progress.walkEnded(with: report)
        if snapshot.damage.isEmpty {
            remember(
                snapshot.nodes, as: header.generation, nodeDigest: snapshot.nodeDigest, of: archive,
                pathsAreChecked: false)
        } else {
            // A damaged node may read as what the app encodes there now (the damage was to
            // another part of its row): compared against it, it would be kept, and fail its
            // checksum at every launch. The next save is a full one, which replaces it.
            lastKnown[archive] = nil
        }
        // The result holds the objects from now on: a context its object keeps (to extend
        // restoration later) would otherwise hold every restored object, that one included,
        // and the store, for as long as the process runs.
        let objects = RestorationObjects(byText: walk.shared.objects, nodes: report.nodes)
        walk.shared.objects = [:]
        return RestorationResult(report: report, restored: objects, progress: progress)
    }

    /// Keeps the report in the store; a failure to do so never fails the restoration.
    private func record(_ report: RestoreReport) {
        guard store.mode == .readWrite else { return }
        do {
            try store.recordRestoreReport(report)
        } catch {
            logger?.error("The restore report of archive '\(report.archive)' was not recorded: \(error.description)")
        }
    }

    /// The objects the app's start-up made, by the text of the paths preservation would give
    /// them (as ``RestorationObjects`` keeps them). An object among its own ancestors is not
    /// found again below itself, as preservation leaves it out there.
    static func existingObjects(_ roots: [any Restorable]) -> [String: any Restorable] {
        var found: [String: any Restorable] = [:]
        var ancestors: [ObjectIdentifier] = []
        func visit(_ objects: [any Restorable], under parent: RestorationPath?, ordered: Bool) {
            for (object, assigned) in ChildPaths.assign(objects, under: parent, ordered: ordered) {
                let identity = ObjectIdentifier(object)
                guard case .path(let path) = assigned, found[path.description] == nil, !ancestors.contains(identity)
                else { continue }
                found[path.description] = object
                ancestors.append(identity)
                visit(object.restorationChildren, under: path, ordered: object.restorationChildrenAreOrdered)
                ancestors.removeLast()
            }
        }
        visit(roots, under: nil, ordered: false)
        return found
    }
}

/// The paths of a container's children: identifier-less children are left out (R1), and a
/// repeated identifier in an ordered container is told apart by its rank (R2).
enum ChildPaths {
    /// A child's path, or why its identifier makes none.
    ///
    /// Not a `Result`: the first `Result<RestorationPath, ArchiveStoreError>` a process made
    /// had the runtime look up `ArchiveStoreError`'s conformance to `Error`, a scan of every
    /// conformance record of every loaded image (about 270,000 instructions at an app's first
    /// launch; BENCHMARKS.md, "Cold launches"). A type of its own requires nothing.
    enum Assigned {
        case path(RestorationPath)
        case unusable(ArchiveStoreError)
    }

    static func assign(_ objects: [any Restorable], under parent: RestorationPath?, ordered: Bool)
        -> [(object: any Restorable, path: Assigned)]
    {
        // The rank each repeated identifier had last.
        var occurrences: [String: Int] = [:]
        // Every child's identifier, gathered at the first repeat: a rank whose component is
        // one of them (a child named `Page#2` beside two named `Page`) is passed over, or two
        // children would have one path and the whole save would be refused (R2).
        var identifiers: Set<String>?
        var assigned: [(object: any Restorable, path: Assigned)] = []
        assigned.reserveCapacity(objects.count)
        for object in objects {
            guard let identifier = object.restorationIdentifier else { continue }
            var component = identifier
            if ordered, let last = occurrences.updateValue(1, forKey: identifier) {
                let taken = identifiers ?? Set(objects.lazy.compactMap(\.restorationIdentifier))
                identifiers = taken
                var rank = last + 1
                while taken.contains(identifier + "#\(rank)") { rank += 1 }
                occurrences[identifier] = rank
                component += "#\(rank)"
            }
            do throws(ArchiveStoreError) {
                let path = if let parent { try parent.appending(component) } else { try RestorationPath(component) }
                assigned.append((object, .path(path)))
            } catch {
                assigned.append((object, .unusable(error)))
            }
        }
        return assigned
    }
}

/// One restoration: lookup (R6, R7, R12), then decoding (R8), then the finished calls.
struct RestorationWalk {
    let registry: RestorationRegistry
    let configuration: RestorationEngine.Configuration
    /// The objects the app's start-up made, by their path's text.
    let existing: [String: any Restorable]
    /// The header, the objects restored so far and the progress, shared with every context.
    let shared: RestorationContext.Shared
    private(set) var report: [RestoreReport.Node] = []

    init(
        registry: RestorationRegistry, configuration: RestorationEngine.Configuration, header: ArchiveHeader,
        existing: [String: any Restorable], progress: RestorationProgress
    ) {
        self.registry = registry
        self.configuration = configuration
        self.existing = existing
        self.shared = RestorationContext.Shared(header: header, progress: progress)
    }

    /// An object found for a node, waiting to decode its state.
    private struct Found {
        let node: ArchivedNode
        /// Where the parent's object is in the list of objects found; nil for a root.
        let parentIndex: Int?
        let reportIndex: Int
        let object: any Restorable
        let coder: StateDecoder
    }

    /// Restores `nodes`, sorted by path. Objects refer to their parent by its place in the
    /// list of objects found, so each node's path is hashed once (entered in the objects the
    /// contexts look up), not at every step.
    mutating func run(_ nodes: [ArchivedNode], damaged: [RestorationPath: ArchiveStoreError]) {
        // Phase 1, parents first (sorted paths put a parent before its children): find or
        // create every object.
        var found: [Found] = []
        var parents = FoundParents(nodes)
        var registrations = LastRegistration()
        found.reserveCapacity(nodes.count)
        report.reserveCapacity(nodes.count)
        shared.objects.reserveCapacity(nodes.count)
        for node in nodes {
            report.append(.init(path: node.path, className: node.className, classVersion: node.classVersion, outcome: .restored))
            var parentIndex: Int?
            switch parents.parent(of: node.path) {
            case .root: break
            case .found(let index): parentIndex = index
            case .missing:
                report[report.count - 1].outcome = .skipped(.parentNotRestored)
                continue
            }
            let registration = registrations.registration(for: node.className, in: registry)
            switch lookUp(node, registration: registration, damaged: !damaged.isEmpty && damaged[node.path] != nil) {
            case .success(let (object, coder)):
                shared.objects[node.path.description] = object
                parents.found(node.path, at: found.count)
                found.append(
                    Found(node: node, parentIndex: parentIndex, reportIndex: report.count - 1, object: object, coder: coder))
            case .failure(let outcome):
                report[report.count - 1].outcome = outcome.value
            }
        }

        // Phase 2, parents first: decode. A container sees its children, already created (R4).
        // Fields are read in place: a `Found` is a few hundred bytes and six references, and a
        // copy of it per node per loop cost more than the loop's own work.
        var children = [[(order: Int, object: any Restorable)]](repeating: [], count: found.count)
        for index in found.indices {
            if let parent = found[index].parentIndex {
                children[parent].append((found[index].node.order, found[index].object))
            }
        }
        var decoded = [Bool](repeating: false, count: found.count)
        for index in found.indices {
            if let parent = found[index].parentIndex, !decoded[parent] {
                shared.objects[found[index].node.path.description] = nil
                report[found[index].reportIndex].outcome = .skipped(.parentNotRestored)
                continue
            }
            let context = RestorationContext(
                path: found[index].node.path, archivedClassVersion: found[index].node.classVersion,
                children: Self.inOrder(children[index]), shared: shared)
            do {
                try found[index].object.decodeRestorableState(with: found[index].coder, context: context)
                decoded[index] = true
            } catch {
                shared.objects[found[index].node.path.description] = nil
                report[found[index].reportIndex].outcome = .failed(.decodeFailed(String(describing: error)))
            }
        }

        // Phase 3: every object has its state; tell each that restoration finished (R8).
        for index in found.indices where decoded[index] {
            found[index].object.restorationDidFinish()
        }
    }

    /// A container's children in their archived order (a stable sort: equal orders keep the
    /// order of their paths). Most objects have none: sorting and mapping an empty array cost
    /// about 270 instructions a node.
    private static func inOrder(_ children: [(order: Int, object: any Restorable)]) -> [any Restorable] {
        switch children.count {
        case 0: return []
        case 1: return [children[0].object]
        default: return children.sorted { $0.order < $1.order }.map(\.object)
        }
    }

    /// The objects found so far, each by its place in the list of objects found, for the
    /// nodes below to find their parent's. On a ``PathPrefixStack`` when the paths are ASCII and
    /// in ascending byte order (as the store reads them), without hashing a path; otherwise
    /// in a dictionary, where paths are equal as `String`s are.
    private struct FoundParents {
        private var ancestors = PathPrefixStack<Int>()
        /// By the path's text (``RestorationObjects`` says why not by path).
        private var byPath: [String: Int]?

        init(_ nodes: [ArchivedNode]) {
            var byBytes = true
            for index in nodes.indices where byBytes {
                byBytes = UTF8Text.withBytes(of: nodes[index].path.description) { path in
                    guard UTF8Text.isASCII(path) else { return false }
                    guard index > 0 else { return true }
                    return UTF8Text.withBytes(of: nodes[index - 1].path.description) { previous in
                        BlobScanner.order(previous, 0, previous.count, path, 0, path.count) < 0
                    }
                }
            }
            if !byBytes {
                byPath = [:]
                byPath?.reserveCapacity(nodes.count)
            }
        }

        /// The parent of `path`, the next node's (nodes come in the order given to `init`).
        mutating func parent(of path: RestorationPath) -> PathPrefixStack<Int>.Parent {
            if let byPath {
                guard let parent = path.parent else { return .root }
                return byPath[parent.description].map { .found($0) } ?? .missing
            }
            return UTF8Text.withBytes(of: path.description) { ancestors.parent(of: $0) }
        }

        /// Records that the node last given to ``parent(of:)`` has an object, at `index`.
        mutating func found(_ path: RestorationPath, at index: Int) {
            if byPath != nil {
                byPath?[path.description] = index
            } else {
                UTF8Text.withBytes(of: path.description) { ancestors.push($0, index) }
            }
        }
    }

    /// The registration of the class name looked up last. A node's class name is most often
    /// the one before it (the store reads both into one string, which compares at once), where a
    /// lookup in the registry hashes the name: about 500 instructions a node.
    private struct LastRegistration {
        private var last: (className: String, registration: RestorationRegistry.Registration?)?

        mutating func registration(for className: String, in registry: RestorationRegistry)
            -> RestorationRegistry.Registration?
        {
            if let last, last.className == className { return last.registration }
            let registration = registry.registration(for: className)
            last = (className, registration)
            return registration
        }
    }

    /// A node's outcome when it gets no object.
    private struct NotRestored: Error {
        let value: RestoreReport.NodeOutcome
        static func skipped(_ reason: RestoreReport.Reason) -> NotRestored { NotRestored(value: .skipped(reason)) }
        static func failed(_ reason: RestoreReport.Reason) -> NotRestored { NotRestored(value: .failed(reason)) }
    }

    /// Finds or creates the object for one node whose parent has one (R6), checks its class
    /// (R7) and version (R12). `registration` is the registry's for the node's class name.
    private func lookUp(_ node: ArchivedNode, registration: RestorationRegistry.Registration?, damaged: Bool)
        -> Result<(any Restorable, StateDecoder), NotRestored>
    {
        Result { () throws(NotRestored) -> (any Restorable, StateDecoder) in
            if damaged { throw .failed(.checksumMismatch) }
            guard node.state.count <= configuration.maximumNodeBytes else {
                throw .skipped(.overBudget(bytes: node.state.count, budget: configuration.maximumNodeBytes))
            }
            // One coder, changed only by a migration: a `StateDecoder` is about 180 bytes and two
            // references, and a copy of it is a copy of those (a launch made six a node, now four).
            var coder: StateDecoder
            do throws(StateCodingError) {
                coder = try StateDecoder(blob: node.state, limits: configuration.decodingLimits)
            } catch .checksumMismatch {
                throw .failed(.checksumMismatch)
            } catch {
                throw .failed(.decodeFailed(error.description))
            }

            // A known class: check the version and migrate before anyone reads the state.
            if let registration {
                try migrate(node, &coder, to: registration.type)
            }
            let request = RestorationRequest(
                path: node.path, className: node.className, classVersion: node.classVersion, coder: coder)

            // R6 (1): the restoration class creates it, or declines, and nothing else is tried.
            if let restore = registration?.restore {
                let object: (any Restorable)?
                do { object = try restore(request) } catch { throw .failed(.decodeFailed(String(describing: error))) }
                guard let object else { throw .skipped(.declined) }
                return (object, coder)
            }
            // R6 (2) the app's fallback, then (3) an existing object, unless its type has a
            // restoration class: those are never found implicitly.
            var object: (any Restorable)?
            do { object = try registry.fallback?(request) } catch {
                throw .failed(.decodeFailed(String(describing: error)))
            }
            if object == nil, let candidate = existing[node.path.description], !registry.hasRestorationClass(candidate) {
                object = candidate
            }
            guard let object else { throw .skipped(.noRestorationClass) }
            // R7: state archived for one class never goes into an object of another.
            guard registry.object(object, matches: node.className) else {
                throw .skipped(.classMismatch(found: type(of: object).restorationClassName))
            }
            if registration == nil {
                try migrate(node, &coder, to: type(of: object))
            }
            return (object, coder)
        }
    }

    /// Brings `coder`, the node's state, to `type`'s current version (R12): as is, migrated, or
    /// skipped when newer.
    private func migrate(_ node: ArchivedNode, _ coder: inout StateDecoder, to type: any Restorable.Type)
        throws(NotRestored)
    {
        let current = type.restorationClassVersion
        if node.classVersion > current { throw .skipped(.versionTooNew(supported: current)) }
        guard node.classVersion < current else { return }
        do {
            var state = try StateValue.decode(blob: node.state, limits: configuration.decodingLimits)
            try type.migrateRestorableState(&state, from: node.classVersion)
            coder = try StateDecoder(blob: try StateValue.encode(state), limits: configuration.decodingLimits)
        } catch {
            throw .failed(.decodeFailed("migrating from class version \(node.classVersion): \(error)"))
        }
    }
}
