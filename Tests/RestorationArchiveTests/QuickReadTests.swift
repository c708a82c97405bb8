import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

/// The decoder's quick paths — the check pass's common case (`BlobScanner.quickCheckRoot`) and
/// the typed reads' (`QuickValue`) — are accelerators over the full paths, which name every
/// error. They may decline what the full paths accept, never accept what they refuse or read
/// something else. These tests hold that on real blobs and on thousands of seeded mutations
/// sealed with a valid checksum, so that the damage reaches the parser.
@Suite("Blob format: quick paths agree with the full ones")
struct QuickReadTests {
    /// Blobs of every shape the quick check handles or declines.
    private func corpus() throws -> [[UInt8]] {
        var blobs: [[UInt8]] = []
        // A screen of the benchmark's shape: every value a scalar, a string or bytes.
        let screen = StateEncoder()
        try screen.encode(3, forKey: "selectedIndex")
        try screen.encode(1_250.5, forKey: "scrollOffset")
        try screen.encode(true, forKey: "isEditing")
        try screen.encode(UInt64(1_000_042), forKey: "userID")
        try screen.encode(Date(timeIntervalSinceReferenceDate: 700_000_042), forKey: "openedAt")
        try screen.encode("Menu item detail number 42", forKey: "title")
        try screen.encode("Extra shot, no sugar, oat milk please", forKey: "draft")
        try screen.encodeBytes((0..<32).map { UInt8($0 &* 7) }, forKey: "token")
        blobs.append(try screen.encodedBlob())
        // Every other scalar type, negative integers and a float, a null, an empty string.
        let scalars = StateEncoder()
        try scalars.encode(Int64.min, forKey: "min")
        try scalars.encode(UInt64.max, forKey: "max")
        try scalars.encode(-1, forKey: "minusOne")
        try scalars.encode(Float(-0.0), forKey: "float")
        try scalars.encode(Double.nan, forKey: "nan")
        // A NaN date (the fuzzer's find, 2026-11-23): dates too are compared by bit pattern.
        try scalars.encode(Date(timeIntervalSinceReferenceDate: Double(bitPattern: 0xFFFF_0000_0000_0000)), forKey: "nanDate")
        try scalars.encode(false, forKey: "no")
        try scalars.encode("", forKey: "empty")
        try scalars.encodeNil(forKey: "nothing")
        blobs.append(try scalars.encodedBlob())
        // Values the quick check hands to the full one: a UUID, a URL, references, nesting.
        let composite = StateEncoder()
        try composite.encode(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, forKey: "id")
        try composite.encode(URL(string: "https://example.com/milk")!, forKey: "url")
        try composite.encodeReferences(to: [try RestorationPath("Tabs", "Nav")], forKey: "kids")
        try composite.encodeNested(forKey: "nested") { try $0.encode(7, forKey: "seven") }
        try composite.encode([1, 2, 3], forKey: "list")
        blobs.append(try composite.encodedBlob())
        // What the quick check declines whole: a key over 127 bytes (a length of two varint
        // bytes; a string value that long stays on it). What it takes off its fastest path:
        // non-ASCII keys and text (validated as UTF-8), and more keys than fit inline (the
        // next blob).
        let declined = StateEncoder()
        try declined.encode(String(repeating: "k", count: 200), forKey: String(repeating: "a", count: 130))
        try declined.encode("crème brûlée", forKey: "dessert")
        try declined.encode(1, forKey: "clé")
        blobs.append(try declined.encodedBlob())
        let many = StateEncoder()
        for index in 0..<20 { try many.encode(index, forKey: "key\(index)") }
        blobs.append(try many.encodedBlob())
        return blobs
    }

    /// `blob` with a random change of one of six kinds, sealed again with a valid CRC-32C.
    private func mutated(_ blob: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var content = Array(blob.dropLast(4))
        switch Int.random(in: 0..<6, using: &generator) {
        case 0:
            let index = Int.random(in: 0..<content.count, using: &generator)
            content[index] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
        case 1:
            content[Int.random(in: 0..<content.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
        case 2:
            content.removeLast(Int.random(in: 1...min(8, content.count), using: &generator))
        case 3:
            content.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 1...content.count, using: &generator))
        case 4:
            content.remove(at: Int.random(in: 0..<content.count, using: &generator))
        default:
            let start = Int.random(in: 0..<content.count, using: &generator)
            for index in start..<min(content.count, start + Int.random(in: 1...4, using: &generator)) { content[index] = 0 }
        }
        return sealed(content)
    }

