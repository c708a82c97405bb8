/// The SQL behind archives, generations and nodes, and the checksums that protect them.
/// Every value is bound; no SQL text is built from data.
enum ArchiveRows {
    // MARK: Checksums

    /// A node's checksum from its values, as the store writes it (``NodeChecksum``; the store
    /// computes it from the bytes it binds or reads, the tests from nodes).
    static func nodeChecksum(archive: ArchiveName, node: ArchivedNode, born: Generation) -> Int64 {
        withBytes(of: node) { path, className, state in
            NodeChecksum.checksum(
                start: NodeChecksum.start(archive: archive), path: path, className: className,
                classVersion: Int64(node.classVersion), order: Int64(node.order), born: born.rawValue, state: state)
        }
    }

    /// The first node checksum from a node's values, as rows written before ``NodeChecksum``
    /// hold it.
    static func firstNodeChecksum(archive: ArchiveName, node: ArchivedNode, born: Generation) -> Int64 {
        withBytes(of: node) { path, className, state in
            firstNodeChecksum(
                start: firstNodeChecksumStart(archive: archive), path: path, className: className,
                classVersion: Int64(node.classVersion), order: Int64(node.order), born: born.rawValue, state: state)
        }
    }

    private static func withBytes<Result>(
        of node: ArchivedNode,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Result
    ) -> Result {
        UTF8Text.withBytes(of: node.path.description) { path in
            UTF8Text.withBytes(of: node.className) { className in
                node.state.withUnsafeBytes { state in body(path, className, state) }
            }
        }
    }

    /// Where the node checksums of an archive start, both kinds.
    struct NodeChecksumStarts {
        let current: UInt64
        let first: Checksum

        init(archive: ArchiveName) {
            current = NodeChecksum.start(archive: archive)
            first = firstNodeChecksumStart(archive: archive)
        }
    }

    /// Whether a node row's stored checksum is its fields' checksum: the one the store writes
    /// or, for rows written before it, the first one (computed only when the other does not
    /// match).
    static func nodeChecksumMatches(
        _ stored: Int64, starts: NodeChecksumStarts, path: UnsafeRawBufferPointer, className: UnsafeRawBufferPointer,
        classVersion: Int64, order: Int64, born: Int64, state: UnsafeRawBufferPointer
    ) -> Bool {
        stored
            == NodeChecksum.checksum(
                start: starts.current, path: path, className: className, classVersion: classVersion, order: order,
                born: born, state: state)
            || stored
                == firstNodeChecksum(
                    start: starts.first, path: path, className: className, classVersion: classVersion, order: order,
                    born: born, state: state)
    }

    /// What every first node checksum of an archive starts from: the domain and the archive's
    /// name.
    static func firstNodeChecksumStart(archive: ArchiveName) -> Checksum {
        var checksum = Checksum(domain: 0x4E4F_4445)  // "NODE"
        checksum.combine(archive.rawValue)
        return checksum
    }

    /// The first node checksum from a node's fields' bytes: one ``Checksum`` stream of the
    /// path's text, the parent's (the path up to its last "/", or none), the class name, the
    /// class version, the order, the generation that wrote it and the state.
    static func firstNodeChecksum(
        start: Checksum, path: UnsafeRawBufferPointer, className: UnsafeRawBufferPointer, classVersion: Int64,
        order: Int64, born: Int64, state: UnsafeRawBufferPointer
    ) -> Int64 {
        var checksum = start
        checksum.combine(stored: path)
        checksum.combine(storedOptional: parentText(ofPath: path))
        checksum.combine(stored: className)
        checksum.combine(classVersion)
        checksum.combine(order)
        checksum.combine(born)
        checksum.combine(stored: state)
        return checksum.finalize()
    }

    /// The text of a path's parent within the path's text, as ``RestorationPath/parent`` has it.
    static func parentText(ofPath path: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        RestorationPath.lastSlash(in: path).map { UnsafeRawBufferPointer(rebasing: path[..<$0]) }
    }

