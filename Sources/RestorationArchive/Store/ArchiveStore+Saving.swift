import Logging

extension ArchiveStore {
    /// Saves a complete archive as its next generation.
    ///
    /// Every node is written. The save is atomic: readers see the previous generation or this
    /// one, never a mix. Generations older than ``Configuration/retainedGenerations`` are pruned
    /// in the same transaction. Saving a discarded archive makes it valid again.
    ///
    /// - Parameters:
    ///   - nodes: every node of the archive, in any order. Paths must be unique, and every
    ///     node's parent must be among them.
    ///   - header: the app's version, platform and app-level values for this generation.
    ///   - archive: the archive to save; created if it does not exist.
    /// - Returns: the new generation and what was written.
    /// - Throws: ``ArchiveStoreError/duplicatePath(_:firstClass:secondClass:)``,
    ///   ``ArchiveStoreError/missingParent(_:)``, ``ArchiveStoreError/invalidHeaderValue(_:)``
    ///   (a text longer than ``SaveHeader/maximumTextLength``, app values over their
    ///   limits), ``ArchiveStoreError/readOnly``,
    ///   ``ArchiveStoreError/storeFileMoved(path:)`` (the file, its write-ahead log or the
    ///   log's index was removed since the store opened it), or
    ///   ``ArchiveStoreError/database(_:)`` (busy past the timeout, disk full, …). Nothing is
    ///   written when it throws. Damage to the archive's previous generations,
    ///   or to its own row, does not stop it: a full save reads none of them, and replaces
    ///   them.
    @discardableResult
    public func save(_ nodes: [ArchivedNode], header: SaveHeader, in archive: ArchiveName = .main)
        throws(ArchiveStoreError) -> SaveResult
    {
        try saveInFull(nodes, header: header, in: archive).result
    }

    /// ``save(_:header:in:)``, also returning the new generation's node digest (the sum of its
    /// nodes' checksums): what the engine knows the generation by, beyond its number.
    func saveInFull(_ nodes: [ArchivedNode], header: SaveHeader, in archive: ArchiveName)
        throws(ArchiveStoreError) -> (result: SaveResult, nodeDigest: Int64)
    {
        let order = try PathOrder(nodes, requireParents: true).indexes
        let appValues = try header.encodedAppValues()
        let retained = configuration.retainedGenerations
        let seal = self.seal
        return try write(shorteningTheLog: true) { connection in
            // Damage to the archive's row does not stop a save that replaces all it holds.
            let found = try ArchiveRows.archiveToReplace(named: archive, in: connection)
            if let damage = found?.damage {
                logger?.warning("Archive '\(archive)' was damaged (\(damage)); the full save replaces it")
            }
            let row = try found?.row ?? ArchiveRows.createArchive(named: archive, in: connection)
            let generation = row.generation.next
            let carried = try restorationCarriedOn(by: row, connection)
            // The previous generation's rows stay as they are, in its epoch (the prune deletes
            // them once no retained generation reads them); this save starts an epoch of its own.
            let removed = try Self.nodeCount(of: row, connection)
            try Self.deleteFutureRows(of: row, connection)
            let pruned = try Self.prune(
                archive: row, newest: generation, epoch: generation, retained: retained, connection: connection)

            let writer = try NodeRowWriter(archive: row, seal: seal, connection: connection)
            var digest: Int64 = 0
            var totalBytes = 0
            // In path order, the order of the primary key within the new epoch: each row goes
            // at the end of the table's last page, and pages are filled, not split.
            for index in order {
                let node = nodes[index]
                digest &+= try writer.insert(node, born: generation, epoch: generation)
                totalBytes += node.state.count
            }
            try Self.finishSave(
                generation: generation, epoch: generation, kind: .full, header: header, appValues: appValues,
                nodeCount: nodes.count, totalBytes: totalBytes, digest: digest, carried: carried,
                archive: row, connection: connection)
            logger?.debug("Saved archive '\(archive)' generation \(generation) in full: \(nodes.count) nodes, \(totalBytes) bytes")
            let result = SaveResult(
                generation: generation, kind: .full, nodesWritten: nodes.count, nodesRemoved: removed,
                nodeCount: nodes.count, prunedGenerations: pruned)
            return (result, digest)
        }
    }

