#if Encryption
import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

/// Encryption at rest (the Encryption trait): `swift test --traits Encryption`.
@Suite("Sealed states: AES-GCM bound to their node and generation")
struct EncryptionTests {
    private let key = StateEncryptionKey.generate()
    private let secret = "the user's unsent message"

    private func configuration(_ key: StateEncryptionKey?, retained: Int = 2) -> ArchiveStore.Configuration {
        var configuration = ArchiveStore.Configuration(retainedGenerations: retained)
        configuration.encryptionKey = key
        return configuration
    }

    /// A blob holding `text`, as a screen's coder writes it.
    private func blob(_ text: String) throws -> [UInt8] {
        let coder = StateEncoder()
        try coder.encode(text, forKey: "draft")
        return try coder.encodedBlob()
    }

    private func nodes(_ text: String) throws -> [ArchivedNode] {
        [
            ArchivedNode(path: try RestorationPath("Root"), className: "Screen", state: try blob(text)),
            ArchivedNode(path: try RestorationPath("Root", "A"), className: "Screen", state: try blob(text + " A")),
            ArchivedNode(path: try RestorationPath("Root", "B"), className: "Screen", state: try blob(text + " B")),
        ]
    }

    /// Rewrites a node row's stored state and its checksum, and the generation's digest and
    /// header checksum to match, as someone who can write the file and knows the
    /// (non-cryptographic) checksums would: only the seal stands in the way.
    private func replace(
        _ path: String, node: String, born: Generation, with stored: [UInt8], className: String = "Screen"
    ) throws {
        try rewrite(path, node: node, born: born) { row in
            row.state = stored
            row.className = className
        }
    }

    /// Changes a node row as stored (its state as sealed), as `replace` does.
    private func rewrite(_ path: String, node: String, born: Generation, _ change: (inout ArchivedNode) -> Void) throws {
        let connection = try Connection(filename: path, flags: 2 /* SQLITE_OPEN_READWRITE */)
        try withExtendedLifetime(connection) {
            let old = try connection.statement(
                "SELECT checksum, class_name, class_version, sibling_order, state FROM node WHERE path = ? AND born = ?")
            try old.bind(node, at: 1)
            try old.bind(born.rawValue, at: 2)
            #expect(try old.step())
            let oldChecksum = try old.int64(0)
            var archived = ArchivedNode(
                path: try RestorationPath(parsing: node), className: try old.string(1),
                classVersion: Int(try old.int64(2)), order: Int(try old.int64(3)), state: try old.bytes(4))
            old.reset()
            change(&archived)
            let checksum = ArchiveRows.nodeChecksum(archive: .main, node: archived, born: born)
            let update = try connection.statement(
                """
                UPDATE node SET class_name = ?, class_version = ?, sibling_order = ?, state = ?, checksum = ? \
                WHERE path = ? AND born = ?
                """)
            try update.bind(archived.className, at: 1)
            try update.bind(archived.classVersion, at: 2)
            try update.bind(archived.order, at: 3)
            try update.bind(bytes: archived.state, at: 4)
            try update.bind(checksum, at: 5)
            try update.bind(node, at: 6)
            try update.bind(born.rawValue, at: 7)
            try update.run()
            update.reset()
            // Every generation holding the row: its digest and header checksum. (Its total size
            // is left: a node whose seal fails excuses a size mismatch, as damage does.)
            let archive = try #require(try ArchiveRows.archive(named: .main, in: connection))
            for var generation in try ArchiveRows.generations(of: archive, in: connection) where generation.generation >= born {
                generation.nodeDigest = generation.nodeDigest &- oldChecksum &+ checksum
                let fix = try connection.statement("UPDATE generation SET node_digest = ?, checksum = ? WHERE generation = ?")
                try fix.bind(generation.nodeDigest, at: 1)
                try fix.bind(ArchiveRows.generationChecksum(archive: .main, row: generation), at: 2)
                try fix.bind(generation.generation.rawValue, at: 3)
                try fix.run()
                fix.reset()
            }
        }
    }

    private func storedState(_ path: String, node: String, born: Generation) throws -> [UInt8] {
        let connection = try Connection(filename: path, flags: 1 /* SQLITE_OPEN_READONLY */)
        let statement = try connection.statement("SELECT state FROM node WHERE path = ? AND born = ?")
        try statement.bind(node, at: 1)
        try statement.bind(born.rawValue, at: 2)
        #expect(try statement.step())
        return try withExtendedLifetime(connection) { try statement.bytes(0) }
    }

