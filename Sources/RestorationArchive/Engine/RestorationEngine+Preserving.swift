import Logging

extension RestorationEngine {
    /// Preserves the objects under `roots` as the archive's next generation.
    ///
    /// The save gate runs first and may veto. Then the tree is walked from the roots:
    /// objects without a restoration identifier are left out with everything below them
    /// (R1), each object encodes into its own coder (R3), and children are preserved under
    /// their container (R4). When few objects' encoded bytes changed since the generation
    /// this engine last saved or restored (the nodes written and removed are at most a third
    /// of the tree), only those are written; otherwise the archive is written in full, which
    /// then costs less (so it is after a restoration that found damaged nodes, which replaces
    /// them).
    ///
    /// An object that fails to encode, or is over budget, is left out with its subtree and
    /// listed in ``PreservationResult/leftOut``; the rest is saved.
    ///
    /// A preservation asked for in the middle of a restoration of the same archive (by the
    /// restore gate, an object's ``Restorable/decodeRestorableState(with:context:)`` or
    /// ``Restorable/restorationDidFinish()``) saves nothing: the objects not restored yet would
    /// be saved in their initial state, in place of the state they are about to get back. Nor
    /// does one asked for in the middle of a preservation of the same archive (by an object's
    /// ``Restorable/encodeRestorableState(with:)``, or the save gate): the preservation under
    /// way saves the tree. That holds whichever engine is asked, this one or another on the
    /// same store file, on the thread of the call under way; an engine on another thread is
    /// not in its middle. Such a result has no ``PreservationResult/save`` and says why in
    /// ``PreservationResult/vetoReason``; the save gate is not asked. Once
    /// ``restore(_:from:)`` has returned, saves go ahead, even while an extended restoration
    /// (``RestorationContext/extendRestoration()``) is still under way.
    ///
    /// - Parameters:
    ///   - roots: the top-level objects (windows, root screens), in any order.
    ///   - archive: the archive to save, ``ArchiveName/main`` by default; one per scene.
    /// - Throws: ``RestorationError/duplicatePath(_:firstClass:secondClass:)`` when two objects
    ///   have one path (R2; checked once the whole tree is walked, so every object has encoded
    ///   its state by then), ``RestorationError/store(_:)`` when the store fails. Nothing is
    ///   saved when it throws.
    @discardableResult
    public func preserve(_ roots: [any Restorable], in archive: ArchiveName = .main) throws(RestorationError)
        -> PreservationResult
    {
        let file = store.file
        if let work = ArchiveWork.underWay(on: archive, of: file) {
            logger?.warning("Save of archive '\(archive)' refused: \(work.refusal)")
            return .nothingSaved(because: work.refusal)
        }
        _ = ArchiveWork.begin(.preserving, on: archive, of: file)
        defer { ArchiveWork.end(on: archive, of: file, puttingBack: nil) }
        var appValues: HeaderValues = [:]
        if case .veto(let reason) = saveGate(&appValues) {
            logger?.info("Save of archive '\(archive)' vetoed by the save gate: \(reason)")
            return .nothingSaved(because: reason)
        }
        let known = lastKnown[archive]
        var walk = PreservationWalk(configuration: configuration, expectedCount: known?.nodes.count ?? 0)
        walk.visit(roots, under: nil, ordered: false)
        // One pass over the paths serves R2's check and the incremental save's comparison.
        let alignment = known.map { Self.alignment(of: walk.nodes, with: $0.nodes) }
        try walk.checkUniquePaths(sameAsChecked: known?.pathsAreChecked == true && alignment == .same)
        for item in walk.leftOut {
            logger?.warning(
                "Left out of archive '\(archive)': \(item.path?.description ?? "a root object") (\(item.className)): \(item.reason)")
        }
        let header = SaveHeader(
            appVersion: app.version, appBuild: app.build, platform: app.platform, idiom: app.idiom,
            appValues: appValues)
        let result = try save(walk.nodes, header: header, in: archive, known: known, alignment: alignment)
        remember(
            walk.nodes, as: result.save.generation, nodeDigest: result.nodeDigest, of: archive, pathsAreChecked: true)
        logger?.info(
            "Saved archive '\(archive)' generation \(result.save.generation) (\(result.save.kind.rawValue)): \(result.written) written, \(result.unchanged) unchanged, \(result.save.nodesRemoved) removed")
        return PreservationResult(
            save: result.save, vetoReason: nil, nodeCount: walk.nodes.count, nodesWritten: result.written,
            nodesUnchanged: result.unchanged, nodesRemoved: result.save.nodesRemoved, leftOut: walk.leftOut)
    }