    /// Saves the changes to an archive as its next generation: only the nodes added or changed
    /// are written, and removed nodes are retired with everything below them. Its cost grows
    /// with the number of changes, not with the size of the archive.
    ///
    /// - Parameters:
    ///   - changed: nodes added or changed since `base`. Each one's parent must be in the
    ///     archive or among `changed`.
    ///   - removed: paths to remove, each with its whole subtree. A path is matched as paths
    ///     compare (another Unicode form of a stored path removes that node); a path not in
    ///     the archive is ignored.
    ///   - base: the generation the changes were computed against: it must still be the
    ///     archive's newest, or the save is refused (another save committed in between). It
    ///     is known by its number only: after ``erase(at:busyTimeout:logger:)`` numbers start
    ///     again, so changes computed before an erase must not be saved after it.
    ///   - header: the header of the new generation.
    ///   - archive: the archive to change.
    /// - Throws: ``ArchiveStoreError/generationConflict(_:expected:found:)`` when `base` is no
    ///   longer the newest generation, ``ArchiveStoreError/generationNotFound(_:_:)`` when it
    ///   is not retained (a discarded archive, for example), ``ArchiveStoreError/missingParent(_:)``
    ///   and the errors of ``save(_:header:in:)``. Nothing is written when it throws.
    @discardableResult
    public func saveChanges(
        _ changed: [ArchivedNode], removing removed: [RestorationPath] = [], basedOn base: Generation,
        header: SaveHeader, in archive: ArchiveName = .main
    ) throws(ArchiveStoreError) -> SaveResult {
        try saveChanges(changed, removing: removed, basedOn: base, nodeDigest: nil, header: header, in: archive).result
    }

