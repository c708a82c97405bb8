import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

@Suite("Saving and reading archives")
struct StoreSavingTests {
    let header = SampleArchives.header

    @Test func fullSaveRoundTripsEveryField() throws {
        try withTemporaryStore { store in
            var nodes = try SampleArchives.tree(count: 50)
            nodes[3].state = [0, 255, 0, 1]
            nodes[4].state = []
            nodes[5].classVersion = -7
            nodes[6].order = Int.max
            let result = try store.save(nodes, header: header)
            #expect(result.generation == 1)
            #expect(result.kind == .full)
            #expect(result.nodesWritten == 50)
            #expect(result.nodeCount == 50)

            let snapshot = try #require(try store.snapshot(of: .main))
            #expect(snapshot.nodes == nodes.sorted { $0.path < $1.path })
            #expect(snapshot.header.generation == 1)
            #expect(snapshot.header.appVersion == "11.0")
            #expect(snapshot.header.appBuild == "1024")
            #expect(snapshot.header.platform == "linux")
            #expect(snapshot.header.idiom == "phone")
            #expect(snapshot.header.appValues == header.appValues)
            #expect(snapshot.header.storeFormat == ArchiveStore.storeFormat)
            #expect(snapshot.header.state == .valid)
            #expect(snapshot.header.nodeCount == 50)
            #expect(snapshot.header.totalBytes == nodes.reduce(0) { $0 + $1.state.count })
            #expect(snapshot.header.saveKind == .full)
        }
    }

    /// What each durability asks of SQLite's syncs: `normal` syncs at checkpoints alone,
    /// `full` every commit, with `F_FULLFSYNC` where the system has it (Apple's plain fsync
    /// leaves the data in the drive's cache); every checkpoint uses it (a connection's own
    /// setting, `SQLiteLayerTests`). The torture suite's `power-cut` scenario shows what each
    /// keeps through a power loss; on Linux `F_FULLFSYNC` changes nothing, so only the settings
    /// can be checked here.
    @Test(arguments: [ArchiveStore.Durability.normal, .full])
    func eachDurabilityAsksSQLiteForItsSyncs(durability: ArchiveStore.Durability) throws {
        try withTemporaryStore(configuration: .init(durability: durability)) { store in
            let settings = try store.withConnection { connection in
                try ["synchronous", "fullfsync", "checkpoint_fullfsync"].map {
                    try connection.pragmaInteger("PRAGMA \($0)")
                }
            }
            #expect(settings == (durability == .full ? [2, 1, 1] : [1, 0, 1]))
        }
    }

