/// Something wrong that ``ArchiveStore/check()`` found, and where.
public struct StoreProblem: Hashable, Sendable, CustomStringConvertible {
    /// The archive concerned, if the problem is in one.
    public var archive: ArchiveName?
    /// The generation concerned, if the problem is in one.
    public var generation: Generation?
    /// The node concerned, if the problem is in one.
    public var path: RestorationPath?
    /// What is wrong, in words for a person.
    public var problem: String

    public var description: String {
        var place: [String] = []
        if let archive { place.append("archive '\(archive)'") }
        if let generation { place.append("generation \(generation)") }
        if let path { place.append("node '\(path)'") }
        return place.isEmpty ? problem : place.joined(separator: ", ") + ": " + problem
    }
}

extension ArchiveStore {
    /// At most this many of SQLite's own integrity messages are reported.
    private static let integrityMessageLimit = 20

    /// Checks the whole store in one read transaction: SQLite's integrity check, then every
    /// archive's row against its checksum and that the name index finds it under its name, then
    /// every retained generation of every archive (a damaged archive row does not stop it) — its
    /// header's checksum, each node's checksum, that each node's state can be decoded, that each
    /// node's parent is in the generation (no orphans), that no path is there twice, and that the
    /// nodes match the header's count and digest — then node rows that belong to no retained
    /// generation, and finally that each archive's crash marker and restore reports can be read,
    /// that no generation, node, marker or report belongs to no archive of the store, and that
    /// each entry of the lifecycle journal can be read and is in order (the newest not past
    /// the journal's counter).
    ///
    /// Sealed states (the Encryption trait) are opened with the store's key; a store opened
    /// without it checks them by their checksums only. A store file with other names (hard
    /// links), which a read-write open refuses, is a problem too, however sound its content,
    /// and so is a file shorter than its header says (cut short by a copy or a full disk).
    ///
    /// - Returns: the problems found, each once; empty for a healthy store.
    /// - Throws: when the store cannot be read at all, and
    ///   ``ArchiveStoreError/writeAheadLogNeedsRecovery(path:)`` when its write-ahead log
    ///   lacks commits its index names (what the store's reads throw then): what is read
    ///   through such a log is not what the store holds.
    public func check() throws(ArchiveStoreError) -> [StoreProblem] {
        let path = self.path
        let seal = self.seal
        let names = StoreLocation.names(ofFileAt: path)
        return try read { connection in
            var problems: [StoreProblem] = []
            if names > 1 {
                problems.append(StoreProblem(problem: "a read-write open refuses the store: \(StoreLocation.otherNames(names))"))
            }
            // A copy in memory (a store of an older schema, read-only) has no file to read: its
            // pages, migrated, are not the file's. The file's header, then the log's and the
            // file's sizes, are read once the transaction holds its read lock (its first read
            // takes it): no other connection can then both copy its log into the file and
            // truncate the log in between. Read before, a check put aside between them saw the
            // header of the store before an erase or a compaction and the sizes after it, and
            // called a healthy store cut short. (A file SQLite cannot read is looked at all the
            // same.)
            _ = try? connection.pragmaInteger("SELECT count(*) FROM sqlite_schema")
            // A log that lacks commits its index names (removed or cut while the store was
            // open) reads as zeros where they are, which the checks below took for damage,
            // and an app erases a store it is told is damaged.
            try connection.checkTheLogHoldsWhatItsIndexNames()
            if let header = connection.fileBytes(count: 100), let cut = StoreLocation.cutShort(path: path, header: header) {
                problems.append(StoreProblem(problem: cut))
            }
            do {
                let integrity = try connection.statement("PRAGMA integrity_check(\(Self.integrityMessageLimit))")
                defer { integrity.reset() }
                while try integrity.step() {
                    let message = try integrity.string(0)
                    guard message != "ok" else { continue }
                    // A message may span lines, led by one naming the schema ("*** in database main ***").
                    for line in message.split(separator: "\n") where !line.hasPrefix("*** in database") {
                        problems.append(StoreProblem(problem: "SQLite integrity check: \(line)"))
                    }
                }
            } catch {
                problems.append(StoreProblem(problem: "SQLite integrity check stopped: \(try Self.damage(error, path: path))"))
            }
            let (archives, unnamed): ([ArchiveRows.StoredArchive], [Int64])
            do {
                (archives, unnamed) = try ArchiveRows.storedArchives(in: connection)
            } catch {
                problems.append(StoreProblem(problem: "the list of archives cannot be read: \(try Self.damage(error, path: path))"))
                return Self.onceEach(problems)
            }
            for id in unnamed {
                problems.append(
                    StoreProblem(
                        problem: "an archive row (id \(id)) has a name that is not a valid archive name: its archive "
                            + "cannot be read, saved or discarded, and its rows stay until the store is erased"))
            }
            var misindexed: Set<Int64> = []
            do {
                misindexed = try ArchiveRows.misindexedArchives(in: connection)
            } catch {
                problems.append(StoreProblem(problem: "the name index of archives: \(try Self.damage(error, path: path))"))
            }
            // A damaged archive row is a problem of its archive; its generations and nodes,
            // which have checksums of their own, are checked all the same.
            var movedMarkers: [Int64] = []
            for archive in archives {
                if let damage = archive.damage {
                    problems.append(StoreProblem(archive: archive.row.name, problem: damage))
                }
                if misindexed.contains(archive.row.id) {
                    problems.append(StoreProblem(archive: archive.row.name, problem: Self.misindexedArchive))
                }
                problems += try Self.check(
                    archive.row, rowIsDamaged: archive.damage != nil, path: path, seal: seal, connection)
                problems += try Self.checkRecords(of: archive.row, path: path, movedMarkers: &movedMarkers, connection)
            }
            problems += try Self.checkRecordsOfNoArchive(
                path: path, namingTableDamage: archives.isEmpty, exceptMarkers: movedMarkers, connection)
            problems += try Self.checkJournal(path: path, connection)
            return Self.onceEach(problems)
        }
    }