    /// ``saveChanges(_:removing:basedOn:header:in:)`` against a base known by its node digest
    /// too, when `nodeDigest` is given: a base of that number with other nodes (the store was
    /// erased since, and another writer saved up to that number) is refused as
    /// ``ArchiveStoreError/generationConflict(_:expected:found:)``. Also returns the new
    /// generation's node digest.
    func saveChanges(
        _ changed: [ArchivedNode], removing removed: [RestorationPath], basedOn base: Generation,
        nodeDigest expectedDigest: Int64?, header: SaveHeader, in archive: ArchiveName
    ) throws(ArchiveStoreError) -> (result: SaveResult, nodeDigest: Int64) {
        // Parents before children, so a new parent exists before its new children are checked.
        let changed = try PathOrder(changed, requireParents: false).indexes.map { changed[$0] }
        let appValues = try header.encodedAppValues()
        let retained = configuration.retainedGenerations
        let seal = self.seal
        return try write(shorteningTheLog: true) { connection in
            guard let row = try ArchiveRows.archive(named: archive, in: connection) else {
                throw ArchiveStoreError.archiveNotFound(archive)
            }
            guard row.generation == base else {
                throw ArchiveStoreError.generationConflict(archive, expected: base, found: row.generation)
            }
            guard row.discardedAt == nil, let previous = try ArchiveRows.generation(base, of: row, in: connection) else {
                throw ArchiveStoreError.generationNotFound(archive, base)
            }
            if let expectedDigest, previous.nodeDigest != expectedDigest {
                throw ArchiveStoreError.generationConflict(archive, expected: base, found: row.generation)
            }
            let generation = base.next
            let carried = try restorationCarriedOn(by: row, connection)
            // The changes are rows of the base's epoch: unchanged rows carry on from it.
            let epoch = previous.epoch
            let pruned = try Self.prune(
                archive: row, newest: generation, epoch: epoch, retained: retained, connection: connection)
            var digest = previous.nodeDigest
            var nodeCount = previous.nodeCount
            var totalBytes = previous.totalBytes
            var removedCount = 0

            var otherForms = OtherUnicodeForms(archive: row, epoch: epoch)
            // Looked up only when something is removed (most saves remove nothing).
            if !removed.isEmpty {
                // Read, then retire: `UPDATE … RETURNING` collects its rows in two temporary
                // tables first, where the plain `UPDATE` changes them in one pass.
                let subtree = try connection.statement(Self.subtreeRows)
                let retireSubtree = try connection.statement(Self.retireSubtree)
                // Retires the subtree stored under `text`'s bytes; returns how many rows.
                func retire(_ text: String) throws -> Int {
                    defer {
                        subtree.reset()
                        retireSubtree.reset()
                    }
                    for statement in [subtree, retireSubtree] {
                        try statement.bind(generation.rawValue, at: 1)
                        try statement.bind(row.id, at: 2)
                        try statement.bind(text, at: 3)
                        // Everything below `text` sorts between "text/" and "text0" ('0' follows '/').
                        try statement.bind(text + "/", at: 4)
                        try statement.bind(text + "0", at: 5)
                        try statement.bind(epoch.rawValue, at: 6)
                    }
                    var retired = 0
                    while try subtree.step() {
                        digest &-= try subtree.int64(0)
                        totalBytes -= try subtree.int64(1)
                        retired += 1
                    }
                    guard retired > 0 else { return 0 }
                    try retireSubtree.run()
                    return retired
                }
                for path in removed {
                    var retired = try retire(path.description)
                    // Not stored under these bytes: the app names the node it sees, which may be
                    // stored in another Unicode form. (An archive holds one form of a path: saves
                    // refuse a second, so a path found by its bytes has no other.)
                    if retired == 0 {
                        for text in try otherForms.storedForms(of: path.description, connection) {
                            retired += try retire(text)
                        }
                    }
                    nodeCount -= Int64(retired)
                    removedCount += retired
                }
                // The paths just retired are not the epoch's any more.
                if removedCount > 0 { otherForms.forget() }
            }

            // Read, then retire by primary key: `UPDATE … RETURNING` would build a temporary
            // table for its one row, which cost more than the second statement.
            let current = try connection.statement(Self.currentRow)
            let retireOne = try connection.statement(
                "UPDATE node SET died = ? WHERE archive_id = ? AND epoch = ? AND path = ? AND born = ?")
            let parentExists = try connection.statement(
                "SELECT 1 FROM node WHERE archive_id = ? AND epoch = ? AND path = ? AND died IS NULL")
            let writer = try NodeRowWriter(archive: row, seal: seal, connection: connection)
            for node in changed {
                let path = node.path.description
                var born: Int64?
                do {
                    defer { current.reset() }
                    try current.bind(row.id, at: 1)
                    try current.bind(epoch.rawValue, at: 2)
                    try current.bind(path, at: 3)
                    if try current.step() {
                        born = try current.int64(0)
                        digest &-= try current.int64(1)
                        totalBytes -= try current.int64(2)
                        nodeCount -= 1
                    }
                }
                if let born {
                    defer { retireOne.reset() }
                    try retireOne.bind(generation.rawValue, at: 1)
                    try retireOne.bind(row.id, at: 2)
                    try retireOne.bind(epoch.rawValue, at: 3)
                    try retireOne.bind(path, at: 4)
                    try retireOne.bind(born, at: 5)
                    try retireOne.run()
                }
                // A node live in the base has its parent live too: every save keeps the tree
                // whole, and a removal above it (made first) retired it with its subtree. So only
                // a new node's parent is looked up.
                if born == nil, try otherForms.holds(path, connection) {
                    throw ArchiveStoreError.invalidNode(node.path, PathOrder.nodeInAnotherForm)
                }
                if born == nil, let parent = node.path.parentDescription {
                    try parentExists.bind(row.id, at: 1)
                    try parentExists.bind(epoch.rawValue, at: 2)
                    try parentExists.bind(parent, at: 3)
                    let found = try parentExists.step()
                    parentExists.reset()
                    guard found else {
                        // Its parent's identifiers may be there in other bytes (in the archive or
                        // among these nodes): `missingParent` alone would name a parent the app sees.
                        if try otherForms.holds(String(parent), connection)
                            || changed.contains(where: { $0.path.description == parent })
                        {
                            throw ArchiveStoreError.invalidNode(node.path, PathOrder.parentInAnotherForm)
                        }
                        throw ArchiveStoreError.missingParent(node.path)
                    }
                }
                digest &+= try writer.insert(node, born: generation, epoch: epoch)
                totalBytes += Int64(node.state.count)
                nodeCount += 1
            }
            try Self.finishSave(
                generation: generation, epoch: epoch, kind: .incremental, header: header, appValues: appValues,
                nodeCount: Int(nodeCount), totalBytes: Int(totalBytes), digest: digest,
                carried: carried, archive: row, connection: connection)
            // Retaining one generation, the prune above took the base: the rows this save
            // retired were the base's alone.
            if retained == 1 {
                try Self.deleteRows(Self.deleteRetiredRows, of: row, bound: generation.rawValue, connection)
            }
            logger?.debug(
                "Saved archive '\(archive)' generation \(generation) incrementally: \(changed.count) written, \(removedCount) removed")
            let result = SaveResult(
                generation: generation, kind: .incremental, nodesWritten: changed.count, nodesRemoved: removedCount,
                nodeCount: Int(nodeCount), prunedGenerations: pruned)
            return (result, digest)
        }
    }