    /// Writes `nodes` incrementally against the last `known` generation when few changed, in
    /// full otherwise (or when another writer saved in between, or the archive was damaged
    /// or erased since). `alignment` is how `nodes`'s paths line up with `known`'s.
    private func save(
        _ nodes: [ArchivedNode], header: SaveHeader, in archive: ArchiveName,
        known: KnownGeneration?, alignment: PathAlignment?
    ) throws(RestorationError) -> (save: SaveResult, nodeDigest: Int64, written: Int, unchanged: Int) {
        do {
            if let known, let alignment {
                switch Self.changes(from: known.nodes, to: nodes, alignment: alignment) {
                // Rewriting or retiring a row costs an incremental save about three times what
                // writing one costs a full save (measured at 1,000 and 10,000 nodes).
                case .changes(let changed, let removed, let removedNodes)
                where changed.count + removedNodes <= nodes.count / 3:
                    do {
                        // Known by its digest too: after an erase, another writer's
                        // generation may have the number this engine last saw.
                        let save = try store.saveChanges(
                            changed, removing: removed, basedOn: known.generation, nodeDigest: known.nodeDigest,
                            header: header, in: archive)
                        return (save.result, save.nodeDigest, changed.count, nodes.count - changed.count)
                    } catch .generationConflict, .generationNotFound, .archiveNotFound {
                        logger?.notice("Archive '\(archive)' changed since this engine last saw it; saving it in full")
                    } catch where error.isDamage {
                        // A full save reads nothing of the damaged generation, and replaces it.
                        logger?.warning("Archive '\(archive)' is damaged (\(error.description)); saving it in full")
                    }
                case .changes:
                    break
                case .anotherForm(let path):
                    // The store finds rows by their bytes: only a full save writes the new form.
                    logger?.notice("The path \(path) is in another Unicode form than archive '\(archive)' holds; saving it in full")
                }
            }
            let save = try store.saveInFull(nodes, header: header, in: archive)
            return (save.result, save.nodeDigest, nodes.count, 0)
        } catch {
            throw .store(error)
        }
    }
}

extension RestorationEngine {
    /// What an incremental save of a tree would write, as ``changes(from:to:)`` finds it.
    enum Changes: Equatable {
        /// The nodes added or changed, and the topmost paths no longer there (removing a path
        /// removes its subtree), with the number of nodes they remove. Paths are unique in
        /// each list.
        case changes(changed: [ArchivedNode], removed: [RestorationPath], removedNodes: Int)
        /// A path of the tree is one of the known generation (equal as paths compare) in other
        /// bytes, another Unicode form of an identifier: the store finds a row by its bytes,
        /// so only a full save writes the new form.
        case anotherForm(RestorationPath)
    }

    /// How a tree's paths line up with the known generation's, position by position.
    enum PathAlignment: Equatable {
        /// The same paths in the same order, in the same bytes: an app backgrounded again with
        /// the same screens, the common case.
        case same
        /// At the first position whose bytes differ, a path equal to the known one as paths
        /// compare (another Unicode form of an identifier).
        case anotherForm(RestorationPath)
        /// Other paths, or the same ones in another order.
        case different
    }

