import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

/// Content (version byte and root body) framed with its CRC-32C, as a valid writer would.
func sealed(_ content: [UInt8]) -> [UInt8] {
    let crc = CRC32C.checksum(content, count: content.count)
    return content + [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)]
}

@Suite("Blob format: malformed input")
struct BlobFormatTests {
    @Test func crc32cMatchesTheStandardCheckValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8), count: 9) == 0xE306_9283)
        #expect(CRC32C.checksum([], count: 0) == 0)
        let long = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
        // Slicing-by-8 and byte-at-a-time agree at every length.
        for length in [1, 7, 8, 9, 15, 16, 17, 999, 1000] {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in long.prefix(length) {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            }
            #expect(CRC32C.checksum(long, count: length) == crc ^ 0xFFFF_FFFF)
            // The instruction and the tables agree.
            #expect(long.withUnsafeBytes { CRC32C.software(UnsafeRawBufferPointer(rebasing: $0[0..<length])) } == crc ^ 0xFFFF_FFFF)
        }
    }

    @Test func theWordWiseChecksAgreeWithByteWiseOnesAtEveryLengthAndPosition() {
        // The ASCII check reads words, the last overlapping; key order compares 8 bytes at a time.
        for length in 0...40 {
            let ascii = (0..<length).map { UInt8(0x20 + $0) }
            ascii.withUnsafeBytes { #expect(UTF8Text.isASCII($0)) }
            for position in 0..<length {
                var text = ascii
                text[position] = 0x80
                text.withUnsafeBytes { #expect(!UTF8Text.isASCII($0), "length \(length), position \(position)") }
                for other in [0x00, 0x7F, 0xFF] as [UInt8] {
                    var changed = ascii
                    changed[position] = other
                    let expected = ascii.lexicographicallyPrecedes(changed) ? -1 : ascii == changed ? 0 : 1
                    let order = ascii.withUnsafeBytes { a in
                        changed.withUnsafeBytes { b in BlobScanner.order(a, 0, a.count, b, 0, b.count) }
                    }
                    #expect(order.signum() == expected, "length \(length), position \(position), byte \(other)")
                }
            }
            // A prefix sorts first.
            let prefix = ascii.withUnsafeBytes { a in BlobScanner.order(a, 0, a.count, a, 0, max(0, a.count - 1)) }
            #expect(length == 0 ? prefix == 0 : prefix > 0)
        }
    }

    @Test func everyByteReadsAsTheTagOfThatRawValue() {
        for byte in UInt8.min...UInt8.max {
            #expect(BlobFormat.Tag(byte) == BlobFormat.Tag(rawValue: byte), "byte \(byte)")
        }
    }

    @Test func theLayoutIsAsSpecified() throws {
        let encoder = StateEncoder()
        try encoder.encode(-2, forKey: "a")
        try encoder.encode("hi", forKey: "b")
        let blob = try encoder.encodedBlob()
        // version 1, 2 entries, "a" int zigzag(-2)=3, "b" string "hi", CRC-32C.
        #expect(Array(blob.dropLast(4)) == [0x01, 0x02, 0x01, 0x61, 0x03, 0x03, 0x01, 0x62, 0x07, 0x02, 0x68, 0x69])
        #expect(sealed(Array(blob.dropLast(4))) == blob)
    }

    @Test func aNewerFormatVersionIsRefusedNeverMisread() {
        #expect(throws: StateCodingError.unsupportedFormatVersion(found: 2, supported: 1)) {
            try StateDecoder(blob: sealed([0x02, 0x00]))
        }
        #expect(throws: StateCodingError.unsupportedFormatVersion(found: 255, supported: 1)) {
            try StateValue.decode(blob: [0xFF])
        }
    }

    /// Version 0 does not exist (`docs/blob-format.md`): a blob that starts with it is damage,
    /// refused as malformed, never read as version 1.
    @Test func formatVersionZeroIsRefused() throws {
        let content: [UInt8] = [0x01, 0x01, 0x61, 0x00]  // one entry, "a": null
        let refusal = StateCodingError.malformed(reason: "format version 0 does not exist", offset: 0)
        #expect(throws: refusal) { try StateDecoder(blob: sealed([0x00] + content)) }
        #expect(throws: refusal) { try StateValue.decode(blob: sealed([0x00] + content)) }
        #expect(try StateValue.decode(blob: sealed([0x01] + content)) == ["a": .null])
    }

    @Test func everyTruncationIsATypedError() throws {
        let encoder = StateEncoder()
        try encoder.encode("some text", forKey: "text")
        try encoder.encode([1.5, 2.5], forKey: "doubles")
        let blob = try encoder.encodedBlob()
        for length in 0..<blob.count {
            #expect(throws: StateCodingError.self) { try StateDecoder(blob: Array(blob.prefix(length))) }
        }
    }

    @Test(arguments: [
        // (content after the version byte, expected error)
        ([0x01, 0x01, 0x61, 0x00, 0x00], StateCodingError.trailingBytes(offset: 5)),
        ([0x01, 0x01, 0x61, 0x04, 0x80, 0x00], .malformed(reason: "an integer is not in its shortest form", offset: 5)),
        ([0x01, 0x01, 0x61, 0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02],
         .malformed(reason: "an integer overflows 64 bits", offset: 5)),
        ([0x02, 0x01, 0x62, 0x00, 0x01, 0x61, 0x00],
         .malformed(reason: "container keys are not in strictly ascending order", offset: 5)),
        ([0x02, 0x01, 0x61, 0x00, 0x01, 0x61, 0x00],
         .malformed(reason: "container keys are not in strictly ascending order", offset: 5)),
        // Keys that share their first 8 bytes: "a\0" before "a", and 9-byte keys differing last.
        ([0x02, 0x02, 0x61, 0x00, 0x00, 0x01, 0x61, 0x00],
         .malformed(reason: "container keys are not in strictly ascending order", offset: 6)),
        ([0x02, 0x09] + Array("abcdefghj".utf8) + [0x00, 0x09] + Array("abcdefghi".utf8) + [0x00],
         .malformed(reason: "container keys are not in strictly ascending order", offset: 13)),
        ([0x02, 0x09] + Array("abcdefghi".utf8) + [0x00, 0x09] + Array("abcdefghi".utf8) + [0x00],
         .malformed(reason: "container keys are not in strictly ascending order", offset: 13)),
        ([0x01, 0x09] + Array("abcdefgh".utf8) + [0xFF, 0x00], .invalidUTF8(offset: 3)),
        ([0x01, 0x03, 0x61, 0xC3, 0x28, 0x00], .invalidUTF8(offset: 3)),
        ([0x01, 0x01, 0xFF, 0x00], .invalidUTF8(offset: 3)),
        ([0x01, 0x01, 0x61, 0x07, 0x02, 0xC3, 0x28], .invalidUTF8(offset: 6)),
        ([0x01, 0x01, 0x61, 0x42], .invalidTag(0x42, offset: 4)),
        ([0x01, 0x01, 0x61, 0x07, 0x05, 0x61], .truncated(offset: 5)),
        // A count of a million entries in a few bytes: refused before anything is allocated.
        ([0x80, 0x80, 0x40], .truncated(offset: 1)),
        ([0xFF, 0xFF, 0xFF, 0xFF, 0x0F], .limitExceeded(limit: "element count (1048576)", offset: 1)),
        ([0x01, 0x01, 0x61, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], .limitExceeded(limit: "bytes length (16777216)", offset: 5)),
        ([0x01, 0x01, 0x61, 0x0B, 0x01, 0x20], .malformed(reason: "not a valid URL", offset: 4)),
        ([0x01, 0x01, 0x61, 0x0E, 0x02, 0x61, 0x2F], .malformed(reason: "not a valid restoration path", offset: 4)),
        // A path's text must be canonical: NUL escaped as %00, escapes in upper case.
        ([0x01, 0x01, 0x61, 0x0E, 0x01, 0x00], .malformed(reason: "not a valid restoration path", offset: 4)),
        ([0x01, 0x01, 0x61, 0x0E, 0x03, 0x25, 0x32, 0x66], .malformed(reason: "not a valid restoration path", offset: 4)),
        ([0x01, 0x01, 0x61, 0x0C, 0x00, 0x00], .trailingBytes(offset: 6)),
        ([0x01, 0x81, 0x08] + Array(repeating: 0x61, count: 1025) + [0x00], .limitExceeded(limit: "key length (1024)", offset: 2)),
    ] as [([UInt8], StateCodingError)])
    func malformedContentWithAValidChecksumIsATypedError(content: [UInt8], expected: StateCodingError) {
        let blob = sealed([0x01] + content)
        #expect(throws: expected) { try StateDecoder(blob: blob) }
        #expect(throws: expected) { try StateValue.decode(blob: blob) }
    }

    /// Keys are told apart by their bytes, so one `String` in two Unicode forms would be two
    /// keys in the blob, of which a `StateValue` container (what `restorectl`, migrations and
    /// `Codable` values read) could hold one: the second form is refused when it is encoded.
    /// Encoding the same bytes again still replaces the value.
    @Test func aKeyInAnotherUnicodeFormIsRefusedNotHalfLost() throws {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let refusal = StateCodingError.invalidKey(
            "'\(decomposed)' is a key of this container already, in another Unicode form (composed or decomposed characters)")
        let encoder = StateEncoder()
        try encoder.encode(1, forKey: composed)
        #expect(throws: refusal) { try encoder.encode(2, forKey: decomposed) }
        #expect(throws: refusal) { try encoder.encodeNested(forKey: decomposed) { _ in } }
        try encoder.encode(3, forKey: composed)
        try encoder.encode("é", forKey: "e\u{301}")  // not ASCII, no other form encoded
        try encoder.encodeNested(forKey: "nested") { nested in
            try nested.encode(4, forKey: decomposed)
            #expect(throws: StateCodingError.self) { try nested.encode(5, forKey: composed) }
        }
        let blob = try encoder.encodedBlob()
        #expect(try StateValue.decode(blob: blob) == [composed: .int(3), "e\u{301}": .string("é"), "nested": .container([decomposed: .int(4)])])
        let decoder = try StateDecoder(blob: blob)
        #expect(decoder.keys.map { Array($0.utf8) } == [Array(composed.utf8), Array("e\u{301}".utf8), Array("nested".utf8)])
        #expect(try decoder.decode(Int.self, forKey: composed) == 3)
        #expect(try decoder.decodeNested(forKey: "nested").decode(Int.self, forKey: decomposed) == 4)
        // A value that fails to encode leaves no key behind to be compared with.
        let other = StateEncoder()
        #expect(throws: StateCodingError.self) { try other.encode(Int128(1), forKey: composed) }
        #expect(throws: StateCodingError.self) { try other.encodeNested(forKey: composed) { try $0.encode(1, forKey: "") } }
        try other.encode(6, forKey: decomposed)
        #expect(try StateValue.decode(blob: try other.encodedBlob())[decomposed] == .int(6))
    }

    /// A blob with "café" decomposed and composed as two keys (in the root, nested, and with
    /// keys in between): other bytes, in order, but one `String`. Built into `StateValue`s it is
    /// refused, where a dictionary would have kept one of the two values; typed reads, which
    /// find keys by their bytes, read each (`StateEncoder` writes no such blob; one from an
    /// earlier version still restores).
    @Test(arguments: [
        ([0x02, 0x06] + Array("cafe\u{301}".utf8) + [0x03, 0x02, 0x05] + Array("caf\u{E9}".utf8) + [0x03, 0x04], [], 11),
        ([0x01, 0x01, 0x61, 0x0D, 0x02, 0x06] + Array("cafe\u{301}".utf8) + [0x03, 0x02, 0x05] + Array("caf\u{E9}".utf8)
            + [0x03, 0x04], ["a"], 15),
        ([0x04, 0x04] + Array("cafe".utf8) + [0x00, 0x06] + Array("cafe\u{301}".utf8) + [0x03, 0x02, 0x04]
            + Array("caff".utf8) + [0x00, 0x05] + Array("caf\u{E9}".utf8) + [0x03, 0x04], [], 23),
    ] as [([UInt8], [String], Int)])
    func oneKeyInTwoUnicodeFormsIsRefusedAsValuesAndReadByBytes(content: [UInt8], nesting: [String], offset: Int) throws {
        let blob = sealed([0x01] + content)
        let malformed = StateCodingError.malformed(
            reason: "two container keys are one string in different Unicode forms", offset: offset)
        #expect(throws: malformed) { try StateValue.decode(blob: blob) }
        var decoder = try StateDecoder(blob: blob)
        for key in nesting {
            #expect(throws: malformed) { try decoder.value(forKey: key) }
            decoder = try decoder.decodeNested(forKey: key)
        }
        #expect(try decoder.decode(Int.self, forKey: "cafe\u{301}") == 1)
        #expect(try decoder.decode(Int.self, forKey: "caf\u{E9}") == 2)
    }

    @Test func anEmptyKeyIsLegalInTheFormatButNotAsAnObjectsKey() throws {
        let blob = sealed([0x01, 0x01, 0x00, 0x00])
        #expect(try StateValue.decode(blob: blob) == ["": .null])
        #expect(try StateDecoder(blob: blob).keys == [""])
        #expect(try StateValue.encode(["": .null]) == blob)
        #expect(throws: StateCodingError.invalidKey("a key must not be empty")) { try StateEncoder().encode(1, forKey: "") }
        let encoder = StateEncoder()
        try encoder.encode(["": 1, "a": 2], forKey: "dictionary")
        #expect(try StateDecoder(blob: try encoder.encodedBlob()).decode([String: Int].self, forKey: "dictionary") == ["": 1, "a": 2])
    }

    @Test func aChangedByteFailsTheChecksum() throws {
        let encoder = StateEncoder()
        try encoder.encode("milk", forKey: "page")
        var blob = try encoder.encodedBlob()
        blob[blob.count - 6] = UInt8(ascii: "s")  // "milk" → "mils": still valid UTF-8
        #expect(throws: StateCodingError.checksumMismatch) { try StateDecoder(blob: blob) }
    }

    @Test func aBlobOverTheSizeLimitIsRefusedWhenEncoding() throws {
        let encoder = StateEncoder()
        try encoder.encodeBytes(Array(repeating: 7, count: DecodingLimits.default.maximumBlobSize), forKey: "huge")
        let error = try #require(throws: StateCodingError.self) { try encoder.encodedBlob() }
        #expect(error == .unencodable(key: "", reason: "the blob would exceed 16777216 bytes"))
        #expect(error.description == "Cannot encode the state: the blob would exceed 16777216 bytes.")
        #expect(throws: StateCodingError.self) { try StateValue.encode(["huge": .bytes(Array(repeating: 7, count: 16 << 20))]) }
    }

    /// An array or a container of more elements than the default limits read is refused when
    /// encoding, named by its key: written, every read of it failed (each launch's restoration
    /// of that object, and `restorectl`'s).
    @Test func moreElementsThanTheDecoderReadsAreRefusedWhenEncoding() throws {
        let limit = DecodingLimits.default.maximumElementCount
        let reason = "an array or a container holds \(limit + 1) elements; the limit is \(limit)"
        let encoder = StateEncoder()
        #expect(throws: StateCodingError.unencodable(key: "flags", reason: reason)) {
            try encoder.encode([Bool](repeating: false, count: limit + 1), forKey: "flags")
        }
        let screen = try RestorationPath("Nav", "Screen")
        #expect(throws: StateCodingError.unencodable(key: "stack", reason: reason)) {
            try encoder.encodeReferences(to: Array(repeating: screen, count: limit + 1), forKey: "stack")
        }
        // Named by the whole path of keys down to it.
        #expect(throws: StateCodingError.unencodable(key: "flags", reason: reason)) {
            try StateValue.encode(["flags": .array(Array(repeating: .null, count: limit + 1))])
        }
        #expect(throws: StateCodingError.unencodable(key: "order.meta.flags", reason: reason)) {
            try StateValue.encode(["order": .container(["meta": .container(["flags": .array(Array(repeating: .null, count: limit + 1))])])])
        }
        #expect(try StateDecoder(blob: try encoder.encodedBlob()).keys.isEmpty)
        // At the limit, written and read.
        let atTheLimit = try StateValue.encode(["flags": .array(Array(repeating: .null, count: limit))])
        #expect(try StateDecoder(blob: atTheLimit).keys == ["flags"])
    }

    /// Keys encoded in any order, some more than once, give the blob of the last value of
    /// each key encoded in order: with more keys than the insertion sort takes, too.
    @Test(arguments: [5, 32, 33, 500])
    func keysInAnyOrderGiveOneBlob(count: Int) throws {
        var random = SeededGenerator(seed: UInt64(count))
        let keys = (0..<count).map { "key\($0)" }
        var writes = keys.map { ($0, Int.random(in: 0..<1_000, using: &random)) }
        for _ in 0..<(count / 3) { writes.append((keys.randomElement(using: &random)!, -1)) }
        writes.shuffle(using: &random)
        var last: [String: Int] = [:]
        let shuffled = StateEncoder()
        for (key, value) in writes {
            try shuffled.encode(value, forKey: key)
            last[key] = value
        }
        let ordered = StateEncoder()
        for key in keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) { try ordered.encode(last[key]!, forKey: key) }
        #expect(try shuffled.encodedBlob() == ordered.encodedBlob())
        #expect(shuffled.keys == ordered.keys)
    }

    @Test func limitsAreConfigurable() throws {
        let encoder = StateEncoder()
        try encoder.encode(String(repeating: "x", count: 100), forKey: "text")
        try encoder.encode(Array(0..<50), forKey: "list")
        try encoder.encodeNested(forKey: "a") { a in try a.encodeNested(forKey: "b") { try $0.encode(1, forKey: "c") } }
        let blob = try encoder.encodedBlob()
        #expect(throws: StateCodingError.limitExceeded(limit: "blob size (64 bytes)", offset: 0)) {
            try StateDecoder(blob: blob, limits: DecodingLimits(maximumBlobSize: 64))
        }
        #expect(throws: StateCodingError.self) { try StateDecoder(blob: blob, limits: DecodingLimits(maximumStringLength: 99)) }
        #expect(throws: StateCodingError.self) { try StateDecoder(blob: blob, limits: DecodingLimits(maximumDepth: 2)) }
        #expect(throws: StateCodingError.self) { try StateDecoder(blob: blob, limits: DecodingLimits(maximumElementCount: 49)) }
        _ = try StateDecoder(blob: blob, limits: DecodingLimits(maximumStringLength: 100, maximumDepth: 3, maximumElementCount: 50))
    }

    /// Each limit is the largest accepted, not the first refused; and a key is a string, so
    /// `maximumStringLength` bounds keys too ("the longest string (or key, URL, reference)
    /// accepted"), whichever check pass reads the blob.
    @Test func eachLimitAdmitsExactlyItsBound() throws {
        let encoder = StateEncoder()
        try encoder.encode(1, forKey: String(repeating: "k", count: 20))
        try encoder.encode("short", forKey: "s")
        let blob = try encoder.encodedBlob()
        _ = try StateDecoder(blob: blob, limits: DecodingLimits(maximumBlobSize: blob.count))
        #expect(throws: StateCodingError.limitExceeded(limit: "blob size (\(blob.count - 1) bytes)", offset: 0)) {
            try StateDecoder(blob: blob, limits: DecodingLimits(maximumBlobSize: blob.count - 1))
        }
        let twenty = DecodingLimits(maximumStringLength: 20)
        _ = try StateDecoder(blob: blob, limits: twenty)
        #expect(try StateValue.decode(blob: blob, limits: twenty).count == 2)
        // The 20-byte key's length is at byte 2 (after the version and the entry count).
        let nineteen = DecodingLimits(maximumStringLength: 19)
        let refusal = StateCodingError.limitExceeded(limit: "key length (19)", offset: 2)
        #expect(throws: refusal) { try StateDecoder(blob: blob, limits: nineteen) }
        #expect(throws: refusal) { try StateValue.decode(blob: blob, limits: nineteen) }
    }

    @Test func nestingPastTheLimitIsRefusedWhenDecoding() {
        // 100 nested arrays under one key: depth 101.
        let content: [UInt8] = [0x01, 0x01, 0x01, 0x61] + Array(repeating: [0x0C, 0x01], count: 99).flatMap { $0 } + [0x0C, 0x00]
        #expect(throws: StateCodingError.limitExceeded(limit: "nesting depth (64)", offset: 130)) {
            try StateDecoder(blob: sealed(content))
        }
        // However large a limit the app sets, nesting stays bounded, so recursion cannot overflow the stack.
        let deep: [UInt8] = [0x01, 0x01, 0x01, 0x61] + Array(repeating: [0x0C, 0x01], count: 5000).flatMap { $0 } + [0x0C, 0x00]
        #expect(throws: StateCodingError.self) {
            try StateValue.decode(blob: sealed(deep), limits: DecodingLimits(maximumDepth: 1_000_000))
        }
    }
}

