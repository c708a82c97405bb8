import Testing
import TestSupport

@testable import RestorationArchive

/// The row checksum is part of the stored format: a store written by any earlier version must
/// still verify, so its values may never change, whatever the implementation.
@Suite struct ChecksumTests {
    /// Nodes of every state size around a word boundary, paths with escapes and non-ASCII
    /// identifiers, and archives other than the main one.
    static func sampleNodes() throws -> [(archive: ArchiveName, node: ArchivedNode, born: Generation)] {
        var generator = SeededGenerator(seed: 0xC0FFEE)
        let paths = [
            try RestorationPath("A"), try RestorationPath("Tabs", "MenuNavigation", "MenuItemDetail"),
            try RestorationPath("Ré", "日本語", "x%y/z"),
        ]
        return try [0, 1, 7, 8, 9, 15, 16, 17, 100, 257].enumerated().map { index, size in
            let node = ArchivedNode(
                path: paths[index % paths.count], className: index % 2 == 0 ? "Screen" : "MenuItemDetailViewController",
                classVersion: index, order: index - 3, state: generator.bytes(size))
            let archive = index % 3 == 0 ? ArchiveName.main : try ArchiveName("scene-\(index)")
            return (archive, node, Generation(Int64(index * 1_000_003)))
        }
    }

    @Test func nodeChecksumsKeepTheValuesEarlierStoresHold() throws {
        // Computed by the byte-at-a-time implementation that wrote every store up to 48b80dc.
        let stored: [Int64] = [
            -3_754_000_125_235_758_316, 2_439_710_755_559_389_366, -4_014_405_412_653_799_350,
            5_674_944_930_840_709_934, 2_801_242_158_318_005_541, -3_522_467_588_514_643_340,
            -2_016_423_936_887_240_191, 118_426_978_603_890_157, 4_332_129_676_156_886_897,
            -7_801_932_379_528_000_821,
        ]
        let computed = try Self.sampleNodes().map {
            ArchiveRows.firstNodeChecksum(archive: $0.archive, node: $0.node, born: $0.born)
        }
        #expect(computed == stored)
    }

    /// The checksum the store writes since the first one (`NodeChecksum`) keeps its values too.
    @Test func currentNodeChecksumsKeepTheirValues() throws {
        let stored: [Int64] = [
            -3_841_017_535_022_225_074, -2_682_040_680_675_956_156, 5_897_375_867_314_688_450,
            -6_735_951_353_906_593_888, 4_589_383_479_753_855_094, -3_940_752_317_594_952_600,
            6_763_492_583_274_159_758, -715_606_262_445_560_154, 5_763_844_699_146_034_640,
            5_162_650_074_676_255_465,
        ]
        let computed = try Self.sampleNodes().map { ArchiveRows.nodeChecksum(archive: $0.archive, node: $0.node, born: $0.born) }
        #expect(computed == stored)
    }

    /// Fields of every length around the word and stripe boundaries, against the definition
    /// in `NodeChecksum`'s documentation written as plainly as possible.
    @Test func currentNodeChecksumFollowsItsDefinition() throws {
        var generator = SeededGenerator(seed: 0x4E4F_4432)
        for trial in 0..<3_000 {
            // Archive names are text without control characters: letters of any length.
            let archive = (0..<Int.random(in: 1...20, using: &generator)).map { _ in
                UInt8.random(in: UInt8(ascii: "a")...UInt8(ascii: "z"), using: &generator)
            }
            let path = generator.bytes(Int.random(in: 1...40, using: &generator))
            let className = generator.bytes(Int.random(in: 1...20, using: &generator))
            let state = generator.bytes(trial < 100 ? trial : Int.random(in: 0...300, using: &generator))
            let (version, order, born) = (
                Int64(bitPattern: generator.next()), Int64(bitPattern: generator.next()), Int64(bitPattern: generator.next())
            )
            let computed = archive.withUnsafeBytes { archiveBytes in
                path.withUnsafeBytes { path in
                    className.withUnsafeBytes { className in
                        state.withUnsafeBytes { state in
                            NodeChecksum.checksum(
                                start: Self.currentStart(archiveBytes), path: path, className: className,
                                classVersion: version, order: order, born: born, state: state)
                        }
                    }
                }
            }
            let defined = Self.definedNodeChecksum(
                archive: archive, path: path, className: className, numbers: [version, order, born], state: state)
            #expect(computed == defined, "trial \(trial), state of \(state.count) bytes")
        }
    }