    static func generationChecksum(archive: ArchiveName, row: GenerationRow) -> Int64 {
        var checksum = Checksum(domain: 0x4745_4E52)  // "GENR"
        checksum.combine(archive.rawValue)
        checksum.combine(row.generation.rawValue)
        checksum.combine(row.storeFormat)
        checksum.combine(row.appVersion)
        checksum.combine(row.appBuild)
        checksum.combine(row.platform)
        checksum.combine(row.idiom)
        checksum.combine(row.savedAt)
        checksum.combine(row.saveKind.rawValue)
        checksum.combine(row.appValues)
        checksum.combine(row.nodeCount)
        checksum.combine(row.totalBytes)
        checksum.combine(row.nodeDigest)
        // Epoch 0 (rows saved before v0007) is left out, so that those rows keep their
        // checksums; any other epoch is covered, and a 0 damaged into another value, or back,
        // changes the checksum either way.
        if row.epoch.rawValue != 0 { checksum.combine(row.epoch.rawValue) }
        return checksum.finalize()
    }

    /// Covers every column of an archive row but its id (nodes and generations find their
    /// archive by id, and their own checksums cover its name).
    static func archiveChecksum(_ row: ArchiveRow) -> Int64 {
        var checksum = Checksum(domain: 0x4152_4348)  // "ARCH"
        checksum.combine(row.name.rawValue)
        checksum.combine(row.createdAt)
        checksum.combine(row.generation.rawValue)
        checksum.combine(row.discardedAt)
        checksum.combine(row.discardReason)
        return checksum.finalize()
    }

    /// Covers a generation's restoration state, which changes after its save.
    static func generationStateChecksum(archive: ArchiveName, row: GenerationRow) -> Int64 {
        var checksum = Checksum(domain: 0x5354_4154)  // "STAT"
        checksum.combine(archive.rawValue)
        checksum.combine(row.generation.rawValue)
        checksum.combine(row.invalidatedAt)
        checksum.combine(row.invalidatedReason)
        checksum.combine(row.restoreAttempts)
        checksum.combine(row.restoredCleanly ? 1 : 0)
        return checksum.finalize()
    }

    // MARK: Archive rows

    struct ArchiveRow {
        var id: Int64
        var name: ArchiveName
        var createdAt: Int64
        var generation: Generation
        var discardedAt: Int64?
        var discardReason: String?
    }

    /// An archive row as stored, and what is wrong with it (`nil` when nothing is).
    struct StoredArchive {
        var row: ArchiveRow
        var damage: String?
    }

    private static let archiveColumns = "id, name, created_at, generation, discarded_at, discard_reason, checksum"
    /// Built once: every save reads the archive row, and interpolating it cost more than its lookup.
    ///
    /// The name index finds the row's id; the row is then read from the table alone (`NOT
    /// INDEXED` still seeks by id). SQLite otherwise reads the name from the index entry that
    /// found the row, not from the row: a lookup always read back the name it looked for, and
    /// an entry that damage made point at another archive's row found that row as the archive
    /// looked for (a full save of `scene-3` wrote into `scene-2`'s row).
    private static let archiveByName =
        "SELECT \(archiveColumns) FROM archive NOT INDEXED WHERE id = (SELECT id FROM archive WHERE name = ?)"

    /// The archive of that name, or `nil` when the store has none.
    ///
    /// An archive the name index does not find, or finds wrongly, while the table holds it,
    /// and generations that belong to no archive, are damage, not an archive that was never
    /// saved (which a launch would silently start afresh from). The checks cost a scan of
    /// the few archive and generation rows, and only when the name is not found.
    static func archive(named name: ArchiveName, in connection: Connection) throws -> ArchiveRow? {
        try storedArchive(named: name, in: connection).map(checked)
    }

    /// The archive of that name as a write that replaces everything it holds (a full save, a
    /// discard) reads it, or `nil` when the store has none.
    ///
    /// Such a write reads nothing else of the archive, so damage to its row must not stop it:
    /// an app whose archive row was damaged could otherwise never save, nor discard, again. A
    /// row that does not match its checksum, or holds a generation out of range, comes back
    /// with `damage` saying so and, as its newest generation, the highest one anything in the
    /// store names for the archive (see ``highestGenerationNamed(by:in:)``) or the row's own
    /// if higher, so that the write's next generation is new to every marker, report and row.
    /// A name the index finds wrongly, or that is not a valid archive name, is still thrown:
    /// the row is not the archive's.
    static func archiveToReplace(named name: ArchiveName, in connection: Connection) throws
        -> StoredArchive?
    {
        try storedArchive(named: name, in: connection).map { try replaceable($0, connection) }
    }

    /// Every archive row, in name order, as ``archiveToReplace(named:in:)`` reads one.
    static func allArchivesToReplace(in connection: Connection) throws -> [StoredArchive] {
        try allStoredArchives(in: connection).map { try replaceable($0, connection) }
    }