    /// The paths live in an incremental save's epoch that are not all ASCII, by their `String`
    /// (equal under canonical equivalence, as the engine compares paths), each with the texts
    /// it is stored as, read the first time a path that is not all ASCII asks. A row is found by
    /// its path's bytes: a node whose path is another Unicode form of one the archive holds
    /// would be a second node with the same identifiers, a parent in another form a missing
    /// one, and a removal in another form would retire nothing. ASCII paths, the common case,
    /// never read them. (Three characters are equal to ASCII ones: the Kelvin sign to "K", the
    /// Greek question mark to ";", the Greek varia to "`". A stored path holding one is not
    /// found here from its ASCII form, which would cost every save that adds a path with those
    /// letters a read of the epoch's paths; ``RestorationEngine`` finds such paths itself.)
    private struct OtherUnicodeForms {
        let archive: ArchiveRows.ArchiveRow
        let epoch: Generation
        private var stored: [String: [String]]?

        init(archive: ArchiveRows.ArchiveRow, epoch: Generation) {
            self.archive = archive
            self.epoch = epoch
        }

        /// Whether `path`, when not all ASCII, is equal as a `String` to a live path of the
        /// epoch as it was read (rows this save writes later are not read again: the save's
        /// own nodes are the caller's to look among). Callers ask about a path the store did
        /// not find by its bytes.
        mutating func holds(_ path: String, _ connection: Connection) throws -> Bool {
            try !forms(of: path, connection).isEmpty
        }

        /// The texts, other than `path`'s own bytes, that the epoch's live paths equal to
        /// `path` as a `String` are stored as; none when `path` is all ASCII.
        mutating func storedForms(of path: String, _ connection: Connection) throws -> [String] {
            try forms(of: path, connection).filter { !UTF8Text.sameBytes($0, path) }
        }

        /// Forgets what was read, for the next question to read the epoch again (after rows
        /// were retired).
        mutating func forget() {
            stored = nil
        }

        private mutating func forms(of path: String, _ connection: Connection) throws -> [String] {
            guard !UTF8Text.withBytes(of: path, UTF8Text.isASCII) else { return [] }
            if stored == nil { stored = try Self.read(archive: archive, epoch: epoch, connection) }
            return stored?[path] ?? []
        }

        private static func unreadablePath(of archive: ArchiveRows.ArchiveRow) -> ArchiveStoreError {
            .damagedArchive(archive.name, archive.generation, NodeRowReader.unreadablePath)
        }

        private static func read(archive: ArchiveRows.ArchiveRow, epoch: Generation, _ connection: Connection) throws
            -> [String: [String]]
        {
            let statement = try connection.statement(
                "SELECT path FROM node WHERE archive_id = ? AND epoch = ? AND died IS NULL")
            defer { statement.reset() }
            try statement.bind(archive.id, at: 1)
            try statement.bind(epoch.rawValue, at: 2)
            var stored: [String: [String]] = [:]
            while try statement.step() {
                // A path of another type, or not UTF-8, is damage to the generation, as when the
                // generation is read (not to the whole store).
                guard statement.isText(0) else { throw unreadablePath(of: archive) }
                let bytes = statement.uncheckedBytes(0)
                guard !UTF8Text.isASCII(bytes) else { continue }
                guard let text = UTF8Text.string(validating: bytes.assumingMemoryBound(to: UInt8.self)) else {
                    throw unreadablePath(of: archive)
                }
                stored[text, default: []].append(text)
            }
            return stored
        }
    }

    /// Retires a path and its subtree in the generation `?1` (each row's checksum and state
    /// size read first by ``subtreeRows``).
    ///
    /// The subtree is searched as one range of the primary key, from the path to the end of
    /// its descendants ("path0"); the few paths in it that are not below (`path-x`, which sorts
    /// before "path/") are left out. Written as `path = ?3 OR path >= ?4`, SQLite read the
    /// whole epoch instead.
    private static let retireSubtree = """
        UPDATE node SET died = ?1 WHERE \(subtreeOfPath)
        """

    /// The checksum and state size of each row ``retireSubtree`` retires, read first in the
    /// same transaction. (`?1`, the retiring generation, is bound and unused.)
    private static let subtreeRows = """
        SELECT checksum, \(ArchiveRows.plainLength) FROM node WHERE \(subtreeOfPath)
        """