    /// `NodeChecksum.start` for an archive name's bytes (letters).
    private static func currentStart(_ name: UnsafeRawBufferPointer) -> UInt64 {
        NodeChecksum.start(archive: ArchiveName(trusted: String(decoding: name, as: UTF8.self)))
    }

    @Test func optionalFieldsKeepTheirValues() {
        var checksum = Checksum(domain: 0x5445_5354)
        checksum.combine(nil as Int64?)
        checksum.combine("x" as String?)
        checksum.combine(storedOptional: nil)
        checksum.combine(Int64(-5))
        Array("abc".utf8).withUnsafeBytes { checksum.combine(storedOptional: $0) }
        checksum.combine(nil as String?)
        checksum.combine([1, 2, 3] as [UInt8])
        checksum.combine(Int64(7) as Int64?)
        #expect(checksum.finalize() == 8_606_491_076_643_987_414)
    }

    /// Fields of random sizes, so that every field starts at every offset within a word,
    /// against the definition: the fields' bytes (each length-prefixed) as one stream, mixed
    /// a little-endian word at a time, the last word zero-padded.
    @Test func everyFieldAlignmentGivesTheDefinedValue() {
        var generator = SeededGenerator(seed: 0x5EED_C4EC)
        for trial in 0..<2_000 {
            let domain = generator.next()
            var checksum = Checksum(domain: domain)
            var stream: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                if Bool.random(using: &generator) {
                    let value = Int64(bitPattern: generator.next())
                    checksum.combine(value)
                    stream += [UInt8](littleEndian: value)
                } else {
                    let bytes = generator.bytes(Int.random(in: 0...40, using: &generator))
                    checksum.combine(bytes)
                    stream += [UInt8](littleEndian: UInt64(bytes.count)) + bytes
                }
            }
            let expected = Self.definedChecksum(domain: domain, stream: stream)
            #expect(checksum.finalize() == expected, "trial \(trial), \(stream.count) bytes")
        }
    }

    /// `NodeChecksum` as its documentation defines it, written as plainly as possible.
    private static func definedNodeChecksum(
        archive: [UInt8], path: [UInt8], className: [UInt8], numbers: [Int64], state: [UInt8]
    ) -> Int64 {
        let (prime1, prime2) = (Self.prime1, Self.prime2)
        let round = Self.definedRound
        func words(_ bytes: [UInt8]) -> [UInt64] {
            stride(from: 0, to: bytes.count, by: 8).map { start in
                var word: UInt64 = 0
                for (index, byte) in bytes[start..<min(start + 8, bytes.count)].enumerated() {
                    word |= UInt64(byte) << (8 * UInt64(index))
                }
                return word
            }
        }
        var hash = 0x4E4F_4432 &* prime1 &+ Self.prime4
        for field in [archive, path, className] {
            hash = round(hash, UInt64(field.count))
            for word in words(field) { hash = round(hash, word) }
        }
        for number in numbers { hash = round(hash, UInt64(bitPattern: number)) }
        hash = round(hash, UInt64(state.count))
        var lanes = [hash &+ prime1 &+ prime2, hash &+ prime2, hash, hash &- prime1]
        for (index, word) in words(state).enumerated() { lanes[index % 4] = round(lanes[index % 4], word) }
        for lane in lanes { hash = round(hash, lane) }
        return Int64(bitPattern: definedFmix(hash))
    }

    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63

    /// xxHash64's round.
    private static func definedRound(_ hash: UInt64, _ word: UInt64) -> UInt64 {
        var k = word &* prime2
        k = (k << 31) | (k >> 33)
        k &*= prime1
        let mixed = hash ^ k
        return ((mixed << 27) | (mixed >> 37)) &* prime1 &+ prime4
    }

    /// MurmurHash3's fmix64.
    private static func definedFmix(_ value: UInt64) -> UInt64 {
        var hash = value
        hash ^= hash >> 33
        hash &*= 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        hash &*= 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 33
        return hash
    }

    /// The checksum as its documentation defines it, written as plainly as possible.
    private static func definedChecksum(domain: UInt64, stream: [UInt8]) -> Int64 {
        var hash = domain &* prime1 &+ prime4
        for start in stride(from: 0, to: stream.count, by: 8) {
            var word: UInt64 = 0
            for (index, byte) in stream[start..<min(start + 8, stream.count)].enumerated() {
                word |= UInt64(byte) << (8 * UInt64(index))
            }
            hash = definedRound(hash, word)
        }
        hash ^= UInt64(stream.count)
        return Int64(bitPattern: definedFmix(hash))
    }
}