    /// The archive of that name as stored, damaged or not (what ``archive(named:in:)`` checks,
    /// and what only needs to find it reads: its restore reports, which carry checksums of
    /// their own), or `nil` when the store has none. A row the name index finds for another
    /// name, or a name it does not find while the table holds it (or generations of no
    /// archive), is damage.
    static func storedArchive(named name: ArchiveName, in connection: Connection) throws -> StoredArchive? {
        let statement = try connection.statement(archiveByName)
        defer { statement.reset() }
        try statement.bind(name.rawValue, at: 1)
        if try statement.step() {
            let stored = try storedArchiveRow(statement)
            guard stored.row.name == name else { throw ArchiveStoreError.damagedStore(Self.lostArchives) }
            return stored
        }
        let lost = try connection.statement(lostByName)
        defer { lost.reset() }
        try lost.bind(name.rawValue, at: 1)
        guard try lost.step(), try lost.int64(0) == 0 else { throw ArchiveStoreError.damagedStore(Self.lostArchives) }
        return nil
    }

    private static let lostArchives = "the archive table or its name index lost or mixed up archives"

    /// SQL that is true when generations belong to no archive row: the table lost the row of
    /// an archive that holds state (its table read without its name index).
    private static let holdsGenerationsOfNoArchive =
        "EXISTS (SELECT 1 FROM generation WHERE archive_id NOT IN (SELECT id FROM archive NOT INDEXED))"

    /// Whether the archive named `?` was lost by the name index, or another by the table.
    private static let lostByName =
        "SELECT EXISTS (SELECT 1 FROM archive NOT INDEXED WHERE name = ?) OR \(holdsGenerationsOfNoArchive)"

    /// The archive rows that the name index does not find under their names: it lost the
    /// row's entry, or damage changed the entry's name or made it point at another row.
    private static let misindexed = """
        SELECT stored.id FROM archive AS stored NOT INDEXED
        WHERE stored.id IS NOT (SELECT id FROM archive WHERE name = stored.name)
        """

    /// Whether the name index does not find some archive row under its name, or the table
    /// lost an archive that holds state.
    private static let lostOrMixedUp = "SELECT EXISTS (\(misindexed)) OR \(holdsGenerationsOfNoArchive)"

    /// The ids of the archive rows that a lookup by their names does not find (``misindexed``).
    static func misindexedArchives(in connection: Connection) throws -> Set<Int64> {
        let statement = try connection.statement(misindexed)
        defer { statement.reset() }
        var ids: Set<Int64> = []
        while try statement.step() { ids.insert(try statement.int64(0)) }
        return ids
    }

    /// Throws ``ArchiveStoreError/damagedStore(_:)`` when the store lost or mixed up archives:
    /// the name index does not find some archive row under its name, or finds another row
    /// there, or generations belong to no archive (the table lost the archive's row). A
    /// lookup by name of such an archive throws the same: the list says so rather than name
    /// archives that cannot be read by their names, or leave out one the table lost. One
    /// lookup in the index for each of the store's few archive rows.
    static func expectNoArchiveLost(in connection: Connection) throws {
        let statement = try connection.statement(lostOrMixedUp)
        defer { statement.reset() }
        guard try statement.step(), try statement.int64(0) == 0 else { throw ArchiveStoreError.damagedStore(lostArchives) }
    }

    static func allArchives(in connection: Connection) throws -> [ArchiveRow] {
        try listedArchives(in: connection).map(checked)
    }

    /// ``allStoredArchives(in:)``, for a list of the archives that an app or a tool reads:
    /// throws when the store lost archives, which the list would leave out without a word
    /// (`restorectl info` said "(no archives)" of a store whose archive table lost its row),
    /// or its name index mixed them up, so that a lookup by a listed name fails or finds
    /// another archive (``expectNoArchiveLost(in:)``).
    static func listedArchives(in connection: Connection) throws -> [StoredArchive] {
        let named = try storedArchives(in: connection).named
        try expectNoArchiveLost(in: connection)
        return named
    }

    /// Every archive row as stored, in name order, each with what is wrong with it.
    ///
    /// A row whose name damage made no valid archive name is none of them: no archive is read,
    /// saved or discarded under it, and ``storedArchives(in:)`` lists it for `check()`. It was
    /// damage to the whole store: one such row stopped every list of the archives, the crash
    /// policy's invalidation of them all at a launch, and a discard of them all, so that an app
    /// erased every archive.
    static func allStoredArchives(in connection: Connection) throws -> [StoredArchive] {
        try storedArchives(in: connection).named
    }