    @Test func snapshotListsParentsBeforeChildren() throws {
        try withTemporaryStore { store in
            let nodes = try SampleArchives.tree(count: 200).shuffled()
            try store.save(nodes, header: header)
            let read = try #require(try store.snapshot()).nodes
            var seen: Set<RestorationPath> = []
            for node in read {
                if let parent = node.parentPath { #expect(seen.contains(parent)) }
                seen.insert(node.path)
            }
        }
    }

    @Test func headerValuesOfEveryKindRoundTrip() throws {
        try withTemporaryStore { store in
            let values: HeaderValues = [
                "bool": .bool(true), "int": .int(Int64.min), "double": .double(-0.0), "nan": .double(.infinity),
                "string": .string(""), "bytes": .bytes([0, 1, 255]), "ünï": .string("\u{202E}x\u{1B}"),
            ]
            try store.save([], header: SaveHeader(appVersion: "1", appBuild: "1", appValues: values))
            #expect(try store.header()?.appValues == values)
        }
    }

    /// App values are read back only in the one form `HeaderValue.encode(_:)` writes (keys
    /// strictly ascending, a bool 0 or 1, nothing after the last entry; the documented rule of
    /// `decode(_:)`): other bytes, which the generation's checksum lets through only when they
    /// were written so, are damage, never values read otherwise than they were saved.
    @Test func appValuesAreReadOnlyInTheFormTheyAreWritten() throws {
        let values: HeaderValues = ["a": .bool(true), "b": .int(-3)]
        let encoded = try HeaderValue.encode(values)
        func entry(_ key: String, _ tag: UInt8, _ payload: [UInt8]) -> [UInt8] {
            [UInt8](littleEndian: UInt32(key.utf8.count)) + Array(key.utf8) + [tag] + payload
        }
        let a = entry("a", 1, [1])  // tag 1: bool
        let b = entry("b", 2, [UInt8](littleEndian: Int64(-3)))  // tag 2: int
        let two: [UInt8] = [1] + [UInt8](littleEndian: UInt32(2))  // encoding version 1, two entries
        let one: [UInt8] = [1] + [UInt8](littleEndian: UInt32(1))
        #expect(two + a + b == encoded)
        #expect(HeaderValue.decode(encoded) == values)
        #expect(HeaderValue.decode(two + b + a) == nil, "keys out of order")
        #expect(HeaderValue.decode(two + a + a) == nil, "a key twice")
        #expect(HeaderValue.decode(one + entry("a", 1, [0])) == ["a": .bool(false)])
        #expect(HeaderValue.decode(one + entry("a", 1, [2])) == nil, "a bool neither 0 nor 1")
        #expect(HeaderValue.decode(one + entry("", 1, [1])) == nil, "an empty key")
        #expect(HeaderValue.decode(encoded + [0]) == nil, "a byte after the last entry")
        for length in 0..<encoded.count { #expect(HeaderValue.decode(Array(encoded.prefix(length))) == nil) }
    }

    /// The app values' bound is the largest encoded size accepted: values that fill it are
    /// saved and read back; one byte more is refused, and the save with it.
    @Test func appValuesMayFillExactlyTheirBound() throws {
        // The encoding of one empty byte value: version, count, key length, "k", tag, length.
        let framing = try HeaderValue.encode(["k": .bytes([])]).count
        let largest = HeaderValue.bytes(Array(repeating: 7, count: HeaderValue.maximumEncodedSize - framing))
        #expect(try HeaderValue.encode(["k": largest]).count == HeaderValue.maximumEncodedSize)
        let tooLarge = HeaderValue.bytes(Array(repeating: 7, count: HeaderValue.maximumEncodedSize - framing + 1))
        try withTemporaryStore { store in
            try store.save([], header: SaveHeader(appVersion: "1", appBuild: "1", appValues: ["k": largest]))
            #expect(try store.header()?.appValues == ["k": largest])
            #expect(throws: ArchiveStoreError.invalidHeaderValue("the header's app values exceed 1048576 bytes")) {
                try store.save([], header: SaveHeader(appVersion: "2", appBuild: "1", appValues: ["k": tooLarge]))
            }
            #expect(try store.header()?.appVersion == "1")
        }
    }

    @Test func incrementalSaveWritesOnlyChangesAndReadsBackTheWholeArchive() throws {
        try withTemporaryStore { store in
            let nodes = try SampleArchives.tree(count: 30)
            let first = try store.save(nodes, header: header)
            var changed = nodes[7]
            changed.state = [9, 9, 9]
            let added = ArchivedNode(path: try nodes[7].path.appending("new"), className: "Added", state: [1])
            let result = try store.saveChanges([added, changed], basedOn: first.generation, header: header)
            #expect(result.generation == 2)
            #expect(result.kind == .incremental)
            #expect(result.nodesWritten == 2)
            #expect(result.nodesRemoved == 0)
            #expect(result.nodeCount == 31)

            var expected = nodes
            expected[7] = changed
            expected.append(added)
            let snapshot = try #require(try store.snapshot())
            #expect(snapshot.nodes == expected.sorted { $0.path < $1.path })
            #expect(snapshot.header.saveKind == .incremental)
            #expect(snapshot.header.nodeCount == 31)
            // The previous generation is still readable as it was.
            #expect(try store.snapshot(generation: 1)?.nodes == nodes.sorted { $0.path < $1.path })
        }
    }

    /// Rows SQLite changed, not time: an incremental save of one node touches the same number
    /// of rows whatever the archive's size.
    @Test(arguments: [10, 1_000, 10_000])
    func incrementalSaveCostDoesNotGrowWithTheArchive(size: Int) throws {
        try withTemporaryStore { store in
            let nodes = try SampleArchives.tree(count: size)
            var base = try store.save(nodes, header: header).generation
            // Two rounds first, so that pruning has retired rows to delete as it will in use.
            var touched: [Int] = []
            for round in 0..<4 {
                var node = nodes[size / 2]
                node.state = [UInt8(round)]
                let before = try store.withConnection { $0.totalChanges }
                base = try store.saveChanges([node], basedOn: base, header: header).generation
                touched.append(try store.withConnection { $0.totalChanges } - before)
            }
            // Retire the old row, insert the new one, insert the header, advance the archive,
            // prune one header and one retired row.
            #expect(touched.suffix(2) == [6, 6])
        }
    }

    @Test func removingANodeRemovesItsWholeSubtree() throws {
        try withTemporaryStore { store in
            let a = try RestorationPath("A")
            let nodes = [
                ArchivedNode(path: a, className: "A", state: [1]),
                ArchivedNode(path: try a.appending("B"), className: "B", state: [2]),
                ArchivedNode(path: try a.appending("B").appending("C"), className: "C", state: [3]),
                // Sorts between "A/B" and "A/B/C" byte-wise, but is not below A/B.
                ArchivedNode(path: try a.appending("B-sibling"), className: "S", state: [4]),
                ArchivedNode(path: try a.appending("B0"), className: "S", state: [5]),
            ]
            let first = try store.save(nodes, header: header)
            let result = try store.saveChanges([], removing: [try a.appending("B")], basedOn: first.generation, header: header)
            #expect(result.nodesRemoved == 2)
            let remaining = try #require(try store.snapshot()).nodes.map(\.path.description)
            #expect(remaining == ["A", "A/B-sibling", "A/B0"])
        }
    }

    @Test func incrementalSaveRefusesAStaleBase() throws {
        try withTemporaryStore { store in
            let nodes = try SampleArchives.tree(count: 3)
            try store.save(nodes, header: header)
            try store.save(nodes, header: header)
            #expect(throws: ArchiveStoreError.generationConflict(.main, expected: 1, found: 2)) {
                try store.saveChanges([], basedOn: 1, header: header)
            }
            #expect(throws: ArchiveStoreError.archiveNotFound(try ArchiveName("other"))) {
                try store.saveChanges([], basedOn: 1, header: header, in: try ArchiveName("other"))
            }
        }
    }

    @Test func saveRefusesDuplicatePathsNamingBothClasses() throws {
        try withTemporaryStore { store in
            let path = try RestorationPath("Pages", "MILK_webview")
            let nodes = [
                ArchivedNode(path: try RestorationPath("Pages"), className: "PageList", state: []),
                ArchivedNode(path: path, className: "MilkPage", state: [1]),
                ArchivedNode(path: path, className: "YogurtPage", state: [2]),
            ]
            let error = try #require(throws: ArchiveStoreError.self) { try store.save(nodes, header: header) }
            #expect(error == .duplicatePath(path, firstClass: "MilkPage", secondClass: "YogurtPage"))
            #expect(
                error.description
                    == "Two objects share the restoration path 'Pages/MILK_webview': one of class MilkPage and one of class YogurtPage.")
            #expect(try store.snapshot() == nil)
        }
    }

    @Test func saveRefusesANodeWithoutItsParent() throws {
        try withTemporaryStore { store in
            let orphan = try RestorationPath("A", "B", "C")
            let nodes = [
                ArchivedNode(path: try RestorationPath("A"), className: "A", state: []),
                ArchivedNode(path: orphan, className: "C", state: []),
            ]
            #expect(throws: ArchiveStoreError.missingParent(orphan)) { try store.save(nodes, header: header) }
            let first = try store.save([nodes[0]], header: header)
            #expect(throws: ArchiveStoreError.missingParent(orphan)) {
                try store.saveChanges([nodes[1]], basedOn: first.generation, header: header)
            }
            // Removing a parent while changing its child leaves the child without a parent.
            let child = ArchivedNode(path: try RestorationPath("A", "B"), className: "B", state: [])
            #expect(throws: ArchiveStoreError.missingParent(child.path)) {
                try store.saveChanges([child], removing: [nodes[0].path], basedOn: first.generation, header: header)
            }
            // Nothing of the failed saves was written.
            #expect(try store.snapshot()?.header.generation == 1)
            #expect(try store.snapshot()?.nodes == [nodes[0]])
        }
    }

    @Test func generationsAreRetainedAndOlderOnesPruned() throws {
        try withTemporaryStore(configuration: .init(retainedGenerations: 3)) { store in
            var results: [SaveResult] = []
            for fill in UInt8(1)...6 {
                results.append(try store.save(try SampleArchives.tree(count: 10, fill: fill), header: header))
            }
            #expect(results.map(\.generation) == [1, 2, 3, 4, 5, 6])
            #expect(results[3].prunedGenerations == [1])
            #expect(results[5].prunedGenerations == [3])
            #expect(try store.generations().map(\.generation) == [6, 5, 4])
            for generation in [Generation(4), 5, 6] {
                let snapshot = try #require(try store.snapshot(generation: generation))
                #expect(snapshot.nodes.allSatisfy { $0.state.allSatisfy { $0 == UInt8(generation.rawValue) } })
            }
            #expect(throws: ArchiveStoreError.generationNotFound(.main, 3)) { try store.snapshot(generation: 3) }
            // Read as "the newest at or below": above the newest is not found either.
            #expect(throws: ArchiveStoreError.generationNotFound(.main, 7)) { try store.snapshot(generation: 7) }
        }
    }

    /// A full save starts an epoch of its own and leaves the previous generation's rows as they
    /// were (v0007): each node is written once, not also retired. An epoch's rows are deleted
    /// together by the save that prunes the last retained generation reading them.
    @Test func aFullSaveLeavesThePreviousGenerationsRowsUntouched() throws {
        try withTemporaryStore { store in
            func rowsPerEpoch() throws -> [Int64: Int64] {
                try store.withConnection { connection in
                    let statement = try connection.statement("SELECT epoch, count(*) FROM node GROUP BY epoch")
                    var counts: [Int64: Int64] = [:]
                    while try statement.step() { counts[try statement.int64(0)] = try statement.int64(1) }
                    return counts
                }
            }
            /// Every stored byte of an epoch's rows.
            func rows(ofEpoch epoch: Int) throws -> String? {
                try store.withConnection { connection in
                    try connection.pragmaText(
                        """
                        SELECT group_concat(hex(path) || ' ' || born || ' ' || coalesce(died, '-') || ' ' \
                        || class_name || ' ' || class_version || ' ' \
                        || sibling_order || ' ' || hex(state) || ' ' || checksum, ',') \
                        FROM (SELECT * FROM node WHERE epoch = \(epoch) ORDER BY path, born)
                        """)
                }
            }
            // States a coder wrote, so that `check()` decodes them too.
            func tree(_ fill: UInt8) throws -> [ArchivedNode] {
                try SampleArchives.tree(count: 10).map { node in
                    let coder = StateEncoder()
                    try coder.encode(Int(fill), forKey: "fill")
                    var node = node
                    node.state = try coder.encodedBlob()
                    return node
                }
            }

            try store.save(try tree(1), header: header)
            let first = try rows(ofEpoch: 1)
            #expect(try rowsPerEpoch() == [1: 10])
            let second = try store.save(try tree(2), header: header)
            #expect(second.nodesRemoved == 10 && second.prunedGenerations.isEmpty)
            #expect(try rows(ofEpoch: 1) == first)
            #expect(try rowsPerEpoch() == [1: 10, 2: 10])
            #expect(try store.save(try tree(3), header: header).prunedGenerations == [1])
            #expect(try rowsPerEpoch() == [2: 10, 3: 10])

            // An incremental save writes into its base's epoch, retiring the row it replaces.
            var changed = try tree(3)[4]
            changed.state = try tree(4)[4].state
            #expect(try store.saveChanges([changed], basedOn: 3, header: header).prunedGenerations == [2])
            #expect(try rowsPerEpoch() == [3: 11])
            // Generation 4 still reads epoch 3: the full save keeps it, and prunes the row that
            // generation 4 retired.
            try store.save(try tree(5), header: header)
            #expect(try rowsPerEpoch() == [3: 10, 5: 10])
            var expected = try tree(3)
            expected[4] = changed
            #expect(try store.snapshot(generation: 4)?.nodes == expected.sorted { $0.path < $1.path })
            #expect(try store.snapshot(generation: 5)?.nodes == (try tree(5)).sorted { $0.path < $1.path })
            #expect(try store.check().isEmpty)
            try store.save(try tree(6), header: header)
            #expect(try rowsPerEpoch() == [5: 10, 6: 10])
            #expect(try store.check().isEmpty)
        }
    }

    @Test func prunedRowsAreDeletedNotJustHidden() throws {
        try withTemporaryStore { store in
            let nodes = try SampleArchives.tree(count: 20)
            var base = try store.save(nodes, header: header).generation
            for round in 0..<10 {
                var node = nodes[round]
                node.state = [UInt8(round)]
                base = try store.saveChanges([node], basedOn: base, header: header).generation
            }
            let rows = try store.withConnection { try $0.pragmaInteger("SELECT count(*) FROM node") }
            // 20 current rows plus at most one retired row per change kept by generation 10.
            #expect(rows == 21)
            #expect(try store.generations().count == 2)
        }
    }

    /// Pruning finds retired rows by their key as stored: a path that damage turned into
    /// invalid UTF-8 is still deleted, and the save goes through.
    @Test func aRetiredRowWithADamagedPathIsStillPruned() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let nodes = try SampleArchives.tree(count: 5)
            var base = try store.save(nodes, header: header).generation
            var node = nodes[3]
            node.state = [1]
            base = try store.saveChanges([node], basedOn: base, header: header).generation
            // Generation 2 retired the old row of nodes[3]; give it a path of invalid UTF-8.
            try tamper(with: path, "UPDATE node SET path = CAST(x'41FF' AS TEXT) WHERE died IS NOT NULL")
            let damaged = "SELECT count(*) FROM node WHERE path = CAST(x'41FF' AS TEXT)"
            #expect(try store.withConnection { try $0.pragmaInteger(damaged) } == 1)

            node.state = [2]
            let result = try store.saveChanges([node], basedOn: base, header: header)
            #expect(result.prunedGenerations == [1])
            #expect(try store.withConnection { try $0.pragmaInteger(damaged) } == 0)
            #expect(try store.snapshot()?.nodes.first { $0.path == node.path }?.state == [2])
        }
    }

    @Test func archivesAreIndependent() throws {
        try withTemporaryStore { store in
            let left = try ArchiveName("scene-left")
            let right = try ArchiveName("scene-right")
            try store.save(try SampleArchives.tree(count: 5, fill: 1), header: header, in: left)
            try store.save(try SampleArchives.tree(count: 7, fill: 2), header: header, in: right)
            try store.save(try SampleArchives.tree(count: 3, fill: 3), header: header, in: right)
            #expect(try store.snapshot(of: left)?.nodes.count == 5)
            #expect(try store.snapshot(of: left)?.header.generation == 1)
            #expect(try store.snapshot(of: right)?.nodes.count == 3)
            #expect(try store.archives().map(\.name) == [left, right])
            #expect(try store.snapshot(of: .main) == nil)
        }
    }

    @Test func nodeLookupReadsOneVerifiedNode() throws {
        try withTemporaryStore { store in
            let nodes = try SampleArchives.tree(count: 10)
            try store.save(nodes, header: header)
            #expect(try store.node(at: nodes[4].path) == nodes[4])
            #expect(try store.node(at: try RestorationPath("Nowhere")) == nil)
            #expect(throws: ArchiveStoreError.archiveNotFound(try ArchiveName("x"))) {
                try store.node(at: nodes[0].path, in: try ArchiveName("x"))
            }
        }
    }

    @Test func readOnlyStoreRefusesWrites() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(try SampleArchives.tree(count: 2), header: header)
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            #expect(throws: ArchiveStoreError.readOnly) { try reader.save([], header: header) }
            #expect(throws: ArchiveStoreError.readOnly) { try reader.discard(reason: "no") }
            #expect(try reader.snapshot()?.nodes.count == 2)
        }
    }

    @Test func invalidConfigurationIsRefused() throws {
        try withTemporaryStorePath { path in
            #expect(throws: ArchiveStoreError.invalidConfiguration("retainedGenerations must be at least 1")) {
                try ArchiveStore(path: path, configuration: .init(retainedGenerations: 0))
            }
            #expect(throws: ArchiveStoreError.invalidConfiguration("busyTimeout must not be negative")) {
                try ArchiveStore(path: path, configuration: .init(busyTimeout: .milliseconds(-1)))
            }
            #expect(!fileExists(path))
        }
    }

    /// "Wait as long as it takes" written as the longest `Duration` waits SQLite's longest,
    /// about 24.8 days (`Int32.max` milliseconds): it used to overflow and crash.
    @Test func theLongestBusyTimeoutIsSQLitesLongest() throws {
        for forever in [Duration.seconds(Int64.max), .seconds(Int64.max / 999), Duration(secondsComponent: Int64.max, attosecondsComponent: 999_999_999_999_999_999)] {
            #expect(ArchiveStore.milliseconds(forever) == Int32.max)
        }
        #expect(ArchiveStore.milliseconds(.milliseconds(1_500)) == 1_500)
        #expect(ArchiveStore.milliseconds(.microseconds(2_999)) == 2)
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path, configuration: .init(busyTimeout: .seconds(Int64.max)))
            try store.save([], header: SaveHeader(appVersion: "1", appBuild: "1"))
            #expect(try store.archives().count == 1)
            try ArchiveStore.erase(at: path, busyTimeout: .seconds(Int64.max))
            #expect(try store.archives().isEmpty)
        }
    }
}