    @Test func sealedStatesRoundTripAndNoPlaintextReachesTheFile() throws {
        try withTemporaryStorePath { path in
            let saved = try nodes(secret)
            do {
                let store = try ArchiveStore(path: path, configuration: configuration(key))
                try store.save(saved, header: SampleArchives.header)
                #expect(try store.snapshot()?.nodes == saved)
                #expect(try store.node(at: saved[1].path) == saved[1])
                #expect(try store.check().isEmpty)
                let summary = try #require(try store.archives().first)
                #expect(summary.header?.totalBytes == saved.map(\.state.count).reduce(0, +))
                // An incremental save retires a sealed row and keeps the sizes right.
                var changed = saved[2]
                changed.state = try blob(secret + " changed")
                try store.saveChanges([changed], removing: [saved[1].path], basedOn: 1, header: SampleArchives.header)
                #expect(try store.snapshot()?.nodes == [saved[0], changed])
                #expect(try store.check().isEmpty)
            }
            for file in [path, path + "-wal"] {
                #expect(fileBytes(file)?.contains(bytes: Array(secret.utf8)) != true, "plaintext in \(file)")
            }
            #expect(fileBytes(path)?.isEmpty == false)
        }
    }

    @Test func aStateMovedToAnotherNodeIsRejected() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path, configuration: configuration(key)).save(try nodes(secret), header: SampleArchives.header)
            try replace(path, node: "Root/B", born: 1, with: try storedState(path, node: "Root/A", born: 1))
            let store = try ArchiveStore(path: path, configuration: configuration(key))
            let b = try RestorationPath("Root", "B")
            #expect(throws: ArchiveStoreError.sealRejected(.main, b, 1)) { () throws -> Void in _ = try store.snapshot() }
            #expect(throws: ArchiveStoreError.sealRejected(.main, b, 1)) { () throws -> Void in _ = try store.node(at: b) }
            #expect(try store.node(at: RestorationPath("Root", "A"))?.state == (try blob(secret + " A")))
            #expect(try store.check().contains { $0.path == b })
        }
    }

    @Test func aStateReplayedFromAnotherGenerationIsRejected() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path, configuration: configuration(key))
            try store.save(try nodes(secret), header: SampleArchives.header)
            try store.save(try nodes(secret + " again"), header: SampleArchives.header)
            // Generation 1's sealed root, put back into generation 2's row.
            try replace(path, node: "Root", born: 2, with: try storedState(path, node: "Root", born: 1))
            #expect(throws: ArchiveStoreError.sealRejected(.main, try RestorationPath("Root"), 2)) {
                () throws -> Void in _ = try store.snapshot()
            }
            #expect(try store.snapshot(generation: 1)?.nodes == (try nodes(secret)))
        }
    }

    @Test func aRestorationLeavesOutAMovedStateAndRestoresTheRest() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path, configuration: configuration(key))
            try makeEngine(store).preserve([Probe("Root", [Probe("A", value: "a", [Probe("Below")]), Probe("B", value: "b")])])
            // B's sealed state put in A's row (with a checksum to match): A must not restore as B.
            try replace(path, node: "Root/A", born: 1, with: try storedState(path, node: "Root/B", born: 1), className: "Probe")
            let b = Probe("B")
            let result = try makeEngine(store).restore([Probe("Root", [Probe("A", [Probe("Below")]), b])])
            #expect(result.report.nodes.map(\.outcome) == [
                .restored, .failed(.checksumMismatch), .skipped(.parentNotRestored), .restored,
            ])
            #expect(b.value == "b")
        }
    }

    /// A sealed state is bound to its node's class, class version and order too: a row given
    /// another of them (with a checksum to match) does not open, so that no object of another
    /// class gets the state (R7), nor the state of another version of its class (R12).
    @Test(arguments: ["class name", "class version", "order"])
    func aSealedStateGivenAnotherClassVersionOrOrderIsRejected(change: String) throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path, configuration: configuration(key)).save(try nodes(secret), header: SampleArchives.header)
            try rewrite(path, node: "Root/A", born: 1) { row in
                switch change {
                case "class name": row.className = "Settings"
                case "class version": row.classVersion += 1
                default: row.order += 1
                }
            }
            let store = try ArchiveStore(path: path, configuration: configuration(key))
            let a = try RestorationPath("Root", "A")
            #expect(throws: ArchiveStoreError.sealRejected(.main, a, 1)) { () throws -> Void in _ = try store.snapshot() }
            #expect(try store.check().map(\.path) == [a])
            #expect(try store.check().first?.problem.hasPrefix("its state does not open under the store's key") == true)
            #expect(try store.inspectionSnapshot()?.nodeDamage == [a: .sealRejected(.main, a, 1)])
            // The row as it was opens again: only the change stood in the way.
            try rewrite(path, node: "Root/A", born: 1) { row in
                row.className = "Screen"
                row.classVersion = 0
                row.order = 0
            }
            #expect(try store.snapshot()?.nodes == (try nodes(secret)))
        }
    }

    /// A store sealed before the class, version and order were bound (`Fixtures/sealed-v1.sqlite`)
    /// reads as it did, and what a save writes into it is bound to them.
    @Test func aStoreSealedBeforeClassesWereBoundStillOpens() throws {
        try withTemporaryStorePath { path in
            try SchemaV6Fixture.copy(to: path, fixture: "sealed-v1.sqlite")
            let fixtureKey = try StateEncryptionKey(bytes: Array(0..<32))
            let store = try ArchiveStore(path: path, configuration: configuration(fixtureKey))
            try SchemaV6Fixture.expectRetainedGenerations(in: store)

            try store.save(try nodes(secret), header: SampleArchives.header)
            #expect(try store.snapshot()?.nodes == (try nodes(secret)))
            try rewrite(path, node: "Root/A", born: 4) { $0.className = "Settings" }
            #expect(throws: ArchiveStoreError.sealRejected(.main, try RestorationPath("Root", "A"), 4)) {
                () throws -> Void in _ = try store.snapshot()
            }
        }
    }

    @Test(arguments: ["flip", "truncate", "unsealed"])
    func aChangedSealedStateIsRejected(change: String) throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path, configuration: configuration(key)).save(try nodes(secret), header: SampleArchives.header)
            var stored = try storedState(path, node: "Root/A", born: 1)
            switch change {
            case "flip": stored[stored.count / 2] ^= 0x04
            case "truncate": stored.removeLast(5)
            default: stored = try blob(secret)
            }
            try replace(path, node: "Root/A", born: 1, with: stored)
            let store = try ArchiveStore(path: path, configuration: configuration(key))
            #expect(throws: ArchiveStoreError.sealRejected(.main, try RestorationPath("Root", "A"), 1)) {
                () throws -> Void in _ = try store.snapshot()
            }
        }
    }

    @Test func aWrongKeyIsRefusedWhenTheStoreOpens() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path, configuration: configuration(key)).save(try nodes(secret), header: SampleArchives.header)
            let before = fileBytes(path)
            for mode in [ArchiveStore.AccessMode.readWrite, .readOnly] {
                #expect(throws: ArchiveStoreError.wrongEncryptionKey) {
                    try ArchiveStore(path: path, mode: mode, configuration: configuration(.generate()))
                }
            }
            #expect(fileBytes(path) == before)
        }
    }

    /// An app that lost its key (a new device, a reset keychain) erases the store and starts
    /// afresh with a new one.
    @Test func aStoreWhoseKeyIsLostIsErasedAndSealedWithANewKey() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path, configuration: configuration(key)).save(try nodes(secret), header: SampleArchives.header)
            let newKey = StateEncryptionKey.generate()
            let error = try #require(throws: ArchiveStoreError.self) { try ArchiveStore(path: path, configuration: configuration(newKey)) }
            #expect(error.isUnusableStore)

            try ArchiveStore.erase(at: path)

            let store = try ArchiveStore(path: path, configuration: configuration(newKey))
            try store.save(try nodes(secret), header: SampleArchives.header)
            #expect(try store.snapshot()?.nodes.count == 3)
            #expect(throws: ArchiveStoreError.wrongEncryptionKey) { try ArchiveStore(path: path, configuration: configuration(key)) }
        }
    }

    @Test func withoutTheKeyHeadersReadAndStatesAreRefused() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path, configuration: configuration(key)).save(try nodes(secret), header: SampleArchives.header)
            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try store.header()?.nodeCount == 3)
            // Checked by their checksums, without opening them.
            #expect(try store.check().isEmpty)
            #expect(throws: ArchiveStoreError.encryptionKeyRequired(.main, try RestorationPath("Root"))) {
                () throws -> Void in _ = try store.snapshot()
            }
        }
    }

    @Test func statesSavedBeforeAKeyWasSetAreRefusedUnderIt() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try nodes(secret), header: SampleArchives.header)
            let store = try ArchiveStore(path: path, configuration: configuration(key))
            #expect(throws: ArchiveStoreError.sealRejected(.main, try RestorationPath("Root"), 1)) {
                () throws -> Void in _ = try store.snapshot()
            }
            // Saving anew seals everything.
            try store.save(try nodes(secret), header: SampleArchives.header)
            #expect(try store.snapshot()?.nodes == (try nodes(secret)))
        }
    }

    @Test func aKeyIs32Bytes() throws {
        #expect(throws: ArchiveStoreError.invalidConfiguration("an encryption key must be 32 bytes")) {
            try StateEncryptionKey(bytes: [UInt8](repeating: 1, count: 31))
        }
        let bytes = [UInt8](repeating: 7, count: 32)
        #expect(try StateEncryptionKey(bytes: bytes).bytes == bytes)
        #expect(try StateEncryptionKey(bytes: bytes) == StateEncryptionKey(bytes: bytes))
        #expect(StateEncryptionKey.generate() != StateEncryptionKey.generate())
    }

    /// A key's hash is made of no key material (a hash is no secret: it may be logged, or
    /// told by timing a set's lookups): every key hashes alike, and keys are told apart by
    /// `==` alone.
    @Test func aKeysHashHoldsNothingOfTheKey() throws {
        let keys = [try StateEncryptionKey(bytes: [UInt8](repeating: 7, count: 32))] + (1...8).map { _ in StateEncryptionKey.generate() }
        #expect(Set(keys.map(\.hashValue)).count == 1)
        #expect(Set(keys).count == keys.count)
    }
}
#endif