    /// ``allStoredArchives(in:)``, and the ids of the rows it leaves out, whose names are not
    /// valid archive names: their archives' rows stay until the store is erased.
    static func storedArchives(in connection: Connection) throws -> (named: [StoredArchive], unnamed: [Int64]) {
        // The table alone, sorted: each row once, under its own name (through the name index,
        // SQLite reads the names from its entries, which damage may have changed).
        let statement = try connection.statement("SELECT \(archiveColumns) FROM archive NOT INDEXED ORDER BY name")
        defer { statement.reset() }
        var named: [StoredArchive] = []
        var unnamed: [Int64] = []
        while try statement.step() {
            if let row = try namedArchiveRow(statement) { named.append(row) } else { unnamed.append(try statement.int64(0)) }
        }
        return (named, unnamed)
    }

    static func createArchive(named name: ArchiveName, in connection: Connection) throws -> ArchiveRow {
        let now = Clock.nowMilliseconds()
        let statement = try connection.statement(
            "INSERT INTO archive (name, created_at, generation, checksum) VALUES (?, ?, 0, ?)")
        defer { statement.reset() }
        var row = ArchiveRow(id: 0, name: name, createdAt: now, generation: 0)
        try statement.bind(name.rawValue, at: 1)
        try statement.bind(now, at: 2)
        try statement.bind(archiveChecksum(row), at: 3)
        try statement.run()
        row.id = connection.lastInsertedRowID
        return row
    }

    /// Writes an archive row's changed generation and discard, with its checksum; its
    /// creation time too, as it was read: a damaged row may hold one of another type there,
    /// which the table's `STRICT` would refuse to keep beside the new values.
    static func update(_ row: ArchiveRow, in connection: Connection) throws {
        let statement = try connection.statement(
            "UPDATE archive SET generation = ?, discarded_at = ?, discard_reason = ?, checksum = ?, created_at = ? WHERE id = ?")
        defer { statement.reset() }
        try statement.bind(row.generation.rawValue, at: 1)
        try statement.bind(row.discardedAt, at: 2)
        try statement.bind(row.discardReason, at: 3)
        try statement.bind(archiveChecksum(row), at: 4)
        try statement.bind(row.createdAt, at: 5)
        try statement.bind(row.id, at: 6)
        try statement.run()
    }

    /// The row, or the error its damage is: damage to that archive, whatever the row holds (a
    /// negative generation too, which was damage to the whole store).
    private static func checked(_ stored: StoredArchive) throws -> ArchiveRow {
        guard let damage = stored.damage else { return stored.row }
        throw ArchiveStoreError.damagedArchive(stored.row.name, stored.row.generation, damage)
    }

    /// The row as a write that replaces the archive takes it: as it is when intact; when
    /// damaged, with, as its newest generation, the highest the store names for its archive,
    /// or the row's own when that is higher and not out of range: the damage may be in another
    /// column, and numbers the store no longer names (after a discard) may be known to another
    /// process's engine, which must never see one again for other content.
    private static func replaceable(_ stored: StoredArchive, _ connection: Connection) throws -> StoredArchive {
        guard stored.damage != nil else { return stored }
        var recovered = stored
        let named = try highestGenerationNamed(by: stored.row, in: connection)
        let own = stored.row.generation.rawValue
        recovered.row.generation = (0..<(1 << 62)).contains(own) && own > named.rawValue ? stored.row.generation : named
        return recovered
    }

    /// An archive row's values as stored, and what is wrong with it, if anything: a checksum
    /// that does not match, a negative generation, a value of another type or a reason that is
    /// not UTF-8 (damage to this row alone, as a changed value is: it stopped every read of the
    /// list of archives, and a discard of them all). A name that is not a valid archive name is
    /// thrown: the row that the name index found cannot be told apart from another archive's.
    private static func storedArchiveRow(_ statement: Statement) throws -> StoredArchive {
        guard let row = try namedArchiveRow(statement) else {
            throw ArchiveStoreError.damagedStore("an archive's name is not a valid archive name")
        }
        return row
    }

