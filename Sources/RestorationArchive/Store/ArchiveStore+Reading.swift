extension ArchiveStore {
    /// Reads one complete generation of an archive, in a single read transaction.
    ///
    /// Every node's checksum is verified, and so are the generation's node count, total size
    /// and node digest: a damaged store gives an error naming what is damaged, never different
    /// content.
    ///
    /// - Parameters:
    ///   - archive: the archive to read.
    ///   - generation: a retained generation, or `nil` for the newest.
    /// - Returns: the snapshot, or `nil` when `generation` is `nil` and the archive has no
    ///   retained generation (it does not exist, was never saved, or was discarded).
    /// - Throws: ``ArchiveStoreError/generationNotFound(_:_:)`` for a generation that is not
    ///   retained, ``ArchiveStoreError/damagedNode(_:_:_:)`` and
    ///   ``ArchiveStoreError/damagedArchive(_:_:_:)`` for damage.
    public func snapshot(of archive: ArchiveName = .main, generation: Generation? = nil) throws(ArchiveStoreError)
        -> ArchiveSnapshot?
    {
        try read { connection in try readSnapshot(of: archive, generation: generation, toleratingDamage: false, connection) }
    }

    /// Reads one generation of an archive for inspection (`restorectl tree` and `show`): as
    /// ``snapshot(of:generation:)``, but a node whose content does not match its checksum, or
    /// whose state does not open under the key, is kept and named in
    /// ``ArchiveSnapshot/nodeDamage`` (with which of the two it is) rather than failing the
    /// read, as a restoration reads the generation. Such a node holds what the store holds,
    /// which is not what was saved: never restore from it. Damage beyond
    /// single nodes (the header, a node lost, added or with an unreadable path) still throws.
    ///
    /// - Parameters:
    ///   - archive: the archive to read.
    ///   - generation: a retained generation, or `nil` for the newest.
    /// - Returns: the snapshot, or `nil` as ``snapshot(of:generation:)`` returns it.
    /// - Throws: as ``snapshot(of:generation:)``, but never
    ///   ``ArchiveStoreError/damagedNode(_:_:_:)``.
    public func inspectionSnapshot(of archive: ArchiveName = .main, generation: Generation? = nil)
        throws(ArchiveStoreError) -> ArchiveSnapshot?
    {
        try read { connection in try readSnapshot(of: archive, generation: generation, toleratingDamage: true, connection) }
    }

    private func readSnapshot(
        of archive: ArchiveName, generation: Generation?, toleratingDamage: Bool, _ connection: Connection
    ) throws -> ArchiveSnapshot? {
        guard let row = try ArchiveRows.archive(named: archive, in: connection) else {
            if let generation { throw ArchiveStoreError.generationNotFound(archive, generation) }
            return nil
        }
        let wanted = generation ?? row.generation
        let found =
            if generation == nil {
                try ArchiveRows.newestGeneration(of: row, in: connection)
            } else if row.discardedAt == nil {
                try ArchiveRows.generation(wanted, of: row, in: connection)
            } else {
                ArchiveRows.GenerationRow?.none
            }
        guard let header = found else {
            if let generation { throw ArchiveStoreError.generationNotFound(archive, generation) }
            return nil
        }
        let read = try Self.readNodes(of: row, generation: header, toleratingDamage: toleratingDamage, seal: seal, connection)
        return ArchiveSnapshot(
            header: try ArchiveRows.header(header, archive: row), nodes: read.nodes, nodeDamage: read.damage)
    }

    /// Reads one node of an archive, verifying its checksum.
    ///
    /// - Parameters:
    ///   - path: the node's restoration path.
    ///   - archive: the archive to read.
    ///   - generation: a retained generation, or `nil` for the newest.
    /// - Returns: the node, or `nil` when the generation has no node at `path`. A path is
    ///   matched as paths compare: the node stored under another Unicode form of `path`
    ///   (composed or decomposed characters) is the node at `path`. Finding no row at `path`'s
    ///   own bytes, it reads the generation whole (only then) to find such a node, and to tell
    ///   a node it never had from one that damage took away or moved to another path.
    /// - Throws: ``ArchiveStoreError/archiveNotFound(_:)``, ``ArchiveStoreError/generationNotFound(_:_:)``,
    ///   ``ArchiveStoreError/damagedNode(_:_:_:)``; ``ArchiveStoreError/damagedArchive(_:_:_:)``
    ///   when no row is at `path` and the generation is damaged: its nodes do not match its
    ///   header, or one of them does not match its checksum (and may be the node asked for).
    public func node(at path: RestorationPath, in archive: ArchiveName = .main, generation: Generation? = nil)
        throws(ArchiveStoreError) -> ArchivedNode?
    {
        try read { connection in
            guard let row = try ArchiveRows.archive(named: archive, in: connection) else {
                throw ArchiveStoreError.archiveNotFound(archive)
            }
            let wanted = generation ?? row.generation
            guard row.discardedAt == nil, let header = try ArchiveRows.generation(wanted, of: row, in: connection)
            else {
                throw ArchiveStoreError.generationNotFound(archive, wanted)
            }
            let statement = try connection.statement(
                """
                SELECT \(ArchiveRows.nodeColumns) FROM node WHERE archive_id = ?1 AND epoch = ?4 AND path = ?2 \
                AND born <= ?3 AND (died IS NULL OR died > ?3)
                """)
            defer { statement.reset() }
            try statement.bind(row.id, at: 1)
            try statement.bind(path.description, at: 2)
            try statement.bind(wanted.rawValue, at: 3)
            try statement.bind(header.epoch.rawValue, at: 4)
            guard try statement.step() else {
                return try Self.nodeInAnotherForm(at: path, of: row, generation: header, seal: seal, connection)
            }
            var reader = NodeRowReader(archive: archive, seal: seal)
            let node = try reader.node(statement, generation: wanted).node
            guard try !statement.step() else {
                throw ArchiveStoreError.damagedArchive(archive, wanted, "two nodes share the path '\(path)'")
            }
            return node
        }
    }

    /// The node of `generation` whose path is `path` stored in another Unicode form, as
    /// paths compare (an app, or someone typing it, may name in one form the node saved in
    /// another); `nil` when it has none. For a `generation` in which no row is at `path`'s
    /// bytes.
    ///
    /// - Throws: the node's damage, when that node does not match its checksum; otherwise,
    ///   when the generation is damaged, so that the node may have been lost to the damage:
    ///   its nodes do not match its header (one gone), or one of them does not match its
    ///   checksum (its path changed, perhaps from `path`).
    private static func nodeInAnotherForm(
        at path: RestorationPath, of archive: ArchiveRows.ArchiveRow, generation: ArchiveRows.GenerationRow,
        seal: StateSeal?, _ connection: Connection
    ) throws -> ArchivedNode? {
        func noReadableNode(_ reason: String) -> ArchiveStoreError {
            .damagedArchive(archive.name, generation.generation, "it holds no node at '\(path)' that can be read: \(reason)")
        }
        let read: (nodes: [ArchivedNode], damage: [RestorationPath: ArchiveStoreError])
        do {
            read = try readNodes(of: archive, generation: generation, toleratingDamage: true, seal: seal, connection)
        } catch ArchiveStoreError.damagedArchive(_, _, let reason) {
            throw noReadableNode(reason)
        }
        if let node = read.nodes.first(where: { $0.path == path }) {
            if let damage = read.damage[node.path] { throw damage }
            return node
        }
        let damaged = read.damage.keys.sorted()
        guard let first = damaged.first else { return nil }
        let named = damaged.prefix(3).map { "'\($0)'" }.joined(separator: ", ") + (damaged.count > 3 ? ", …" : "")
        throw noReadableNode(
            damaged.count == 1
                ? "its damaged node at '\(first)' may be that node"
                : "one of its \(damaged.count) damaged nodes (\(named)) may be that node")
    }

    /// The header of an archive's newest retained generation, or `nil` when it has none.
    ///
    /// - Throws: ``ArchiveStoreError/damagedArchive(_:_:_:)`` when the archive's row or that
    ///   header is damaged; ``ArchiveStoreError/damagedStore(_:)`` when the store's index of
    ///   archive names no longer finds the archives its table holds.
    public func header(of archive: ArchiveName = .main) throws(ArchiveStoreError) -> ArchiveHeader? {
        try read { connection in
            guard let row = try ArchiveRows.archive(named: archive, in: connection),
                let generation = try ArchiveRows.newestGeneration(of: row, in: connection)
            else { return nil }
            return try ArchiveRows.header(generation, archive: row)
        }
    }

    /// The retained generations of an archive, newest first; empty when it has none.
    ///
    /// - Throws: ``ArchiveStoreError/damagedArchive(_:_:_:)`` when the header of any of them
    ///   cannot be read; ``summary(of:)`` lists the others and names the damaged ones.
    public func generations(of archive: ArchiveName = .main) throws(ArchiveStoreError) -> [GenerationSummary] {
        try read { connection in
            guard let row = try ArchiveRows.archive(named: archive, in: connection) else { return [] }
            return try ArchiveRows.generations(of: row, in: connection).map { $0.summary() }
        }
    }

    /// The names of the store's archives, sorted, read without checking the archives: one
    /// damaged archive, which ``archives()`` throws for, does not hide the others. Ask
    /// ``summary(of:)`` for each. They are the archives that hold state, and those discarded
    /// that the store still remembers (``retainedDiscardedArchives``).
    ///
    /// - Throws: ``ArchiveStoreError/damagedStore(_:)`` when the store lost or mixed up
    ///   archives (damage to its table of archives or to its name index, which a lookup of
    ///   such an archive by name meets too): the list would leave them out, or name an
    ///   archive that a lookup by that name does not find, or finds another archive under.
    public func archiveNames() throws(ArchiveStoreError) -> [ArchiveName] {
        try read { connection in
            try ArchiveRows.listedArchives(in: connection).map(\.row.name)
        }
    }

    /// Every archive of the store at a glance, sorted by name.
    /// - Throws: the damage of any archive, or of the list (see ``archiveNames()``).
    public func archives() throws(ArchiveStoreError) -> [ArchiveSummary] {
        try read { connection in
            try ArchiveRows.allArchives(in: connection).map { try Self.summary(of: $0, connection) }
        }
    }

    /// One archive at a glance, or `nil` when the store has no archive of that name.
    ///
    /// - Throws: ``ArchiveStoreError/damagedArchive(_:_:_:)`` when the archive's row or its
    ///   newest generation's header is damaged. A damaged older generation is listed in
    ///   ``ArchiveSummary/damagedGenerations``.
    public func summary(of archive: ArchiveName) throws(ArchiveStoreError) -> ArchiveSummary? {
        try read { connection in
            try ArchiveRows.archive(named: archive, in: connection).map { try Self.summary(of: $0, connection) }
        }
    }

    // MARK: Internals

    /// The archive's summary. Damage to its newest generation's header is thrown: the archive's
    /// state and header are that generation's. An older generation whose header is damaged is
    /// listed as such, and the others are read.
    private static func summary(of row: ArchiveRows.ArchiveRow, _ connection: Connection) throws -> ArchiveSummary {
        let (generations, damaged) = try ArchiveRows.generationsReadingEach(of: row, in: connection)
        if let newestDamage = ArchiveRows.newestDamage(of: row, generations, damaged) { throw newestDamage.error }
        let newest = generations.first { $0.generation == row.generation }
        // A damaged row that damage gave an intact generation's number is left to `check()`.
        let listed = Set(generations.map(\.generation))
        let state: ArchiveState
        if let discardedAt = row.discardedAt {
            state = .discarded(reason: row.discardReason ?? "", at: Clock.date(milliseconds: discardedAt))
        } else {
            state = newest?.state() ?? .valid
        }
        return ArchiveSummary(
            name: row.name, createdAt: Clock.date(milliseconds: row.createdAt), latestGeneration: row.generation,
            state: state, header: try newest.map { try ArchiveRows.header($0, archive: row) },
            generations: generations.map { $0.summary() },
            damagedGenerations: Dictionary(
                damaged.filter { !listed.contains($0.generation) }.map { ($0.generation, $0.reason) },
                uniquingKeysWith: { first, _ in first }))
    }

    /// The rows of a generation older than the newest: of its epoch, born by then, and not
    /// retired by then nor by a generation that does not exist (damage).
    private static let nodesOfGeneration = """
        SELECT \(ArchiveRows.nodeColumns) FROM node WHERE archive_id = ?1 AND epoch = ?2 AND born <= ?3 \
        AND (died IS NULL OR (died > ?3 AND died <= ?4)) ORDER BY path
        """

    /// The rows of the newest generation: those of its epoch never retired. No row is born
    /// after the newest generation (a row whose `born` damage changed fails its checksum).
    private static let newestNodes = """
        SELECT \(ArchiveRows.nodeColumns) FROM node WHERE archive_id = ?1 AND epoch = ?2 AND died IS NULL \
        ORDER BY path
        """

    /// The nodes of one generation, sorted by path, verified against the generation's totals.
    ///
    /// A node that does not match its checksum, or whose seal does not open, throws, or with
    /// `toleratingDamage` is listed in `damage` with that error (the restoration engine
    /// reports it and restores the rest). Either way a node added, lost or moved fails the
    /// whole generation.
    private static func readNodes(
        of archive: ArchiveRows.ArchiveRow, generation: ArchiveRows.GenerationRow, toleratingDamage: Bool,
        seal: StateSeal?, leavingSealed: Bool = false, _ connection: Connection
    ) throws -> (nodes: [ArchivedNode], damage: [RestorationPath: ArchiveStoreError]) {
        // One range of the table, in path order: the generation's epoch (v0007). Within it, the
        // rows born by then and not retired by then. Only a generation that exists retires a
        // row (?4 is the newest), so the newest generation's rows are exactly those never
        // retired, and a row retired by a generation still to come is left out as damage. The
        // newest generation, which launches read, has a query of its own without the tests
        // on `born` that only older generations need.
        let isNewest = generation.generation == archive.generation
        let statement = try connection.statement(isNewest ? Self.newestNodes : Self.nodesOfGeneration)
        defer { statement.reset() }
        try statement.bind(archive.id, at: 1)
        try statement.bind(generation.epoch.rawValue, at: 2)
        if !isNewest {
            try statement.bind(generation.generation.rawValue, at: 3)
            try statement.bind(archive.generation.rawValue, at: 4)
        }
        var nodes: [ArchivedNode] = []
        nodes.reserveCapacity(Int(clamping: max(0, min(generation.nodeCount, 1 << 20))))
        var damage: [RestorationPath: ArchiveStoreError] = [:]
        var digest: Int64 = 0
        var totalBytes: Int64 = 0
        var reader = NodeRowReader(archive: archive.name, seal: seal, leavingSealed: leavingSealed)
        // Every row copied out, then every row verified (`NodeRowReader.copy(_:into:state:)`).
        // Sized ahead for at most 65,536 rows: the header's count is only checked below.
        let expectedRows = min(nodes.capacity, 1 << 16)
        var rows: [StoredNodeRow] = []
        rows.reserveCapacity(expectedRows)
        var states: [[UInt8]] = []
        states.reserveCapacity(expectedRows)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(expectedRows &* 48)  // about 48 bytes of path and class name a row
        while try statement.step() {
            var state: [UInt8] = []
            rows.append(NodeRowReader.copy(statement, into: &bytes, state: &state))
            states.append(state)
        }
        try bytes.withUnsafeBytes { bytes in
            for index in rows.indices {
                // The state moves into its node: `states` keeps an empty array.
                var state: [UInt8] = []
                swap(&state, &states[index])
                // Taken apart at once: the tuple was otherwise copied whole through its runtime
                // metadata at each use, about 500 instructions a node.
                let (node, checksum, rejection) = try reader.verify(
                    rows[index], in: bytes, state: state, generation: generation.generation)
                if let rejection {
                    guard toleratingDamage else { throw rejection }
                    damage[node.path] = rejection
                }
                digest &+= checksum
                // A state left sealed (checking without the key) counts as the plaintext it seals.
                let leftSealed = seal == nil && StateSeal.isSealed(node.state)
                totalBytes += Int64(node.state.count - (leftSealed ? StateSeal.overhead : 0))
                nodes.append(node)
            }
        }
        // A damaged node's size may have changed with its content; its checksum already says so.
        guard nodes.count == generation.nodeCount, digest == generation.nodeDigest,
            totalBytes == generation.totalBytes || !damage.isEmpty
        else {
            throw ArchiveStoreError.damagedArchive(
                archive.name, generation.generation, "its nodes do not match the header's count, size and digest")
        }
        return (nodes, damage)
    }
}