    private enum Outcome { case bothAccept, onlyFullAccepts, bothRefuse }

    /// Runs both check passes on `blob`; records an issue if the quick one accepts what the
    /// full one refuses, or lists other entries.
    private func compareChecks(_ blob: [UInt8], limits: DecodingLimits) -> Outcome? {
        guard let reader = try? BlobReader(blob: blob, limits: limits) else { return nil }
        var quickEntries = BlobEntryIndex()
        let quick = reader.withScanner { $0.quickCheckRoot(entries: &quickEntries) }
        var fullEntries = BlobEntryIndex()
        let full = (try? reader.fullCheck(indexing: &fullEntries)) != nil
        guard quick else { return full ? .onlyFullAccepts : .bothRefuse }
        #expect(full, "the quick check accepted a blob the full check refuses: \(blob)")
        #expect(quickEntries.all.map(\.keyRange) == fullEntries.all.map(\.keyRange))
        return .bothAccept
    }

    @Test(arguments: [
        DecodingLimits.default,
        // Limits the corpus runs into: the quick check must decline where the full one refuses.
        DecodingLimits(maximumStringLength: 20),
        DecodingLimits(maximumBytesLength: 8),
        DecodingLimits(maximumDepth: 1),
        DecodingLimits(maximumElementCount: 6),
        DecodingLimits(maximumDepth: 0),
    ])
    func theQuickCheckNeverAcceptsWhatTheFullCheckRefuses(limits: DecodingLimits) throws {
        var generator = SeededGenerator(seed: 0x0C4E_C4ED)
        var counts: [Outcome: Int] = [:]
        for blob in try corpus() {
            if let outcome = compareChecks(blob, limits: limits) { counts[outcome, default: 0] += 1 }
            for _ in 0..<1_500 {
                if let outcome = compareChecks(mutated(blob, using: &generator), limits: limits) {
                    counts[outcome, default: 0] += 1
                }
            }
        }
        // The comparison was not vacuous: under every limit blobs were refused (under the
        // tighter ones, by both passes, as they must be), and with the defaults some were
        // accepted by both and some only by the full check.
        #expect(counts[.bothRefuse, default: 0] > 100)
        if limits == .default {
            #expect(counts[.bothAccept, default: 0] > 100)
            #expect(counts[.onlyFullAccepts, default: 0] > 2)
        }
    }

    @Test func decodersMadeFromTheSameBlobUnderEitherCheckReadTheSame() throws {
        // The corpus's screen, whose keys the quick check lists, read through StateDecoder
        // (which uses it) and through the tree (which never does).
        let blob = try corpus()[0]
        let decoder = try StateDecoder(blob: blob)
        let tree = try StateValue.decode(blob: blob)
        #expect(decoder.keys == tree.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        for key in decoder.keys { #expect(try decoder.value(forKey: key) == tree[key]) }
    }