    /// ``storedArchiveRow(_:)``, or `nil` when the row's name is not a valid archive name.
    private static func namedArchiveRow(_ statement: Statement) throws -> StoredArchive? {
        guard let name = try? ArchiveName(try statement.string(1)) else { return nil }
        let id = try statement.int64(0)
        let row: ArchiveRow
        let checksum: Int64?
        do throws(ColumnError) {
            row = ArchiveRow(
                id: id,
                name: name,
                createdAt: try statement.int64(2),
                generation: Generation(try statement.int64(3)),
                discardedAt: try statement.optionalInt64(4),
                discardReason: try statement.optionalString(5))
            checksum = try statement.optionalInt64(6)
        } catch {
            // Its values as SQLite converts them, the reason with replacement characters.
            let damaged = ArchiveRow(
                id: id, name: name, createdAt: statement.uncheckedInt64(2),
                generation: Generation(max(0, statement.uncheckedInt64(3))),
                discardedAt: statement.isNull(4) ? nil : statement.uncheckedInt64(4),
                discardReason: statement.isNull(5) ? nil : String(decoding: statement.uncheckedBytes(5), as: UTF8.self))
            return StoredArchive(row: damaged, damage: "its archive row cannot be read (\(error.description))")
        }
        if row.generation.rawValue < 0 {
            return StoredArchive(row: row, damage: "its archive row holds a negative generation")
        }
        // No generation could follow it.
        if row.generation.rawValue == .max {
            return StoredArchive(row: row, damage: "its archive row holds the highest generation there can be")
        }
        // NULL: written before v0005.
        if let checksum, checksum != archiveChecksum(row) {
            return StoredArchive(row: row, damage: "its archive row does not match its checksum")
        }
        return StoredArchive(row: row)
    }

    /// The highest generation anything in the store names for `archive`: its generations, its
    /// node rows (born, retired, epoch), its crash marker, its restore reports and the
    /// journal's entries about it; 0 when nothing does. What a damaged archive row's newest
    /// generation is taken to be, unless the row's own is higher.
    ///
    /// Only integers count: a number that damage made text (which `max` takes over any
    /// number) or a real names no generation. Read as an integer, it failed this read as
    /// damage to the whole store, which an app erases.
    /// - Throws: ``ArchiveStoreError/damagedStore(_:)`` when that is the highest generation
    ///   there can be, which no write could follow.
    static func highestGenerationNamed(by archive: ArchiveRow, in connection: Connection) throws -> Generation {
        func named(_ column: String) -> String { "iif(typeof(\(column)) = 'integer', \(column), 0)" }
        let statement = try connection.statement(
            """
            SELECT max((SELECT ifnull(max(\(named("generation"))), 0) FROM generation WHERE archive_id = ?1), \
            (SELECT ifnull(max(max(\(named("born")), \(named("died")), \(named("epoch")))), 0) FROM node WHERE archive_id = ?1), \
            (SELECT ifnull(max(\(named("generation"))), 0) FROM crash_marker WHERE archive_id = ?1), \
            (SELECT ifnull(max(\(named("generation"))), 0) FROM restore_report WHERE archive_id = ?1), \
            (SELECT ifnull(max(\(named("generation"))), 0) FROM journal WHERE archive = ?2))
            """)
        defer { statement.reset() }
        try statement.bind(archive.id, at: 1)
        try statement.bind(archive.name.rawValue, at: 2)
        guard try statement.step() else { return 0 }
        let highest = try statement.int64(0)
        guard highest < Int64.max else {
            throw ArchiveStoreError.damagedStore(
                "archive '\(archive.name)' holds a row of generation \(Int64.max), after which no generation can be numbered")
        }
        return Generation(max(0, highest))
    }

    // MARK: Generation rows

    struct GenerationRow {
        var generation: Generation
        var storeFormat: Int64
        var appVersion: String
        var appBuild: String
        var platform: String
        var idiom: String
        var savedAt: Int64
        var saveKind: SaveKind
        var appValues: [UInt8]
        var nodeCount: Int64
        var totalBytes: Int64
        var nodeDigest: Int64
        /// The full save whose rows this generation reads (v0007): itself after a full save,
        /// its base's epoch after an incremental one; 0 for generations saved before v0007.
        var epoch: Generation
        var invalidatedAt: Int64? = nil
        var invalidatedReason: String? = nil
        /// Restorations of this generation begun, and whether one ever completed (crash markers).
        var restoreAttempts: Int64 = 0
        var restoredCleanly = false

        func state() -> ArchiveState {
            guard let invalidatedReason else { return .valid }
            return .invalidated(reason: invalidatedReason, at: Clock.date(milliseconds: invalidatedAt ?? savedAt))
        }