    /// The current rows of the path `?3` and of its subtree in the epoch `?6`: see
    /// ``retireSubtree``.
    private static let subtreeOfPath = """
        archive_id = ?2 AND epoch = ?6 AND path >= ?3 AND path < ?5 AND died IS NULL AND (path = ?3 OR path >= ?4)
        """

    /// The rows of an archive's epochs older than the oldest one a retained generation reads.
    private static let deleteEarlierEpochs = "DELETE FROM node WHERE archive_id = ? AND epoch < ?"

    /// The rows of an archive retired by the given generation or an older one (found by
    /// `node_retired`). `<=`, not `< bound + 1`: a bound of the highest generation there can be
    /// does not overflow.
    private static let deleteRetiredRows = "DELETE FROM node WHERE archive_id = ? AND died IS NOT NULL AND died <= ?"

    /// The current row of a path: when it was born, its checksum and its state's size.
    private static let currentRow = """
        SELECT born, checksum, \(ArchiveRows.plainLength) FROM node \
        WHERE archive_id = ? AND epoch = ? AND path = ? AND died IS NULL
        """

    /// The node count of the archive's newest generation, as its header row says: what a full
    /// save replaces (reported as removed, as when a full save retired every row). Read
    /// without the checksum, so that a damaged header does not stop the full save that
    /// replaces it; 0 when there is no such row (a discarded archive, or a new one).
    private static func nodeCount(of archive: ArchiveRows.ArchiveRow, _ connection: Connection) throws -> Int {
        let statement = try connection.statement(
            "SELECT node_count FROM generation WHERE archive_id = ? AND generation = ?")
        defer { statement.reset() }
        try statement.bind(archive.id, at: 1)
        try statement.bind(archive.generation.rawValue, at: 2)
        guard try statement.step() else { return 0 }
        return Int(clamping: max(0, try statement.int64(0)))
    }

    /// Deletes the archive's rows that belong after its newest generation: node rows of a
    /// later epoch and generation rows of a later number. A sound store has none (every save
    /// advances the archive's generation in the transaction that writes them); damage to a
    /// row's numbers may leave one, and the new epoch would then read it as one of its own,
    /// or the new header's insertion fail on it: a full save, which replaces everything, must
    /// start from nothing. Each `DELETE` is one seek on the primary key.
    private static func deleteFutureRows(of archive: ArchiveRows.ArchiveRow, _ connection: Connection) throws {
        for sql in [
            "DELETE FROM node WHERE archive_id = ? AND epoch > ?",
            "DELETE FROM generation WHERE archive_id = ? AND generation > ?",
        ] {
            let delete = try connection.statement(sql)
            defer { delete.reset() }
            try delete.bind(archive.id, at: 1)
            try delete.bind(archive.generation.rawValue, at: 2)
            try delete.run()
        }
    }

    // MARK: Steps shared by both saves

    /// Writes the new generation's header and makes it the archive's newest. With `carried`,
    /// a restoration of this process is in progress: the generation takes its crash marker
    /// and attempts on.
    private static func finishSave(
        generation: Generation, epoch: Generation, kind: SaveKind, header: SaveHeader, appValues: [UInt8],
        nodeCount: Int, totalBytes: Int, digest: Int64, carried: CarriedRestoration?, archive: ArchiveRows.ArchiveRow,
        connection: Connection
    ) throws {
        var row = ArchiveRows.GenerationRow(
            generation: generation, storeFormat: Int64(storeFormat), appVersion: header.appVersion,
            appBuild: header.appBuild, platform: header.platform, idiom: header.idiom,
            savedAt: Clock.nowMilliseconds(), saveKind: kind, appValues: appValues, nodeCount: Int64(nodeCount),
            totalBytes: Int64(totalBytes), nodeDigest: digest, epoch: epoch)
        row.restoreAttempts = carried?.attempts ?? 0
        try ArchiveRows.insert(row, archive: archive, in: connection)
        if let carried { try carryOn(carried, to: generation, of: archive, connection) }
        var advanced = archive
        advanced.generation = generation
        advanced.discardedAt = nil
        advanced.discardReason = nil
        try ArchiveRows.update(advanced, in: connection)
    }