    /// What `check()` says of an archive row that the name index does not find under its name.
    static let misindexedArchive =
        "the name index does not find its row under its name (damage lost or changed its entry): "
        + "a lookup of it by name fails, and so does a list of the archives (the store is damaged)"

    /// `problems` without repeats, in order. SQLite's check names a column's damage without
    /// its row, once for each row damaged so: the same words again say nothing more.
    private static func onceEach(_ problems: [StoreProblem]) -> [StoreProblem] {
        var named = Set<StoreProblem>()
        return problems.filter { named.insert($0).inserted }
    }

    /// The problems of an archive's crash marker and restore reports: what
    /// ``crashMarkers()`` and ``restoreReports(of:limit:)`` would fail to read, and a marker
    /// that damage moved to another key, whose key is added to `movedMarkers` (it is named
    /// here, as its archive's, not again as a marker of no archive).
    private static func checkRecords(
        of archive: ArchiveRows.ArchiveRow, path: String, movedMarkers: inout [Int64], _ connection: Connection
    ) throws -> [StoreProblem] {
        var problems: [StoreProblem] = []
        do {
            if let marker = try readMarker(of: archive, connection), let key = marker.storedUnder {
                movedMarkers.append(key)
                let problem =
                    marker.isUnreadable
                    ? "a crash marker stored under archive id \(key), of no archive, whose values match no archive's: "
                        + "as the store's only archive, its next launch takes it for a restoration of it that died"
                    : "its crash marker is stored under archive id \(key), not its own (\(archive.id)): damage changed "
                        + "its key (the archive's next launch still finds it)"
                problems.append(StoreProblem(archive: archive.name, problem: problem))
            }
        } catch let damaged as DamagedMarker {
            problems.append(
                StoreProblem(
                    archive: archive.name,
                    problem: "its crash marker is damaged (\(damaged.reason)): the archive's next launch takes it for a "
                        + "restoration that died"))
        } catch {
            let found = try damage(error, path: path)
            problems.append(StoreProblem(archive: archive.name, problem: "its crash marker: \(found)"))
        }
        do {
            let reports = try connection.statement(
                "SELECT sequence, report FROM restore_report WHERE archive_id = ? ORDER BY sequence")
            defer { reports.reset() }
            try reports.bind(archive.id, at: 1)
            while try reports.step() {
                // Damage may have left anything in the sequence too.
                let sequence = (try? reports.int64(0)).map { "restore report \($0)" } ?? "a restore report"
                if (try? reports.bytes(1)).flatMap(RestoreReport.init(storedBlob:)) == nil {
                    problems.append(StoreProblem(archive: archive.name, problem: "\(sequence) cannot be read"))
                }
            }
        } catch {
            let found = try damage(error, path: path)
            problems.append(StoreProblem(archive: archive.name, problem: "its restore reports: \(found)"))
        }
        return problems
    }