@Suite("Blob format: seeded mutations")
struct BlobMutationTests {
    /// Real blobs: a screen's typed state, a Codable order, references and nesting.
    private func corpus() throws -> [[UInt8]] {
        let screen = StateEncoder()
        try screen.encode(2, forKey: "selectedTab")
        try screen.encode(120.5, forKey: "scrollOffset")
        try screen.encode("Extra shot, no sugar", forKey: "draft")
        try screen.encode(true, forKey: "isEditing")
        try screen.encode(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, forKey: "id")
        try screen.encode(Date(timeIntervalSinceReferenceDate: 700_000_000), forKey: "openedAt")
        try screen.encode(URL(string: "https://example.com/milk")!, forKey: "url")
        try screen.encodeBytes([0, 1, 2, 254, 255], forKey: "token")
        let order = StateEncoder()
        try order.encode(
            Order(
                id: UUID(), items: [MenuItem(
                    name: "Latte", price: 4, category: .coffee, sizes: [.large(extraShots: 1)], imageURL: nil,
                    allergens: ["milk": true])],
                placedAt: Date(), note: "ünï", quantities: [1, 2], thumbnail: Data([9])), forKey: "order")
        try order.encodeReferences(to: [try RestorationPath("Tabs", "Nav"), try RestorationPath("Tabs", "Nav", "Menu")], forKey: "kids")
        try order.encodeNested(forKey: "nested") { try $0.encode(Int64.min, forKey: "min") }
        return [try screen.encodedBlob(), try order.encodedBlob()]
    }