        func summary() -> GenerationSummary {
            GenerationSummary(
                generation: generation, savedAt: Clock.date(milliseconds: savedAt), saveKind: saveKind,
                nodeCount: Int(nodeCount), totalBytes: Int(totalBytes), state: state(),
                restoreAttempts: Int(restoreAttempts), restoredCleanly: restoredCleanly)
        }
    }

    private static let generationColumns = """
        generation, store_format, app_version, app_build, platform, idiom, saved_at, save_kind, app_values, \
        node_count, total_bytes, node_digest, checksum, invalidated_at, invalidated_reason, restore_attempts, \
        restored_cleanly, state_checksum, epoch
        """
    /// The archive's generations at or below `?2`, newest first, and a number damage made a
    /// real that SQLite converts to `?2` (below `?2 + 1`; at `Int64.max`, SQLite makes the sum
    /// a real above every integer). Both reads below use this one text, so a connection
    /// prepares it once: a launch reads the list, then one generation again under the write
    /// lock, and preparing a second statement over these columns cost about 165,000
    /// instructions (4% of a launch of 100 nodes). Built once, like ``archiveByName``.
    private static let generationsFromNumber = """
        SELECT \(generationColumns) FROM generation WHERE archive_id = ?1 AND generation < ?2 + 1 \
        ORDER BY generation DESC
        """

    static func generation(_ generation: Generation, of archive: ArchiveRow, in connection: Connection) throws
        -> GenerationRow?
    {
        let statement = try connection.statement(generationsFromNumber)
        defer { statement.reset() }
        try statement.bind(archive.id, at: 1)
        try statement.bind(generation.rawValue, at: 2)
        // The first rows are the newest at or below `generation`: the one asked for, or none. A
        // number damage made a real is taken as SQLite converts it, as the list of generations
        // names it: damage to the one asked for, unless an intact row of that number follows
        // (the real came first, ordered above it: 2.5 before 2); or, a real further below, none.
        var damage: (any Error)?
        while try statement.step(), statement.uncheckedInt64(0) == generation.rawValue {
            do {
                return try generationRow(statement, archive: archive.name)
            } catch where isDamage(error) {
                damage = damage ?? error
            }
        }
        if let damage { throw damage }
        return nil
    }

    /// The header row of the archive's newest generation; `nil` when it has none (never
    /// saved, or discarded). An archive whose newest generation has no header row is damaged:
    /// saves, pruning and invalidation never remove the newest one.
    static func newestGeneration(of archive: ArchiveRow, in connection: Connection) throws -> GenerationRow? {
        guard archive.discardedAt == nil, archive.generation.rawValue > 0 else { return nil }
        guard let row = try generation(archive.generation, of: archive, in: connection) else {
            throw ArchiveStoreError.damagedArchive(archive.name, archive.generation, Self.newestHeaderMissing)
        }
        return row
    }

    static let newestHeaderMissing = "the header of its newest generation is missing"

    /// Retained generations, newest first.
    ///
    /// `forRestoring`: as a restoration reads them, the newest as always (its damage is
    /// thrown), older ones only when intact. A damaged older generation is no candidate for
    /// restoring, and must not stop the newest's restoration (it did, at every launch, until
    /// it was pruned). Otherwise the first damaged one, newest first, is thrown.
    static func generations(of archive: ArchiveRow, in connection: Connection, forRestoring: Bool = false) throws
        -> [GenerationRow]
    {
        let (rows, damaged) = try generationsReadingEach(of: archive, in: connection)
        if let thrown = forRestoring ? newestDamage(of: archive, rows, damaged) : damaged.first { throw thrown.error }
        return rows
    }

    /// The damage of the archive's newest generation among `damaged`, unless `readable` holds
    /// an intact row of its number: a damaged row that damage gave that number (a real, as
    /// SQLite converts it) is no damage to the newest generation. A newest generation with no
    /// row at all, in an archive not discarded, is damage too (``newestHeaderMissing``): a
    /// save always leaves its generation's row.
    static func newestDamage(of archive: ArchiveRow, _ readable: [GenerationRow], _ damaged: [DamagedGeneration])
        -> DamagedGeneration?
    {
        guard !readable.contains(where: { $0.generation == archive.generation }) else { return nil }
        if let damage = damaged.first(where: { $0.generation == archive.generation }) { return damage }
        guard newestIsMissing(of: archive, readable, damaged) else { return nil }
        return DamagedGeneration(archive: archive.name, generation: archive.generation, reason: newestHeaderMissing)
    }