    /// Rows whose archive is no archive of the store: damage to their archive id, which moved
    /// them off their archive, or to the archive's row, which took it away (a discard, or an
    /// archive forgotten, deletes them with it). A lookup of an archive by name finds
    /// generations of no archive (damage to the store), but a list of the archives does not
    /// (`restorectl info`: "no archives"). A crash marker moved off its archive is named as
    /// its archive's when its checksum names one, or when the store's only archive takes it
    /// (its key is then in `exceptMarkers`); one that no archive takes (its values damaged
    /// too, or without a checksum, in a store of more archives) is judged by no launch.
    ///
    /// A table that cannot be read (dropped, damaged) is named only with `namingTableDamage`:
    /// the check of each archive, which reads the same tables, names it otherwise.
    private static func checkRecordsOfNoArchive(
        path: String, namingTableDamage: Bool, exceptMarkers: [Int64], _ connection: Connection
    ) throws -> [StoreProblem] {
        var problems: [StoreProblem] = []
        let tables = [
            ("generation", "generations"), ("node", "node rows"), ("crash_marker", "a crash marker"),
            ("restore_report", "restore reports"),
        ]
        for (table, what) in tables {
            do {
                let statement = try connection.statement(
                    "SELECT DISTINCT archive_id FROM \(table) WHERE archive_id NOT IN (SELECT id FROM archive) ORDER BY 1")
                defer { statement.reset() }
                while try statement.step() {
                    let key = try? statement.int64(0)
                    if table == "crash_marker", let key, exceptMarkers.contains(key) { continue }
                    let id = key.map(String.init) ?? "unreadable"
                    problems.append(StoreProblem(problem: "\(what) of no archive of the store (archive id \(id))"))
                }
            } catch {
                let found = try damage(error, path: path)
                if namingTableDamage { problems.append(StoreProblem(problem: "\(what): \(found)")) }
            }
        }
        return problems
    }

    /// The entries of the lifecycle journal that ``journal(limit:)`` would fail to read, and
    /// numbering that no entry can follow.
    private static func checkJournal(path: String, _ connection: Connection) throws -> [StoreProblem] {
        var problems: [StoreProblem] = []
        do {
            if try connection.pragmaInteger(numberingRanOut) == 1 {
                problems.append(
                    StoreProblem(
                        problem: "the lifecycle journal: its numbering has reached the highest integer "
                            + "(the next entry written starts it afresh)"))
            }
            let entries = try connection.statement("SELECT \(entryColumns) FROM journal ORDER BY rowid")
            defer { entries.reset() }
            var previous: Int64?
            while try entries.step() {
                // The table's order, which `journal(limit:)` finds out of order too.
                let sequence = try entries.int64(0)
                if let previous, previous >= sequence {
                    let error = ArchiveStoreError.damagedHistory(outOfOrder(previous, before: sequence))
                    problems.append(StoreProblem(problem: "the lifecycle journal: \(error.description)"))
                }
                previous = sequence
                do {
                    _ = try entry(entries)
                } catch {
                    let found = try damage(error, path: path)
                    problems.append(StoreProblem(problem: "journal entry \((try? entries.int64(0)) ?? 0): \(found)"))
                }
            }
            if let previous, let past = try pastTheCounter(previous, connection) {
                let error = ArchiveStoreError.damagedHistory(past)
                problems.append(StoreProblem(problem: "the lifecycle journal: \(error.description)"))
            }
        } catch {
            problems.append(StoreProblem(problem: "the lifecycle journal: \(try damage(error, path: path))"))
        }
        return problems
    }

