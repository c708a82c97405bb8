/// Writes the node rows of one save into an archive, through one statement prepared for the
/// whole save.
struct NodeRowWriter {
    private let archive: ArchiveRows.ArchiveRow
    private let seal: StateSeal?
    private let checksumStart: UInt64
    private let statement: Statement

    init(archive: ArchiveRows.ArchiveRow, seal: StateSeal?, connection: Connection) throws {
        self.archive = archive
        self.seal = seal
        checksumStart = NodeChecksum.start(archive: archive.name)
        statement = try connection.statement(
            """
            INSERT INTO node (archive_id, path, born, class_name, class_version, sibling_order, state, checksum, epoch) \
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
    }

    /// Inserts a node born in `generation` into `epoch`, its state sealed when the store has a
    /// `seal`; returns its checksum, which covers the state as stored.
    func insert(_ node: ArchivedNode, born generation: Generation, epoch: Generation) throws -> Int64 {
        var state = node.state
        if let seal {
            let place = StateSeal.Place(
                archive: archive.name, pathText: node.path.description, className: node.className,
                classVersion: Int64(node.classVersion), order: Int64(node.order), born: generation)
            state = try seal.seal(state, for: place)
        }
        defer { statement.reset() }
        try statement.bind(archive.id, at: 1)
        try statement.bind(generation.rawValue, at: 3)
        try statement.bind(node.classVersion, at: 5)
        try statement.bind(node.order, at: 6)
        try statement.bind(epoch.rawValue, at: 9)
        // The path, the class name and the state are bound in place and checksummed from the
        // same bytes: SQLite copied each, and the checksum took the strings' bytes again, about
        // 2,300 instructions a row.
        let inserted = UTF8Text.withBytes(of: node.path.description) { path in
            UTF8Text.withBytes(of: node.className) { className in
                state.withUnsafeBytes { stateBytes in
                    Result { () throws(DatabaseError) -> Int64 in
                        defer { statement.reset() }  // before the bytes go
                        let checksum = NodeChecksum.checksum(
                            start: checksumStart, path: path, className: className,
                            classVersion: Int64(node.classVersion), order: Int64(node.order),
                            born: generation.rawValue, state: stateBytes)
                        try statement.bind(inPlaceText: path, at: 2)
                        try statement.bind(inPlaceText: className, at: 4)
                        try statement.bind(inPlaceBlob: stateBytes, at: 7)
                        try statement.bind(checksum, at: 8)
                        try statement.run()
                        return checksum
                    }
                }
            }
        }
        return try inserted.get()
    }
}

/// Reads node rows of one archive selected with ``ArchiveRows/nodeColumns``, verifies their
/// checksums and opens their seals.
struct NodeRowReader {
    private let archive: ArchiveName
    private let seal: StateSeal?
    private let leavingSealed: Bool
    private let checksumStarts: ArchiveRows.NodeChecksumStarts
    /// The class name of the row read last. An archive's nodes share a few class names: the
    /// next row's, when the same bytes, is this string again rather than a new one.
    private var className = ""

    /// - Parameter leavingSealed: return a sealed state as stored when there is no `seal`
    ///   (checking without the key) rather than throw.
    init(archive: ArchiveName, seal: StateSeal?, leavingSealed: Bool = false) {
        self.archive = archive
        self.seal = seal
        self.leavingSealed = leavingSealed
        checksumStarts = ArchiveRows.NodeChecksumStarts(archive: archive)
    }

    /// Reads the statement's current row, verified, and throws the row's rejection if any.
    mutating func node(_ statement: Statement, generation: Generation) throws -> (node: ArchivedNode, checksum: Int64) {
        let row = try read(statement, generation: generation)
        if let rejection = row.rejection { throw rejection }
        return (row.node, row.checksum)
    }

    /// Reads the statement's current row: ``copy(_:into:state:)``, then
    /// ``verify(_:in:state:generation:)``.
    mutating func read(_ statement: Statement, generation: Generation) throws
        -> (node: ArchivedNode, checksum: Int64, rejection: ArchiveStoreError?)
    {
        var bytes: [UInt8] = []
        var state: [UInt8] = []
        let row = Self.copy(statement, into: &bytes, state: &state)
        return try bytes.withUnsafeBytes { bytes in
            try verify(row, in: bytes, state: state, generation: generation)
        }
    }

    /// The statement's current row as SQLite gives it, copied out before the next step: the
    /// path's and the class name's bytes appended to `bytes`, the state into `state`. Only the
    /// path's storage class is noted here (a path that is not text is damage to the
    /// generation, which ``verify(_:in:state:generation:)`` throws); the checksum covers every
    /// other column, whose storage classes are not checked
    /// (six calls, about 330 instructions a row): a value of another class reads as SQLite
    /// converts it and fails the checksum, damage to this node alone, and the same bytes or
    /// number in another class (a state as text) read as they were saved.
    ///
    /// A generation's rows are all copied first, then all verified: each loop's code (SQLite's
    /// step and column reads; then the checksum, the strings and the checks) stays in the
    /// instruction cache, where one loop doing both missed it 20 to 35 more times a row than the
    /// floor's (callgrind's cache simulation; now about as often as the floor's). The rows are
    /// plain numbers and one buffer of text, so that keeping them costs no reference counting;
    /// each state is copied once, into the array its node will hold, so a read holds each
    /// state's bytes once.
    static func copy(_ statement: Statement, into bytes: inout [UInt8], state: inout [UInt8]) -> StoredNodeRow {
        let pathIsText = statement.isText(0)
        let path = statement.uncheckedBytes(0)
        let className = statement.uncheckedBytes(1)
        let start = bytes.count
        bytes.append(contentsOf: path)
        bytes.append(contentsOf: className)
        // From a typed buffer, as `Statement.bytes(_:)` does.
        state = [UInt8](statement.uncheckedBytes(4).assumingMemoryBound(to: UInt8.self))
        return StoredNodeRow(
            start: start, pathCount: path.count, pathIsText: pathIsText, classNameCount: className.count,
            classVersion: statement.uncheckedInt64(2), order: statement.uncheckedInt64(3),
            checksum: statement.uncheckedInt64(5), born: statement.uncheckedInt64(6))
    }

    /// Verifies a row copied by ``copy(_:into:state:)`` into `bytes` and `state`, and makes its
    /// node. `rejection` is the error for a row that does not match its checksum or whose seal
    /// does not open (its state is then left as stored). A row whose path cannot be read is
    /// damage to the whole archive; a sealed state without a `seal` to open it throws
    /// ``ArchiveStoreError/encryptionKeyRequired(_:_:)``, unless `leavingSealed`.
    mutating func verify(
        _ row: StoredNodeRow, in bytes: UnsafeRawBufferPointer, state: [UInt8], generation: Generation
    ) throws -> (node: ArchivedNode, checksum: Int64, rejection: ArchiveStoreError?) {
        // The checksum is computed on the bytes the strings and the state are made from.
        let pathBytes = UnsafeRawBufferPointer(rebasing: bytes[row.start..<row.start &+ row.pathCount])
        // Paths are stored as text, in their canonical form; anything else (another type, bytes
        // that are not UTF-8, another form) is damage to the generation, whose tree it breaks,
        // not to the whole store.
        guard row.pathIsText, let pathText = UTF8Text.string(validating: pathBytes.assumingMemoryBound(to: UInt8.self)),
            let path = RestorationPath(canonicalText: pathText)
        else {
            throw ArchiveStoreError.damagedArchive(archive, generation, Self.unreadablePath)
        }
        let classNameStart = row.start &+ row.pathCount
        let classNameEnd = classNameStart &+ row.classNameCount
        let classNameBytes = UnsafeRawBufferPointer(rebasing: bytes[classNameStart..<classNameEnd])
        // Made where it is returned, from `let`s: one built in a `var` was copied out (three
        // retains and releases a row).
        func node(_ state: [UInt8], _ className: String) -> ArchivedNode {
            ArchivedNode(
                path: path, className: className, classVersion: Int(truncatingIfNeeded: row.classVersion),
                order: Int(truncatingIfNeeded: row.order), state: state)
        }
        // The checksum covers the parent the path implies (until v0009, also a column of its own).
        let intact = state.withUnsafeBytes { state in
            ArchiveRows.nodeChecksumMatches(
                row.checksum, starts: checksumStarts, path: pathBytes, className: classNameBytes,
                classVersion: row.classVersion, order: row.order, born: row.born, state: state)
        }
        // A class name that is not UTF-8 is damage to this node alone, as any other change to
        // it is: the checksum covers its bytes as saved, which were UTF-8. It is shown with
        // replacement characters where its bytes are not.
        guard intact, let className = try? className(stored: classNameBytes) else {
            let shown = String(decoding: classNameBytes, as: UTF8.self)
            return (node(state, shown), row.checksum, ArchiveStoreError.damagedNode(archive, path, generation))
        }
        if seal != nil || StateSeal.isSealed(state) {
            guard let seal else {
                if leavingSealed { return (node(state, className), row.checksum, nil) }
                throw ArchiveStoreError.encryptionKeyRequired(archive, path)
            }
            let place = StateSeal.Place(
                archive: archive, pathText: pathText, className: className, classVersion: row.classVersion,
                order: row.order, born: Generation(row.born))
            guard let opened = seal.open(state, for: place) else {
                return (node(state, className), row.checksum, ArchiveStoreError.sealRejected(archive, path, generation))
            }
            return (node(opened, className), row.checksum, nil)
        }
        return (node(state, className), row.checksum, nil)
    }

    /// Why a generation with a node whose path cannot be read is damaged.
    static let unreadablePath = "a node has an unreadable path"

    /// The class name, validated as UTF-8 unless it is the previous row's bytes.
    private mutating func className(stored: UnsafeRawBufferPointer) throws -> String {
        if UTF8Text.withBytes(of: className, { $0.hasSameBytes(as: stored) }) { return className }
        className = try Statement.string(validating: stored, column: "class_name")
        return className
    }
}

/// A node row's columns as ``NodeRowReader/copy(_:into:state:)`` copies them out of a
/// statement, but its state: where its path's and class name's bytes are, one after the other,
/// in the bytes of the rows copied together, and its numbers.
struct StoredNodeRow {
    var start: Int
    var pathCount: Int
    /// Whether SQLite holds the path as text: only damage stores another type there.
    var pathIsText: Bool
    var classNameCount: Int
    var classVersion: Int64
    var order: Int64
    var checksum: Int64
    var born: Int64
}