extension ArchiveStore {
    /// The newest generation as the restoration engine reads it: nodes that fail their
    /// checksum are listed rather than thrown, so that the rest can be restored.
    struct RestorationSnapshot {
        var header: ArchiveHeader
        var nodes: [ArchivedNode]
        /// The nodes that do not match their checksums or whose seals do not open, each with
        /// its error.
        var damage: [RestorationPath: ArchiveStoreError]
        /// The sum of the generation's node checksums, as its header records it.
        var nodeDigest: Int64
    }

    /// Reads one generation for restoration, in the caller's transaction. Damage beyond single
    /// nodes (the header, a lost or added node) throws. With `leavingSealed`, sealed states
    /// come back as stored when there is no `seal` (``check()`` without the key).
    static func restorationSnapshot(
        of archive: ArchiveRows.ArchiveRow, generation: ArchiveRows.GenerationRow, seal: StateSeal?,
        leavingSealed: Bool = false, _ connection: Connection
    ) throws -> RestorationSnapshot {
        let header = try ArchiveRows.header(generation, archive: archive)
        let read = try readNodes(
            of: archive, generation: generation, toleratingDamage: true, seal: seal, leavingSealed: leavingSealed,
            connection)
        return RestorationSnapshot(
            header: header, nodes: read.nodes, damage: read.damage, nodeDigest: generation.nodeDigest)
    }
}