@Suite("Saving refuses bad input with a typed error")
struct StoreInputTests {
    @Test func invalidHeaderValuesAreRefusedAndNothingIsWritten() throws {
        try withTemporaryStore { store in
            for values: HeaderValues in [
                ["": .int(1)],
                [String(repeating: "k", count: 257): .int(1)],
                ["big": .bytes(Array(repeating: 0, count: (1 << 20) + 1))],
            ] {
                let header = SaveHeader(appVersion: "1", appBuild: "1", appValues: values)
                let error = try #require(throws: ArchiveStoreError.self) { try store.save([], header: header) }
                guard case .invalidHeaderValue = error else {
                    Issue.record("expected invalidHeaderValue, got \(error)")
                    continue
                }
            }
            #expect(try store.archives().isEmpty)
        }
    }

    /// A version, build, platform or idiom names something: cut, it would name another.
    @Test func headerTextsLongerThanTheMaximumAreRefusedAndNothingIsWritten() throws {
        try withTemporaryStore { store in
            let longest = String(repeating: "é", count: SaveHeader.maximumTextLength / 2)
            let tooLong = longest + "1"
            let headers = [
                SaveHeader(appVersion: tooLong, appBuild: "1"), SaveHeader(appVersion: "1", appBuild: tooLong),
                SaveHeader(appVersion: "1", appBuild: "1", platform: tooLong),
                SaveHeader(appVersion: "1", appBuild: "1", idiom: tooLong),
            ]
            for (header, name) in zip(headers, ["appVersion", "appBuild", "platform", "idiom"]) {
                #expect(
                    throws: ArchiveStoreError.invalidHeaderValue(
                        "the header's \(name) is 257 bytes of UTF-8; at most 256 are accepted")
                ) { try store.save([], header: header) }
            }
            // The text named is the one over the limit, not one at it before it.
            let oneOver = SaveHeader(appVersion: longest, appBuild: longest, platform: longest, idiom: tooLong)
            #expect(
                throws: ArchiveStoreError.invalidHeaderValue("the header's idiom is 257 bytes of UTF-8; at most 256 are accepted")
            ) { try store.save([], header: oneOver) }
            #expect(try store.archives().isEmpty)
            let accepted = SaveHeader(appVersion: longest, appBuild: longest, platform: longest, idiom: longest)
            let saved = try store.save([], header: accepted)
            #expect(try store.header()?.appVersion == longest)
            #expect(throws: ArchiveStoreError.invalidHeaderValue(
                "the header's appVersion is 257 bytes of UTF-8; at most 256 are accepted")
            ) { try store.saveChanges([], basedOn: saved.generation, header: headers[0]) }
            #expect(try store.header()?.generation == saved.generation)
        }
    }

    @Test func invalidClassNamesAreRefused() throws {
        try withTemporaryStore { store in
            let path = try RestorationPath("A")
            for name in ["", String(repeating: "C", count: 257)] {
                #expect(throws: ArchiveStoreError.invalidNode(path, "its class name must be 1 to 256 bytes of UTF-8")) {
                    try store.save([ArchivedNode(path: path, className: name, state: [])], header: SampleArchives.header)
                }
            }
        }
    }

    /// 0xE1 marks sealed states (Store/StateSeal.swift); a raw state may not pose as one.
    @Test func aStateStartingWithTheSealMarkerIsRefused() throws {
        try withTemporaryStore { store in
            let path = try RestorationPath("A")
            let node = ArchivedNode(path: path, className: "A", state: [0xE1, 1, 2])
            #expect(throws: ArchiveStoreError.invalidNode(path, "its state starts with byte 0xE1, which marks sealed states")) {
                try store.save([node], header: SampleArchives.header)
            }
            #expect(throws: ArchiveStoreError.invalidNode(path, "its state starts with byte 0xE1, which marks sealed states")) {
                try store.saveChanges([node], basedOn: 0, header: SampleArchives.header)
            }
            try store.save([ArchivedNode(path: path, className: "A", state: [1, 0xE1])], header: SampleArchives.header)
        }
    }

    @Test func aStorePathUnderARegularFileIsAFileSystemError() throws {
        try withTemporaryDirectory { directory in
            let file = directory + "/plain-file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
            let error = try #require(throws: ArchiveStoreError.self) { try ArchiveStore(path: file + "/sub/store.sqlite") }
            guard case .fileSystem(let operation, _, _) = error else {
                Issue.record("expected a file-system error, got \(error)")
                return
            }
            #expect(operation == "mkdir")
            #expect(error.description.contains("Not a directory"))
        }
    }
}