    /// Deletes the generations that fall out of the retention window once `newest`, of epoch
    /// `epoch`, is saved, and the node rows no retained generation reads any more: rows an
    /// incremental save retired before the oldest retained generation, and whole epochs older
    /// than the oldest retained generation's.
    ///
    /// A save prunes before it writes its rows, so that they go into the pages the prune frees
    /// (zeroed by `secure_delete`, then filled: each page written to the log once). Pruning
    /// after, a full save left a whole generation's pages free until the next one, the file
    /// holding one generation more than it retains, and a one-node save split the page of the
    /// node it changes when that page was full of the node's earlier rows.
    ///
    /// Node rows had a foreign key to their archive until v0008. SQLite then collected the
    /// rows of a `DELETE` in a temporary table before deleting them, so the prune listed rows
    /// and deleted them one statement each: about 10,000 instructions per row of a pruned epoch.
    private static func prune(
        archive: ArchiveRows.ArchiveRow, newest: Generation, epoch: Generation, retained: Int, connection: Connection
    ) throws -> [Generation] {
        let oldestKept = newest.rawValue - Int64(retained) + 1
        guard oldestKept > 1 else { return [] }
        var pruned: [Generation] = []
        var prunesDamagedRow = false
        // Epochs only grow with generations, so the oldest retained generation's is the
        // oldest any retained generation reads. `newest` is not stored yet.
        var oldestEpoch = epoch.rawValue
        var oldestPrunedEpoch = Int64.max
        do {
            let listed = try connection.statement(
                "SELECT generation, epoch FROM generation WHERE archive_id = ? ORDER BY generation")
            defer { listed.reset() }
            try listed.bind(archive.id, at: 1)
            while try listed.step() {
                // A number or an epoch that damage made a value of another type stopped every
                // save of the archive, a full one too, as damage to the whole store. A number
                // made a real is pruned as SQLite compares it, as a number (text sorts after
                // every number); it is no generation to report, and its epoch is unknown, so
                // the earlier epochs are deleted. A retained generation whose epoch cannot be
                // read is one no restoration reads (its header cannot be read): it keeps no rows.
                let generation = try? listed.int64(0)
                let isPruned =
                    generation.map { $0 < oldestKept } ?? (((try? listed.double(0)) ?? .infinity) < Double(oldestKept))
                if isPruned {
                    if let generation { pruned.append(Generation(generation)) } else { prunesDamagedRow = true }
                    oldestPrunedEpoch = min(oldestPrunedEpoch, (try? listed.int64(1)) ?? Int64.min)
                } else if let retainedEpoch = try? listed.int64(1) {
                    oldestEpoch = min(oldestEpoch, retainedEpoch)
                }
            }
        }
        if prunesDamagedRow {
            try deleteRows(
                "DELETE FROM generation WHERE archive_id = ? AND generation < ?", of: archive, bound: oldestKept, connection)
        } else {
            // One row each: `DELETE … RETURNING` collects its rows in a temporary table first,
            // which tripled the prune's instructions.
            let deleteGeneration = try connection.statement(
                "DELETE FROM generation WHERE archive_id = ? AND generation = ?")
            for generation in pruned {
                defer { deleteGeneration.reset() }
                try deleteGeneration.bind(archive.id, at: 1)
                try deleteGeneration.bind(generation.rawValue, at: 2)
                try deleteGeneration.run()
            }
        }
        // The rows of earlier epochs, then the rows retired within the retained ones: a row
        // retired by generation d is last part of d - 1, so no retained generation holds it once
        // d <= oldestKept. Each `DELETE` is one pass over a range of an index.
        //
        // Each prune leaves no row that a generation it pruned alone read, and a discard deletes
        // an archive's rows with its generations: so there is nothing to delete unless a
        // generation is pruned now, and no earlier epoch unless one pruned now is of an epoch
        // older than the oldest retained one (most saves are incremental and prune a
        // generation of the epoch they write to). A `DELETE` that finds nothing still costs
        // about as much as a one-row `SELECT`.
        guard !pruned.isEmpty || prunesDamagedRow else { return pruned }
        if oldestPrunedEpoch < oldestEpoch {
            try deleteRows(Self.deleteEarlierEpochs, of: archive, bound: oldestEpoch, connection)
        }
        try deleteRows(Self.deleteRetiredRows, of: archive, bound: oldestKept, connection)
        return pruned
    }

    /// Runs a `DELETE` of an archive's rows up to `bound`: ``deleteEarlierEpochs`` (epochs
    /// below it), ``deleteRetiredRows`` (rows retired at or below it) or the prune's of the
    /// generations below it.
    private static func deleteRows(
        _ sql: String, of archive: ArchiveRows.ArchiveRow, bound limit: Int64, _ connection: Connection
    ) throws {
        let delete = try connection.statement(sql)
        defer { delete.reset() }
        try delete.bind(archive.id, at: 1)
        try delete.bind(limit, at: 2)
        try delete.run()
    }
}