    /// How the paths of `nodes` line up with those of `known`, compared by their bytes (as
    /// `String` equality does first itself).
    static func alignment(of nodes: [ArchivedNode], with known: [ArchivedNode]) -> PathAlignment {
        guard known.count == nodes.count else { return .different }
        for index in nodes.indices where !nodes[index].path.hasSameBytes(as: known[index].path) {
            return nodes[index].path == known[index].path ? .anotherForm(nodes[index].path) : .different
        }
        return .same
    }

    /// The nodes of `nodes` added or changed since `known`, and the topmost paths of `known`
    /// no longer there; or the first path of `nodes` that `known` holds in other bytes.
    static func changes(from known: [ArchivedNode], to nodes: [ArchivedNode]) -> Changes {
        changes(from: known, to: nodes, alignment: alignment(of: nodes, with: known))
    }

    /// ``changes(from:to:)`` for paths whose ``PathAlignment`` is known. Aligned paths are
    /// compared pairwise, the rest of each node only; otherwise nodes are matched by path,
    /// four path hashes a node, and a path found in other bytes is another form.
    static func changes(from known: [ArchivedNode], to nodes: [ArchivedNode], alignment: PathAlignment) -> Changes {
        switch alignment {
        case .same:
            var changed: [ArchivedNode] = []
            for index in nodes.indices where !nodes[index].hasSameContent(as: known[index]) {
                changed.append(nodes[index])
            }
            return .changes(changed: changed, removed: [], removedNodes: 0)
        case .anotherForm(let path):
            return .anotherForm(path)
        case .different:
            break
        }
        let knownNodes = byPath(known)
        var changed: [ArchivedNode] = []
        var kept = 0
        for node in nodes {
            guard let knownNode = knownNodes[node.path.description] else {
                changed.append(node)
                continue
            }
            kept += 1
            guard node.path.hasSameBytes(as: knownNode.path) else { return .anotherForm(node.path) }
            if !knownNode.hasSameContent(as: node) { changed.append(node) }
        }
        let present = Set(nodes.lazy.map(\.path.description))
        // The topmost paths gone, each once, in the form `known` gave it first.
        var removed: [RestorationPath] = []
        var listed = Set<String>()
        for node in known where !present.contains(node.path.description) {
            if let parent = node.path.parent, knownNodes[parent.description] != nil, !present.contains(parent.description) {
                continue
            }
            if listed.insert(node.path.description).inserted { removed.append(node.path) }
        }
        return .changes(changed: changed, removed: removed, removedNodes: knownNodes.count - kept)
    }
}

/// The preservation walk: unique paths (R2), one coder per object (R3), budgets.
struct PreservationWalk {
    let configuration: RestorationEngine.Configuration
    private(set) var nodes: [ArchivedNode] = []
    private(set) var leftOut: [PreservationResult.LeftOut] = []
    /// The objects left out after they got a path, each with its class name and the number of
    /// nodes saved before it: their paths count for R2 as the saved nodes' do.
    private var leftOutWithPaths: [(before: Int, path: RestorationPath, className: String)] = []
    private var totalBytes = 0
    /// The objects above the one being visited, topmost first.
    private var ancestors: [ObjectIdentifier] = []
    /// The engine's decoding limits when some are stricter than the coder's own, which every
    /// blob it encodes stays within: each object's state is then read back under them before
    /// it is saved, so that no save holds state its restoration would refuse.
    private let readBackLimits: DecodingLimits?

    /// - Parameter expectedCount: the nodes the walk will likely find (the last generation's
    ///   count): its list is sized for them.
    init(configuration: RestorationEngine.Configuration, expectedCount: Int = 0) {
        self.configuration = configuration
        readBackLimits = configuration.decodingLimits.admitsEveryEncodedBlob ? nil : configuration.decodingLimits
        nodes.reserveCapacity(expectedCount)
    }