    @Test func everyMutationDecodesToTheOriginalOrThrowsATypedError() throws {
        var generator = SeededGenerator(seed: 0x5EED_2026)
        var outcomes = (identical: 0, refused: 0)
        for blob in try corpus() {
            let original = try StateValue.decode(blob: blob)
            for _ in 0..<3_000 {
                var mutated = blob
                switch Int.random(in: 0..<6, using: &generator) {
                case 0:  // flip one bit
                    let index = Int.random(in: 0..<mutated.count, using: &generator)
                    mutated[index] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
                case 1:  // overwrite a byte
                    mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                case 2:  // truncate
                    mutated.removeLast(Int.random(in: 1...mutated.count, using: &generator))
                case 3:  // insert a byte
                    mutated.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...mutated.count, using: &generator))
                case 4:  // delete a byte
                    mutated.remove(at: Int.random(in: 0..<mutated.count, using: &generator))
                default:  // zero a run
                    let start = Int.random(in: 0..<mutated.count, using: &generator)
                    let end = min(mutated.count, start + Int.random(in: 1...16, using: &generator))
                    for index in start..<end { mutated[index] = 0 }
                }
                do {
                    let decoded = try StateValue.decode(blob: mutated)
                    #expect(decoded == original, "a mutation decoded to different content")
                    _ = try StateDecoder(blob: mutated)
                    outcomes.identical += 1
                } catch {
                    // Both decoders throw only StateCodingError (typed throws); a crash fails the run.
                    #expect(throws: StateCodingError.self) { try StateDecoder(blob: mutated) }
                    outcomes.refused += 1
                }
            }
        }
        #expect(outcomes.identical + outcomes.refused == 6_000)
        #expect(outcomes.refused > 5_000)
    }
}

@Suite("Decoding limits below zero")
struct NegativeLimitTests {
    /// `DecodingLimits`' fields are plain integers an app may set to anything: a negative
    /// limit allows nothing (as 0 does), it does not trap.
    @Test(arguments: [
        DecodingLimits(maximumStringLength: -1),
        DecodingLimits(maximumBytesLength: -1),
        DecodingLimits(maximumElementCount: -1),
        DecodingLimits(maximumDepth: -1),
    ])
    func aNegativeLimitRefusesWhatItBounds(limits: DecodingLimits) throws {
        let coder = StateEncoder()
        try coder.encode("text", forKey: "s")
        try coder.encodeBytes([1, 2], forKey: "b")
        let blob = try coder.encodedBlob()
        func isLimitExceeded(_ error: any Error) -> Bool {
            guard case .limitExceeded = error as? StateCodingError else { return false }
            return true
        }
        #expect(performing: { try StateDecoder(blob: blob, limits: limits) }, throws: isLimitExceeded)
        #expect(performing: { try StateValue.decode(blob: blob, limits: limits) }, throws: isLimitExceeded)
    }
}