    /// Every typed read of every key (and of a missing one) gives what the value tree's
    /// conversions give: the same value, or the same error.
    private func compareTypedReads(_ decoder: StateDecoder) {
        func same<T>(_ typed: Result<T, StateCodingError>, _ tree: Result<T, StateCodingError>, _ equal: (T, T) -> Bool)
            -> Bool
        {
            switch (typed, tree) {
            case (.success(let a), .success(let b)): equal(a, b)
            case (.failure(let a), .failure(let b)): a == b
            default: false
            }
        }
        func check<T: Equatable>(_ key: String, _ typed: (String) throws(StateCodingError) -> T,
            _ tree: (StateValue) throws(StateCodingError) -> T)
        {
            let fromTree = Result { () throws(StateCodingError) -> T in try tree(try decoder.value(forKey: key)) }
            #expect(same(Result { () throws(StateCodingError) -> T in try typed(key) }, fromTree, ==), "key \(key)")
        }
        for key in decoder.keys + ["absent"] {
            check(key, { (key) throws(StateCodingError) in try decoder.decode(Bool.self, forKey: key) }) { (value) throws(StateCodingError) in try value.bool(key: key) }
            check(key, { (key) throws(StateCodingError) in try decoder.decode(Int.self, forKey: key) }) { (value) throws(StateCodingError) in try value.integer(Int.self, key: key) }
            check(key, { (key) throws(StateCodingError) in try decoder.decode(Int8.self, forKey: key) }) { (value) throws(StateCodingError) in try value.integer(Int8.self, key: key) }
            check(key, { (key) throws(StateCodingError) in try decoder.decode(UInt8.self, forKey: key) }) { (value) throws(StateCodingError) in try value.integer(UInt8.self, key: key) }
            check(key, { (key) throws(StateCodingError) in try decoder.decode(UInt64.self, forKey: key) }) { (value) throws(StateCodingError) in try value.integer(UInt64.self, key: key) }
            check(key, { (key) throws(StateCodingError) in try decoder.decode(Float.self, forKey: key).bitPattern }) { (value) throws(StateCodingError) in try value.float(key: key).bitPattern }
            check(key, { (key) throws(StateCodingError) in try decoder.decode(Double.self, forKey: key).bitPattern }) { (value) throws(StateCodingError) in try value.double(key: key).bitPattern }
            check(key, { (key) throws(StateCodingError) in try decoder.decode(String.self, forKey: key) }) { (value) throws(StateCodingError) in try value.string(key: key) }
            check(key, { (key) throws(StateCodingError) in try decoder.decode([UInt8].self, forKey: key) }) { (value) throws(StateCodingError) in try value.bytes(key: key) }
            check(key, { (key) throws(StateCodingError) in try decoder.decode(Date.self, forKey: key).timeIntervalSinceReferenceDate.bitPattern }) { (value) throws(StateCodingError) in try value.date(key: key).timeIntervalSinceReferenceDate.bitPattern }
            // The UIKit habit: the type's default when the key is absent, else what the typed
            // read (checked against the tree above) gives, value or error.
            let absent = !decoder.contains(key)
            func withDefault<T: Equatable>(
                _ habit: (String) throws(StateCodingError) -> T, _ typed: (String) throws(StateCodingError) -> T,
                _ fallback: T
            ) {
                let expected = absent ? .success(fallback) : Result { () throws(StateCodingError) -> T in try typed(key) }
                #expect(same(Result { () throws(StateCodingError) -> T in try habit(key) }, expected, ==), "key \(key)")
            }
            withDefault(
                { (key) throws(StateCodingError) in try decoder.decodeBool(forKey: key) },
                { (key) throws(StateCodingError) in try decoder.decode(Bool.self, forKey: key) }, false)
            withDefault(
                { (key) throws(StateCodingError) in try decoder.decodeInteger(forKey: key) },
                { (key) throws(StateCodingError) in try decoder.decode(Int.self, forKey: key) }, 0)
            withDefault(
                { (key) throws(StateCodingError) in try decoder.decodeDouble(forKey: key).bitPattern },
                { (key) throws(StateCodingError) in try decoder.decode(Double.self, forKey: key).bitPattern }, 0)
            withDefault(
                { (key) throws(StateCodingError) in try decoder.decodeFloat(forKey: key).bitPattern },
                { (key) throws(StateCodingError) in try decoder.decode(Float.self, forKey: key).bitPattern }, 0)
        }
    }

    @Test func typedReadsGiveWhatTheValueTreeGives() throws {
        var generator = SeededGenerator(seed: 0x7E_ADED)
        var readDecoders = 0
        for blob in try corpus() {
            compareTypedReads(try StateDecoder(blob: blob))
            readDecoders += 1
            // Accepted mutations hold other values and types under the same keys.
            for _ in 0..<400 {
                guard let decoder = try? StateDecoder(blob: mutated(blob, using: &generator)) else { continue }
                compareTypedReads(decoder)
                readDecoders += 1
            }
        }
        #expect(readDecoders > 100)
    }
}