    /// R2 once the walk is done: the first path given twice, in the order the walk gave them
    /// (saved objects and objects left out alike; paths compare as `String`s, so two Unicode
    /// forms of one identifier are one path), throws
    /// ``RestorationError/duplicatePath(_:firstClass:secondClass:)`` naming both classes.
    ///
    /// `sameAsChecked`: the walk saved exactly the paths this check passed at the engine's
    /// last preservation, in the same order and bytes. When it also left no object with a path
    /// out, these paths are unique too and none is hashed: an app backgrounded again with the
    /// same screens, where hashing every path cost about 570 instructions a node (a
    /// preservation is about 8,000).
    func checkUniquePaths(sameAsChecked: Bool) throws(RestorationError) {
        if sameAsChecked && leftOutWithPaths.isEmpty { return }
        // By the path's text, as paths compare (`RestorationObjects` says why not by path).
        var classes: [String: String] = [:]
        classes.reserveCapacity(nodes.count + leftOutWithPaths.count)
        func enter(_ path: RestorationPath, _ className: String) throws(RestorationError) {
            if let first = classes.updateValue(className, forKey: path.description) {
                throw .duplicatePath(path, firstClass: first, secondClass: className)
            }
        }
        var pending = leftOutWithPaths[...]
        for node in nodes.indices {
            while let next = pending.first, next.before == node {
                try enter(next.path, next.className)
                pending.removeFirst()
            }
            try enter(nodes[node].path, nodes[node].className)
        }
        for next in pending { try enter(next.path, next.className) }
    }

    /// Preserves `objects`, the children of the object at `parent` (the roots when `nil`).
    /// Paths are checked for R2 afterwards, by ``checkUniquePaths(checkedBefore:)``.
    mutating func visit(_ objects: [any Restorable], under parent: RestorationPath?, ordered: Bool) {
        var position = 0
        for (object, assigned) in ChildPaths.assign(objects, under: parent, ordered: ordered) {
            let className = type(of: object).restorationClassName
            let path: RestorationPath
            switch assigned {
            case .path(let value): path = value
            case .unusable(let error):
                leftOut.append(.init(path: parent, className: className, reason: .invalid(error.description)))
                continue
            }
            if let problem = ArchivedNode.problem(withClassName: className) {
                leaveOut(path, className, .invalid(problem))
                continue
            }
            // Children that lead back to an ancestor would be walked again under longer
            // paths, once per way down: without end, as two children back to one parent
            // double the paths at each level.
            let identity = ObjectIdentifier(object)
            if ancestors.contains(identity) {
                leaveOut(path, className, .invalid(Self.ownAncestor))
                continue
            }
            let state: [UInt8]
            do {
                let coder = StateEncoder()
                try object.encodeRestorableState(with: coder)
                state = try coder.encodedBlob()
            } catch {
                leaveOut(path, className, .encodeFailed(String(describing: error)))
                continue
            }
            if state.count > configuration.maximumNodeBytes {
                leaveOut(path, className, .overBudget(bytes: state.count, budget: configuration.maximumNodeBytes))
                continue
            }
            if let limits = readBackLimits {
                do {
                    _ = try StateDecoder(blob: state, limits: limits)
                } catch {
                    leaveOut(path, className, .exceedsDecodingLimits(error.description))
                    continue
                }
            }
            if totalBytes + state.count > configuration.maximumArchiveBytes {
                leaveOut(
                    path, className,
                    .overBudget(bytes: totalBytes + state.count, budget: configuration.maximumArchiveBytes))
                continue
            }
            totalBytes += state.count
            nodes.append(
                ArchivedNode(
                    path: path, className: className, classVersion: type(of: object).restorationClassVersion,
                    order: ordered ? position : 0, state: state))
            position += 1
            ancestors.append(identity)
            visit(object.restorationChildren, under: path, ordered: object.restorationChildrenAreOrdered)
            ancestors.removeLast()
        }
    }

    /// Why an object among its own ancestors is left out.
    static let ownAncestor = "it is among its own ancestors: restorationChildren lead back to it"

    /// Leaves out an object that has a path, and its subtree.
    private mutating func leaveOut(_ path: RestorationPath, _ className: String, _ reason: PreservationResult.Reason) {
        leftOut.append(.init(path: path, className: className, reason: reason))
        leftOutWithPaths.append((nodes.count, path, className))
    }
}