    /// Whether the archive, not discarded and saved, has no row of its newest generation at
    /// all, readable or damaged: a save always leaves its generation's row.
    static func newestIsMissing(of archive: ArchiveRow, _ readable: [GenerationRow], _ damaged: [DamagedGeneration]) -> Bool {
        archive.discardedAt == nil && archive.generation.rawValue > 0
            && !readable.contains { $0.generation == archive.generation }
            && !damaged.contains { $0.generation == archive.generation }
    }

    /// A retained generation whose header cannot be read, named by its number (a number of
    /// another type as SQLite converts it).
    struct DamagedGeneration {
        var archive: ArchiveName
        var generation: Generation
        /// What is wrong with its header.
        var reason: String
        /// The error reading it throws.
        var error: ArchiveStoreError { .damagedArchive(archive, generation, reason) }
    }

    /// Retained generations, newest first, each read on its own: those whose header can be
    /// read, and the damage of each whose header cannot, so that one damaged generation does
    /// not hide the others.
    static func generationsReadingEach(of archive: ArchiveRow, in connection: Connection) throws
        -> (readable: [GenerationRow], damaged: [DamagedGeneration])
    {
        let statement = try connection.statement(generationsFromNumber)
        defer { statement.reset() }
        try statement.bind(archive.id, at: 1)
        try statement.bind(Int64.max, at: 2)
        var rows: [GenerationRow] = []
        var damaged: [DamagedGeneration] = []
        while try statement.step() {
            do {
                rows.append(try generationRow(statement, archive: archive.name))
            } catch let error as ArchiveStoreError {
                // `generationRow` throws `damagedArchive` for any damage to the row it reads.
                guard case .damagedArchive(_, let generation, let reason) = error else { throw error }
                damaged.append(DamagedGeneration(archive: archive.name, generation: generation, reason: reason))
            }
        }
        return (rows, damaged)
    }

    /// Whether reading a row failed on what the row holds (a checksum, a value of another
    /// type, text that is not UTF-8), rather than on the file or the database.
    static func isDamage(_ error: any Error) -> Bool {
        (error as? ArchiveStoreError)?.isDamage == true || error is ColumnError
    }