    /// The words for damage that `error` stands for, to report as a problem; `error` itself,
    /// translated, is thrown when it is not damage (busy, an I/O error, …).
    private static func damage(_ error: any Error, path: String) throws(ArchiveStoreError) -> String {
        let translated = translated(error, path: path)
        guard translated.isDamage else { throw translated }
        return translated.description
    }

    /// The problems of one archive's generations and nodes. `rowIsDamaged`: its row does not
    /// match its checksum, so what it says of the newest generation is not checked.
    private static func check(
        _ archive: ArchiveRows.ArchiveRow, rowIsDamaged: Bool, path: String, seal: StateSeal?, _ connection: Connection
    ) throws -> [StoreProblem] {
        // Each generation read on its own: a damaged header is named, and the others checked.
        let (generations, damaged) = try ArchiveRows.generationsReadingEach(of: archive, in: connection)
        var problems = damaged.map { damage in
            StoreProblem(archive: archive.name, generation: damage.generation, problem: damage.reason)
        }
        if !rowIsDamaged, ArchiveRows.newestIsMissing(of: archive, generations, damaged) {
            problems.append(
                StoreProblem(archive: archive.name, generation: archive.generation, problem: ArchiveRows.newestHeaderMissing))
        }
        for generation in generations {
            func problem(_ path: RestorationPath?, _ text: String) {
                problems.append(
                    StoreProblem(archive: archive.name, generation: generation.generation, path: path, problem: text))
            }
            let snapshot: RestorationSnapshot
            do {
                snapshot = try restorationSnapshot(
                    of: archive, generation: generation, seal: seal, leavingSealed: true, connection)
            } catch {
                // Named under its archive and generation already: not again in the error's words
                // ("archive 'main', generation 9: Archive 'main' generation 9 is damaged: …").
                if case .damagedArchive(archive.name, generation.generation, let reason) = translated(error, path: path) {
                    problem(nil, reason)
                } else {
                    problem(nil, try damage(error, path: path))
                }
                continue
            }
            let paths = Set(snapshot.nodes.map(\.path))
            // Paths compare as `String`s (canonical equivalence): one path in two Unicode forms
            // is two rows apart in the store's byte order, other paths between them.
            var seen = Set<RestorationPath>()
            for node in snapshot.nodes {
                if !seen.insert(node.path).inserted { problem(node.path, "two nodes share this path") }
                if let damage = snapshot.damage[node.path] {
                    if case .sealRejected = damage {
                        problem(
                            node.path,
                            "its state does not open under the store's key "
                                + "(changed, moved, given another class, or saved before the store had a key)")
                    } else {
                        problem(node.path, "its content does not match its checksum")
                    }
                    continue
                }
                if let parent = node.parentPath, !paths.contains(parent) {
                    problem(node.path, "its parent '\(parent)' is not in the generation")
                }
                // Without the key a sealed state is checked by its checksum only.
                if seal == nil, StateSeal.isSealed(node.state) { continue }
                do {
                    _ = try StateValue.decode(blob: node.state)
                } catch {
                    problem(node.path, "its state cannot be decoded: \(error.description)")
                }
            }
        }
        // Rows that no retained generation reads: of another epoch, born after every generation
        // of theirs, or retired before.
        do {
            let stray = try connection.statement(
                """
                SELECT path, born FROM node WHERE archive_id = ?1 AND NOT EXISTS (SELECT 1 FROM generation \
                WHERE archive_id = ?1 AND epoch = node.epoch AND generation >= node.born \
                AND (node.died IS NULL OR node.died > generation))
                """)
            defer { stray.reset() }
            try stray.bind(archive.id, at: 1)
            while try stray.step() {
                let path = try? RestorationPath(parsing: try stray.string(0))
                problems.append(
                    StoreProblem(
                        archive: archive.name, path: path,
                        problem: "a node row (saved in generation \(try stray.int64(1))) belongs to no retained generation"))
            }
        } catch {
            problems.append(StoreProblem(archive: archive.name, problem: try damage(error, path: path)))
        }
        return problems
    }
}