    /// Writes a new generation's header with both its checksums. Every column the checksums
    /// cover is bound, none left to the schema's `DEFAULT`: a damaged default (the schema's
    /// text) made each new generation fail its own checksum.
    static func insert(_ row: GenerationRow, archive: ArchiveRow, in connection: Connection) throws {
        let statement = try connection.statement(
            """
            INSERT INTO generation (archive_id, generation, store_format, app_version, app_build, platform, idiom, \
            saved_at, save_kind, app_values, node_count, total_bytes, node_digest, checksum, state_checksum, epoch, \
            invalidated_at, invalidated_reason, restore_attempts, restored_cleanly) \
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        defer { statement.reset() }
        try statement.bind(archive.id, at: 1)
        try statement.bind(row.generation.rawValue, at: 2)
        try statement.bind(row.storeFormat, at: 3)
        try statement.bind(row.appVersion, at: 4)
        try statement.bind(row.appBuild, at: 5)
        try statement.bind(row.platform, at: 6)
        try statement.bind(row.idiom, at: 7)
        try statement.bind(row.savedAt, at: 8)
        try statement.bind(row.saveKind.rawValue, at: 9)
        try statement.bind(bytes: row.appValues, at: 10)
        try statement.bind(row.nodeCount, at: 11)
        try statement.bind(row.totalBytes, at: 12)
        try statement.bind(row.nodeDigest, at: 13)
        try statement.bind(generationChecksum(archive: archive.name, row: row), at: 14)
        try statement.bind(generationStateChecksum(archive: archive.name, row: row), at: 15)
        try statement.bind(row.epoch.rawValue, at: 16)
        try statement.bind(row.invalidatedAt, at: 17)
        try statement.bind(row.invalidatedReason, at: 18)
        try statement.bind(row.restoreAttempts, at: 19)
        try statement.bind(row.restoredCleanly ? 1 : 0, at: 20)
        try statement.run()
    }

    /// Changes a generation's restoration state (invalidation, attempts, clean restoration):
    /// reads it verified, lets `change` edit it, and writes it back with its checksum.
    ///
    /// - Returns: whether the row was written: `false` when there is no such generation or
    ///   `change` returned `false`.
    @discardableResult
    static func changeState(
        of generation: Generation, archive: ArchiveRow, in connection: Connection,
        _ change: (inout GenerationRow) -> Bool
    ) throws -> Bool {
        guard var row = try Self.generation(generation, of: archive, in: connection), change(&row) else { return false }
        let statement = try connection.statement(
            """
            UPDATE generation SET invalidated_at = ?, invalidated_reason = ?, restore_attempts = ?, \
            restored_cleanly = ?, state_checksum = ? WHERE archive_id = ? AND generation = ?
            """)
        defer { statement.reset() }
        try statement.bind(row.invalidatedAt, at: 1)
        try statement.bind(row.invalidatedReason, at: 2)
        try statement.bind(row.restoreAttempts, at: 3)
        try statement.bind(row.restoredCleanly ? 1 : 0, at: 4)
        try statement.bind(generationStateChecksum(archive: archive.name, row: row), at: 5)
        try statement.bind(archive.id, at: 6)
        try statement.bind(generation.rawValue, at: 7)
        try statement.run()
        return true
    }

    private static func generationRow(_ statement: Statement, archive: ArchiveName) throws -> GenerationRow {
        // A number of another type is named as SQLite converts it (a real, truncated).
        let generation = Generation(statement.uncheckedInt64(0))
        do {
            _ = try statement.int64(0)
            return try generationRow(statement, archive: archive, generation: generation)
        } catch let error as ColumnError {
            // A value of another type, its number's too, or text that is not UTF-8: damage to
            // this generation's header, as a changed value is, not to the whole store (which an
            // app erases).
            throw ArchiveStoreError.damagedArchive(archive, generation, "its header cannot be read (\(error.description))")
        }
    }

    private static func generationRow(_ statement: Statement, archive: ArchiveName, generation: Generation) throws
        -> GenerationRow
    {
        guard let saveKind = SaveKind(rawValue: try statement.string(7)) else {
            throw ArchiveStoreError.damagedArchive(archive, generation, "its header names an unknown save kind")
        }
        let row = GenerationRow(
            generation: generation,
            storeFormat: try statement.int64(1),
            appVersion: try statement.string(2),
            appBuild: try statement.string(3),
            platform: try statement.string(4),
            idiom: try statement.string(5),
            savedAt: try statement.int64(6),
            saveKind: saveKind,
            appValues: try statement.bytes(8),
            nodeCount: try statement.int64(9),
            totalBytes: try statement.int64(10),
            nodeDigest: try statement.int64(11),
            epoch: Generation(try statement.int64(18)),
            invalidatedAt: try statement.optionalInt64(13),
            invalidatedReason: try statement.optionalString(14),
            restoreAttempts: try statement.int64(15),
            restoredCleanly: try statement.int64(16) != 0)
        guard try statement.int64(12) == generationChecksum(archive: archive, row: row) else {
            throw ArchiveStoreError.damagedArchive(archive, generation, "its header does not match its checksum")
        }
        // NULL: written before v0005.
        if let state = try statement.optionalInt64(17),
            state != generationStateChecksum(archive: archive, row: row)
        {
            throw ArchiveStoreError.damagedArchive(archive, generation, "its restoration state does not match its checksum")
        }
        return row
    }

    /// The header a generation row describes.
    static func header(_ row: GenerationRow, archive: ArchiveRow) throws -> ArchiveHeader {
        guard let appValues = HeaderValue.decode(row.appValues) else {
            throw ArchiveStoreError.damagedArchive(archive.name, row.generation, "its app values cannot be decoded")
        }
        return ArchiveHeader(
            archive: archive.name, generation: row.generation, storeFormat: Int(row.storeFormat),
            appVersion: row.appVersion, appBuild: row.appBuild, platform: row.platform, idiom: row.idiom,
            createdAt: Clock.date(milliseconds: archive.createdAt), savedAt: Clock.date(milliseconds: row.savedAt),
            state: row.state(), appValues: appValues, nodeCount: Int(row.nodeCount), totalBytes: Int(row.totalBytes),
            saveKind: row.saveKind)
    }

    // MARK: Node rows

    static let nodeColumns = "path, class_name, class_version, sibling_order, state, checksum, born"

    /// A node's state size as saved: its stored length, less the seal's bytes when sealed.
    static let plainLength = "length(state) - CASE WHEN substr(state, 1, 1) = x'E1' THEN \(StateSeal.overhead) ELSE 0 END"
}
