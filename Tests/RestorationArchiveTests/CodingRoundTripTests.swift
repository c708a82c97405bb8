import Foundation
import Testing
@testable import RestorationArchive
import TestSupport

/// Seed 002's model types, with nested enums and arrays.
struct MenuItem: Codable, Hashable {
    enum Category: String, Codable { case coffee, tea, dessert }
    enum Size: Codable, Hashable { case small, large(extraShots: Int) }
    var name: String
    var price: Decimal
    var category: Category
    var sizes: [Size]
    var imageURL: URL?
    var allergens: [String: Bool]
}

struct Order: Codable, Hashable {
    var id: UUID
    var items: [MenuItem]
    var placedAt: Date?
    var note: String
    var quantities: [Int8]
    var thumbnail: Data
}

/// A class hierarchy coded the way Apple's documentation shows: each class its own
/// `CodingKeys`, none with a `super` case, the superclass under `superEncoder()`.
class Screen: Codable {
    var title: String
    init(title: String) { self.title = title }
}

final class ProductScreen: Screen {
    enum CodingKeys: CodingKey { case productID, banner }
    var productID: Int
    var banner: Screen?
    init(title: String, productID: Int, banner: Screen?) {
        self.productID = productID
        self.banner = banner
        super.init(title: title)
    }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        productID = try container.decode(Int.self, forKey: .productID)
        banner = try Screen(from: container.superDecoder(forKey: .banner))
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(productID, forKey: .productID)
        try banner?.encode(to: container.superEncoder(forKey: .banner))
        try super.encode(to: container.superEncoder())
    }
}

/// A `Codable` value whose keys have integer values too, and one whose `encode(to:)` refuses
/// part of itself as Apple's encoders do, handing `EncodingError` the refused value.
struct NumberedKeys: Codable {
    enum CodingKeys: Int, CodingKey { case first, second }
    var first = 1
    var second: String?

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(first, forKey: .first)
        guard let second, !second.hasPrefix("secret") else {
            throw EncodingError.invalidValue(
                second as Any,
                .init(codingPath: container.codingPath + [CodingKeys.second], debugDescription: "refused \(second ?? "")"))
        }
        try container.encode(second, forKey: .second)
    }
}

/// An `encode(to:)` that writes through one kind of container, then another: what it wrote
/// first would be lost.
struct MixedContainersValue: Encodable {
    enum Mix { case keyedThenUnkeyed, unkeyedThenKeyed, valueTwice, keyedThenValue }
    let mix: Mix
    enum Keys: CodingKey { case name }
    func encode(to encoder: any Encoder) throws {
        switch mix {
        case .keyedThenUnkeyed, .keyedThenValue:
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode("Latte", forKey: .name)
            if mix == .keyedThenValue {
                var single = encoder.singleValueContainer()
                try single.encode(2)
            } else {
                var unkeyed = encoder.unkeyedContainer()
                try unkeyed.encode(2)
            }
        case .unkeyedThenKeyed:
            var unkeyed = encoder.unkeyedContainer()
            try unkeyed.encode(2)
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode("Latte", forKey: .name)
        case .valueTwice:
            var single = encoder.singleValueContainer()
            try single.encode(1)
            try single.encode(2)
        }
    }
}

/// An order whose parts are written by two helpers, each opening the nested container (or
/// array) it adds to: Foundation's encoders hand back the one already there, so both parts
/// land in it.
struct OrderInParts: Codable, Equatable {
    var customer = "Ada"
    var placedAt = 1_700_000_000
    var lines = ["Latte", "Scone"]
    var extra = "Cookie"

    enum Keys: CodingKey { case meta, lines }
    enum MetaKeys: CodingKey { case customer, placedAt }

    init() {}

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var who = container.nestedContainer(keyedBy: MetaKeys.self, forKey: .meta)
        try who.encode(customer, forKey: .customer)
        var items = container.nestedUnkeyedContainer(forKey: .lines)
        for line in lines { try items.encode(line) }
        var when = container.nestedContainer(keyedBy: MetaKeys.self, forKey: .meta)
        try when.encode(placedAt, forKey: .placedAt)
        var more = container.nestedUnkeyedContainer(forKey: .lines)
        try more.encode(extra)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let meta = try container.nestedContainer(keyedBy: MetaKeys.self, forKey: .meta)
        customer = try meta.decode(String.self, forKey: .customer)
        placedAt = try meta.decode(Int.self, forKey: .placedAt)
        var items = try container.nestedUnkeyedContainer(forKey: .lines)
        var all: [String] = []
        while !items.isAtEnd { all.append(try items.decode(String.self)) }
        extra = all.removeLast()
        lines = all
    }
}

/// Every primitive an `Encoder` has a method for, written through a keyed container
/// (synthesized), through an unkeyed one, and as single values (enums with raw values).
struct EveryWidth: Codable, Equatable {
    var bool = true, string = "é", double = -2.5, float: Float = 0.25
    var int = Int.min, int8 = Int8.min, int16 = Int16.min, int32 = Int32.min, int64 = Int64.min
    var uint = UInt.max, uint8 = UInt8.max, uint16 = UInt16.max, uint32 = UInt32.max, uint64 = UInt64.max
    var none: Int? = nil
}

/// ``EveryWidth``'s values in one array, then the unkeyed container's nested keyed and
/// unkeyed containers and its super encoder, each holding one more value.
struct EveryWidthInOrder: Codable, Equatable {
    var values = EveryWidth()
    var nestedName = "nested", nestedNumbers: [Int16] = [-1, 2], superValue = 42

    enum NestedKeys: CodingKey { case name }

    init() {}

    func encode(to encoder: any Encoder) throws {
        var items = encoder.unkeyedContainer()
        let v = values
        try items.encode(v.bool)
        try items.encode(v.string)
        try items.encode(v.double)
        try items.encode(v.float)
        try items.encode(v.int)
        try items.encode(v.int8)
        try items.encode(v.int16)
        try items.encode(v.int32)
        try items.encode(v.int64)
        try items.encode(v.uint)
        try items.encode(v.uint8)
        try items.encode(v.uint16)
        try items.encode(v.uint32)
        try items.encode(v.uint64)
        try items.encodeNil()
        var keyed = items.nestedContainer(keyedBy: NestedKeys.self)
        try keyed.encode(nestedName, forKey: .name)
        var numbers = items.nestedUnkeyedContainer()
        for number in nestedNumbers { try numbers.encode(number) }
        try superValue.encode(to: items.superEncoder())
    }

    init(from decoder: any Decoder) throws {
        var items = try decoder.unkeyedContainer()
        #expect(items.count == 18)
        values.bool = try items.decode(Bool.self)
        values.string = try items.decode(String.self)
        values.double = try items.decode(Double.self)
        values.float = try items.decode(Float.self)
        values.int = try items.decode(Int.self)
        values.int8 = try items.decode(Int8.self)
        values.int16 = try items.decode(Int16.self)
        values.int32 = try items.decode(Int32.self)
        values.int64 = try items.decode(Int64.self)
        values.uint = try items.decode(UInt.self)
        values.uint8 = try items.decode(UInt8.self)
        values.uint16 = try items.decode(UInt16.self)
        values.uint32 = try items.decode(UInt32.self)
        values.uint64 = try items.decode(UInt64.self)
        // decodeNil takes a null and moves on; it leaves anything else where it is.
        guard try items.decodeNil(), try !items.decodeNil() else { throw CocoaError(.coderReadCorrupt) }
        values.none = nil
        nestedName = try items.nestedContainer(keyedBy: NestedKeys.self).decode(String.self, forKey: .name)
        var numbers = try items.nestedUnkeyedContainer()
        nestedNumbers = []
        while !numbers.isAtEnd { nestedNumbers.append(try numbers.decode(Int16.self)) }
        superValue = try Int(from: try items.superDecoder())
        #expect(items.isAtEnd && (try? items.decodeNil()) == false)
    }
}

enum Int8Raw: Int8, Codable { case low = -128 }
enum Int16Raw: Int16, Codable { case low = -32768 }
enum Int32Raw: Int32, Codable { case low = -2_147_483_648 }
enum Int64Raw: Int64, Codable { case low = -9_223_372_036_854_775_808 }
enum UIntRaw: UInt, Codable { case high = 18_446_744_073_709_551_615 }
enum UInt8Raw: UInt8, Codable { case high = 255 }
enum UInt16Raw: UInt16, Codable { case high = 65535 }
enum UInt32Raw: UInt32, Codable { case high = 4_294_967_295 }
enum UInt64Raw: UInt64, Codable { case high = 18_446_744_073_709_551_615 }
enum FloatRaw: Float, Codable { case quarter = 0.25 }

struct SingleValues: Codable, Equatable {
    var int8 = Int8Raw.low, int16 = Int16Raw.low, int32 = Int32Raw.low, int64 = Int64Raw.low
    var uint = UIntRaw.high, uint8 = UInt8Raw.high, uint16 = UInt16Raw.high, uint32 = UInt32Raw.high
    var uint64 = UInt64Raw.high, float = FloatRaw.quarter
}

/// A subclass and its superclass sharing one keyed container, as `super.encode(to: encoder)` does.
class Drink: Encodable {
    enum CodingKeys: CodingKey { case name }
    let name = "Latte"
}

final class HotDrink: Drink {
    enum HotKeys: CodingKey { case temperature }
    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: HotKeys.self)
        try container.encode(70, forKey: .temperature)
    }
}

@Suite("Keyed coder round trips")
struct CodingRoundTripTests {
    private func roundTrip(_ fill: (StateEncoder) throws -> Void) throws -> StateDecoder {
        let encoder = StateEncoder()
        try fill(encoder)
        return try StateDecoder(blob: try encoder.encodedBlob())
    }

    @Test func integersOfEveryWidthAndTheirEdges() throws {
        let coder = try roundTrip { c in
            try c.encode(Int.min, forKey: "int.min")
            try c.encode(Int.max, forKey: "int.max")
            try c.encode(Int8.min, forKey: "int8")
            try c.encode(Int16.min, forKey: "int16")
            try c.encode(Int32.max, forKey: "int32")
            try c.encode(Int64.min, forKey: "int64.min")
            try c.encode(Int64.max, forKey: "int64.max")
            try c.encode(UInt.max, forKey: "uint")
            try c.encode(UInt8.max, forKey: "uint8")
            try c.encode(UInt16.max, forKey: "uint16")
            try c.encode(UInt32.max, forKey: "uint32")
            try c.encode(UInt64.max, forKey: "uint64")
            try c.encode(0, forKey: "zero")
            try c.encode(-1, forKey: "minus.one")
        }
        #expect(try coder.decode(Int.self, forKey: "int.min") == Int.min)
        #expect(try coder.decode(Int.self, forKey: "int.max") == Int.max)
        #expect(try coder.decode(Int8.self, forKey: "int8") == Int8.min)
        #expect(try coder.decode(Int16.self, forKey: "int16") == Int16.min)
        #expect(try coder.decode(Int32.self, forKey: "int32") == Int32.max)
        #expect(try coder.decode(Int64.self, forKey: "int64.min") == Int64.min)
        #expect(try coder.decode(Int64.self, forKey: "int64.max") == Int64.max)
        #expect(try coder.decode(UInt.self, forKey: "uint") == UInt.max)
        #expect(try coder.decode(UInt8.self, forKey: "uint8") == UInt8.max)
        #expect(try coder.decode(UInt16.self, forKey: "uint16") == UInt16.max)
        #expect(try coder.decode(UInt32.self, forKey: "uint32") == UInt32.max)
        #expect(try coder.decode(UInt64.self, forKey: "uint64") == UInt64.max)
        #expect(try coder.decode(Int.self, forKey: "zero") == 0)
        #expect(try coder.decode(Int.self, forKey: "minus.one") == -1)
        // Widths are interchangeable when the value fits.
        #expect(try coder.decode(UInt8.self, forKey: "zero") == 0)
        #expect(try coder.decode(Int64.self, forKey: "uint32") == Int64(UInt32.max))
    }

    @Test func integerOutOfRangeIsItsOwnError() throws {
        let coder = try roundTrip { c in
            try c.encode(300, forKey: "big")
            try c.encode(-1, forKey: "negative")
            try c.encode(UInt64.max, forKey: "huge")
        }
        #expect(throws: StateCodingError.integerOutOfRange(key: "big", type: "Int8")) { try coder.decode(Int8.self, forKey: "big") }
        #expect(throws: StateCodingError.integerOutOfRange(key: "negative", type: "UInt")) { try coder.decode(UInt.self, forKey: "negative") }
        #expect(throws: StateCodingError.integerOutOfRange(key: "huge", type: "Int64")) { try coder.decode(Int64.self, forKey: "huge") }
    }

    /// `decodeNested(forKey:)` on a value that is not a container names what it found, by the
    /// same type names as the typed reads.
    @Test func aNestedContainerReadFromAnotherValueNamesItsType() throws {
        let coder = try roundTrip { c in
            try c.encodeNil(forKey: "null")
            try c.encode(true, forKey: "bool")
            try c.encode(-3, forKey: "int")
            try c.encode(UInt64.max, forKey: "uint")
            try c.encode(Float(1.5), forKey: "float")
            try c.encode(2.5, forKey: "double")
            try c.encode("text", forKey: "string")
            try c.encodeBytes([1, 2], forKey: "bytes")
            try c.encode(Date(timeIntervalSince1970: 5), forKey: "date")
            try c.encode(UUID(), forKey: "uuid")
            try c.encode(try #require(URL(string: "https://example.com")), forKey: "url")
            try c.encode([1, 2], forKey: "array")
            try c.encodeReference(to: try RestorationPath("Root"), forKey: "reference")
        }
        let found = [
            "null": "null", "bool": "bool", "int": "integer", "uint": "integer", "float": "float", "double": "double",
            "string": "string", "bytes": "bytes", "date": "date", "uuid": "uuid", "url": "url", "array": "array",
            "reference": "reference",
        ]
        for (key, type) in found {
            #expect(throws: StateCodingError.typeMismatch(key: key, expected: "container", found: type)) {
                try coder.decodeNested(forKey: key)
            }
        }
        #expect(throws: StateCodingError.keyNotFound(key: "absent")) { try coder.decodeNested(forKey: "absent") }
    }

    /// Limits no stricter than the default in any respect read every blob the encoder writes;
    /// one stricter limit is enough for an engine to read each state back before saving it.
    @Test func onlyLimitsStricterThanTheDefaultCanRefuseAnEncodedBlob() {
        #expect(DecodingLimits.default.admitsEveryEncodedBlob)
        #expect(
            DecodingLimits(
                maximumBlobSize: .max, maximumStringLength: .max, maximumBytesLength: .max, maximumDepth: 1000,
                maximumElementCount: .max
            ).admitsEveryEncodedBlob)
        let stricter = [
            DecodingLimits(maximumBlobSize: (16 << 20) - 1), DecodingLimits(maximumStringLength: (16 << 20) - 1),
            DecodingLimits(maximumBytesLength: 1024), DecodingLimits(maximumDepth: 63),
            DecodingLimits(maximumElementCount: (1 << 20) - 1),
        ]
        for limits in stricter { #expect(!limits.admitsEveryEncodedBlob, "\(limits)") }
    }

    @Test func missingKeyTypeMismatchAndDefaultsAreDistinct() throws {
        let coder = try roundTrip { c in
            try c.encode("text", forKey: "name")
            try c.encode(true, forKey: "flag")
        }
        #expect(throws: StateCodingError.keyNotFound(key: "absent")) { try coder.decode(Int.self, forKey: "absent") }
        #expect(throws: StateCodingError.typeMismatch(key: "name", expected: "integer", found: "string")) {
            try coder.decode(Int.self, forKey: "name")
        }
        #expect(throws: StateCodingError.typeMismatch(key: "flag", expected: "string", found: "bool")) {
            try coder.decode(String.self, forKey: "flag")
        }
        // The UIKit habit: defaults when absent, but a wrong type is still an error.
        #expect(try coder.decodeBool(forKey: "absent") == false)
        #expect(try coder.decodeInteger(forKey: "absent") == 0)
        #expect(try coder.decodeDouble(forKey: "absent") == 0)
        #expect(try coder.decodeFloat(forKey: "absent") == 0)
        #expect(try coder.decodeBool(forKey: "flag") == true)
        #expect(throws: StateCodingError.typeMismatch(key: "name", expected: "bool", found: "string")) {
            try coder.decodeBool(forKey: "name")
        }
        #expect(try coder.decode(String?.self, forKey: "absent") == nil)
        #expect(try coder.decodeIfPresent(String.self, forKey: "absent") == nil)
        #expect(try coder.decodeIfPresent(String.self, forKey: "name") == "text")
        // A Codable value: absent is not found, unless its type is optional.
        #expect(throws: StateCodingError.keyNotFound(key: "absent")) { try coder.decode(MenuItem.self, forKey: "absent") }
        #expect(try coder.decode(MenuItem?.self, forKey: "absent") == nil)
    }

    /// The standard library writes the value it refuses into its errors' descriptions ("Cannot
    /// initialize Category from invalid String value …"); the coder's errors name the key path
    /// and the types instead, as all its messages do, since restore reports and logs keep them.
    /// They used to carry the value, and read "is a Cannot initialize …, not an a valid value".
    @Test func aValueItsTypeRefusesIsNamedByItsKeyPathNotByItsValue() throws {
        struct Listing: Codable { var category: MenuItem.Category }
        struct Refusal: Error {}
        struct Strict: Decodable {
            enum CodingKeys: CodingKey { case category }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                throw DecodingError.typeMismatch(
                    Int.self, .init(codingPath: container.codingPath + [CodingKeys.category], debugDescription: "secret"))
            }
        }
        struct Refusing: Decodable { init(from decoder: any Decoder) throws { throw Refusal() } }
        // A key or a value the app's own init(from:) finds missing.
        struct Lacking: Decodable {
            enum CodingKeys: CodingKey { case category, size }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                if container.contains(.category) {
                    throw DecodingError.keyNotFound(
                        CodingKeys.size, .init(codingPath: container.codingPath, debugDescription: "secret"))
                }
                throw DecodingError.valueNotFound(
                    String.self, .init(codingPath: container.codingPath + [CodingKeys.category], debugDescription: "secret"))
            }
        }
        let coder = try roundTrip { c in
            try c.encode(["category": "secret-menu"], forKey: "item")
            try c.encode([9, 2], forKey: "range")
            try c.encode(["second": "x"], forKey: "numbered")
        }
        let refusals: [(StateCodingError, () throws -> Void)] = [
            (.undecodable(
                key: "item.category",
                reason: "an init(from:) decoding Listing found it invalid (DecodingError.dataCorrupted)"),
             { _ = try coder.decode(Listing.self, forKey: "item") }),
            (.undecodable(
                key: "range", reason: "an init(from:) decoding Range<Int> found it invalid (DecodingError.dataCorrupted)"),
             { _ = try coder.decode(Range<Int>.self, forKey: "range") }),
            // A key with an integer value is named by its name, which is what is stored.
            (.keyNotFound(key: "numbered.first"), { _ = try coder.decode(NumberedKeys.self, forKey: "numbered") }),
            // A type mismatch the app's own init(from:) throws, and an error of its own.
            (.undecodable(
                key: "item.category", reason: "an init(from:) decoding Strict expected Int there (DecodingError.typeMismatch)"),
             { _ = try coder.decode(Strict.self, forKey: "item") }),
            (.undecodable(key: "range", reason: "an init(from:) decoding Refusing threw Refusal()"),
             { _ = try coder.decode(Refusing.self, forKey: "range") }),
            (.keyNotFound(key: "item.size"), { _ = try coder.decode(Lacking.self, forKey: "item") }),
            (.typeMismatch(key: "numbered.category", expected: "String", found: "null"),
             { _ = try coder.decode(Lacking.self, forKey: "numbered") }),
        ]
        for (expected, decode) in refusals {
            let error = #expect(throws: StateCodingError.self) { try decode() }
            #expect(error == expected)
            #expect(error.map { !$0.description.contains("secret") && !$0.description.contains("9") } == true)
        }
        // Encoding: `EncodingError.invalidValue` holds the refused value itself.
        let encoder = StateEncoder()
        let error = #expect(throws: StateCodingError.self) {
            try encoder.encode(["menu": [NumberedKeys(second: "secret recipe")]], forKey: "state")
        }
        #expect(
            error == .unencodable(
                key: "state.menu[0].second",
                reason: "an encode(to:) encoding Dictionary<String, Array<NumberedKeys>> refused a value of type "
                    + "Optional<String> (EncodingError.invalidValue)"))
        #expect(error.map { !$0.description.contains("secret") } == true)
        // An error of the app's own encode(to:) keeps its description, as its init(from:)'s does.
        struct Unwritable: Encodable { func encode(to encoder: any Encoder) throws { throw Refusal() } }
        #expect(throws: StateCodingError.unencodable(key: "state", reason: "an encode(to:) encoding Unwritable threw Refusal()")) {
            try encoder.encode(Unwritable(), forKey: "state")
        }
    }

    @Test func eachTypedReadConvertsOrRefusesEveryOtherStoredType() throws {
        let coder = try roundTrip { c in
            try c.encode(Float(1.5), forKey: "float")
            try c.encode(UInt64.max, forKey: "unsigned")
            try c.encode(-3, forKey: "negative")
            try c.encode("text", forKey: "text")
        }
        // The stored type differs from the one asked for: a conversion, or the typed error.
        #expect(try coder.decode(Double.self, forKey: "float") == 1.5)
        #expect(try coder.decode(UInt64.self, forKey: "unsigned") == .max)
        #expect(try coder.decode(Int8.self, forKey: "negative") == -3)
        #expect(throws: StateCodingError.integerOutOfRange(key: "unsigned", type: "Int")) {
            try coder.decode(Int.self, forKey: "unsigned")
        }
        #expect(throws: StateCodingError.typeMismatch(key: "text", expected: "double", found: "string")) {
            try coder.decode(Double.self, forKey: "text")
        }
        #expect(throws: StateCodingError.typeMismatch(key: "text", expected: "date", found: "string")) {
            try coder.decode(Date.self, forKey: "text")
        }
        #expect(throws: StateCodingError.typeMismatch(key: "negative", expected: "bytes", found: "integer")) {
            try coder.decode([UInt8].self, forKey: "negative")
        }
        #expect(throws: StateCodingError.typeMismatch(key: "float", expected: "string", found: "float")) {
            try coder.decode(String.self, forKey: "float")
        }
        #expect(throws: StateCodingError.typeMismatch(key: "text", expected: "bool", found: "string")) {
            try coder.decode(Bool.self, forKey: "text")
        }
    }

    @Test func floatingPointEdgesKeepTheirBits() throws {
        let doubles: [Double] = [0, -0.0, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1]
        let floats: [Float] = [0, -0.0, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1]
        let coder = try roundTrip { c in
            for (index, value) in doubles.enumerated() { try c.encode(value, forKey: "d\(index)") }
            for (index, value) in floats.enumerated() { try c.encode(value, forKey: "f\(index)") }
        }
        for (index, value) in doubles.enumerated() {
            #expect(try coder.decode(Double.self, forKey: "d\(index)").bitPattern == value.bitPattern)
        }
        for (index, value) in floats.enumerated() {
            #expect(try coder.decode(Float.self, forKey: "f\(index)").bitPattern == value.bitPattern)
            // A float stays a float in the blob.
            if case .float = try coder.value(forKey: "f\(index)") {} else { Issue.record("f\(index) is not a float") }
        }
        // A double a float holds exactly is read as a float (`StateValue`'s conversions): NaN
        // included, which `Float(exactly:)` alone would refuse; one it does not hold is refused.
        #expect(try coder.decode(Float.self, forKey: "d2").isNaN)
        #expect(try coder.decodeFloat(forKey: "d2").isNaN)
        #expect(try coder.decode(Float.self, forKey: "d3") == .infinity)
        #expect(throws: StateCodingError.typeMismatch(key: "d7", expected: "float", found: "double")) {
            try coder.decode(Float.self, forKey: "d7")
        }
    }

    @Test func stringsBytesAndFoundationValues() throws {
        let megabyte = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let id = UUID()
        let date = Date(timeIntervalSinceReferenceDate: 123_456.789)
        let url = try #require(URL(string: "https://example.com/menu?item=latte#size"))
        let coder = try roundTrip { c in
            try c.encode("", forKey: "empty")
            try c.encode("ünïcødé 🍵 \u{0} \u{202E}", forKey: "unicode")
            try c.encodeBytes(megabyte, forKey: "megabyte")
            try c.encode([UInt8](), forKey: "no.bytes")  // generic path: bytes too
            try c.encode(Data([1, 2, 3]), forKey: "data")
            try c.encode(id, forKey: "id")
            try c.encode(date, forKey: "date")
            try c.encode(url, forKey: "url")
            try c.encodeNil(forKey: "nothing")
        }
        #expect(try coder.decode(String.self, forKey: "empty") == "")
        #expect(try coder.decode(String.self, forKey: "unicode") == "ünïcødé 🍵 \u{0} \u{202E}")
        #expect(try coder.decode([UInt8].self, forKey: "megabyte") == megabyte)
        #expect(try coder.decode([UInt8].self, forKey: "no.bytes") == [])
        #expect(try coder.decode(Data.self, forKey: "data") == Data([1, 2, 3]))
        #expect(try coder.decode(UUID.self, forKey: "id") == id)
        #expect(try coder.decode(Date.self, forKey: "date") == date)
        #expect(try coder.decode(URL.self, forKey: "url") == url)
        #expect(coder.decodeNil(forKey: "nothing"))
        #expect(!coder.decodeNil(forKey: "empty"))
        #expect(try coder.value(forKey: "megabyte") == .bytes(megabyte))
    }

    /// A value of the app's own `Codable` type holding bytes and Foundation's value types:
    /// each is stored with its native tag (as at the top level) and read back from it, in a
    /// property, in an array and in a dictionary.
    @Test func foundationValuesInsideACodableValueKeepTheirNativeTags() throws {
        struct Attachment: Codable, Equatable {
            var bytes: [UInt8]
            var data: Data
            var date: Date
            var id: UUID
            var link: URL
            var pages: [[UInt8]]
            var named: [String: [UInt8]]
        }
        let link = try #require(URL(string: "https://example.com/a"))
        let attachment = Attachment(
            bytes: [1, 2, 3], data: Data([4, 5]), date: Date(timeIntervalSinceReferenceDate: 42.5), id: UUID(),
            link: link, pages: [[6], []], named: ["x": [7, 8]])
        let coder = try roundTrip { try $0.encode(attachment, forKey: "attachment") }
        #expect(try coder.decode(Attachment.self, forKey: "attachment") == attachment)
        #expect(
            try coder.value(forKey: "attachment")
                == .container([
                    "bytes": .bytes([1, 2, 3]), "data": .bytes([4, 5]), "date": .date(attachment.date),
                    "id": .uuid(attachment.id), "link": .url(link), "pages": .array([.bytes([6]), .bytes([])]),
                    "named": .container(["x": .bytes([7, 8])]),
                ]))
    }

    @Test func arraysDictionariesAndOptionalsOfPrimitives() throws {
        let coder = try roundTrip { c in
            try c.encode([1, 2, 3], forKey: "ints")
            try c.encode(["b": 2.5, "a": -1.0], forKey: "doubles")
            try c.encode([String?.none, "x"], forKey: "optionals")
            try c.encode([[UInt16]](), forKey: "empty.nested")
            try c.encode(["outer": ["inner": [true, false]]], forKey: "deep")
            try c.encode(Int?.none, forKey: "nil.int")
            try c.encode(Int?.some(4), forKey: "some.int")
        }
        #expect(try coder.decode([Int].self, forKey: "ints") == [1, 2, 3])
        #expect(try coder.decode([String: Double].self, forKey: "doubles") == ["b": 2.5, "a": -1.0])
        #expect(try coder.decode([String?].self, forKey: "optionals") == [nil, "x"])
        #expect(try coder.decode([[UInt16]].self, forKey: "empty.nested") == [])
        #expect(try coder.decode([String: [String: [Bool]]].self, forKey: "deep") == ["outer": ["inner": [true, false]]])
        #expect(try coder.decode(Int?.self, forKey: "nil.int") == nil)
        #expect(try coder.decode(Int?.self, forKey: "some.int") == 4)
        #expect(try coder.value(forKey: "ints") == .array([.int(1), .int(2), .int(3)]))
    }

    /// Each primitive type through each kind of container comes back as it was, and is
    /// stored as the tag of its kind (signed, unsigned, float), not as a wider or other one.
    @Test func everyPrimitiveThroughEveryKindOfContainer() throws {
        let coder = try roundTrip { c in
            try c.encode(EveryWidth(), forKey: "keyed")
            try c.encode(EveryWidthInOrder(), forKey: "unkeyed")
            try c.encode(SingleValues(), forKey: "single")
        }
        #expect(try coder.decode(EveryWidth.self, forKey: "keyed") == EveryWidth())
        #expect(try coder.decode(EveryWidthInOrder.self, forKey: "unkeyed") == EveryWidthInOrder())
        #expect(try coder.decode(SingleValues.self, forKey: "single") == SingleValues())
        guard case .array(let items) = try coder.value(forKey: "unkeyed") else {
            Issue.record("an unkeyed container is not an array")
            return
        }
        #expect(items.count == 18)
        #expect(Array(items.prefix(15)) == [
            .bool(true), .string("é"), .double(-2.5), .float(0.25), .int(Int64(Int.min)), .int(-128), .int(-32768),
            .int(Int64(Int32.min)), .int(.min), .uint(UInt64(UInt.max)), .uint(255), .uint(65535),
            .uint(UInt64(UInt32.max)), .uint(.max), .null,
        ])
        #expect(Array(items.suffix(3)) == [.container(["name": .string("nested")]), .array([.int(-1), .int(2)]), .int(42)])
        guard case .container(let single) = try coder.value(forKey: "single") else {
            Issue.record("a struct is not a container")
            return
        }
        #expect(single["int8"] == .int(-128) && single["uint64"] == .uint(.max) && single["float"] == .float(0.25))
        // An element out of the asked type's range names its position.
        let narrow = try roundTrip { try $0.encode([1, 300], forKey: "bytes") }
        #expect(throws: StateCodingError.self) { try narrow.decode([UInt8].self, forKey: "bytes") }
        let error = try #require(throws: StateCodingError.self) { try narrow.decode([Int8].self, forKey: "bytes") }
        #expect(error.description.contains("'bytes[1]'"), "\(error)")
    }

    @Test func codableStructsWithNestedEnumsAndArrays() throws {
        let latte = MenuItem(
            name: "Caffè Latte", price: Decimal(string: "4.50")!, category: .coffee,
            sizes: [.small, .large(extraShots: 2)], imageURL: URL(string: "https://example.com/latte.png"),
            allergens: ["milk": true, "nuts": false])
        let order = Order(
            id: UUID(), items: [latte, latte], placedAt: nil, note: "oat milk", quantities: [1, -2, 127],
            thumbnail: Data([0xFF, 0xD8]))
        let coder = try roundTrip { c in
            try c.encode(order, forKey: "order")
            try c.encode(latte, forKey: "item")
        }
        #expect(try coder.decode(Order.self, forKey: "order") == order)
        #expect(try coder.decode(MenuItem.self, forKey: "item") == latte)
        // Foundation values keep their native types inside Codable values.
        guard case .container(let fields) = try coder.value(forKey: "order") else {
            Issue.record("an order is not a container")
            return
        }
        #expect(fields["id"] == .uuid(order.id))
        #expect(fields["thumbnail"] == .bytes([0xFF, 0xD8]))
        // A missing field names its path.
        #expect(throws: StateCodingError.keyNotFound(key: "item.size")) {
            struct Other: Codable { var name: String; var size: Int }
            _ = try coder.decode(Other.self, forKey: "item")
        }
    }

    /// `superEncoder()` and `superDecoder()` of a keyed container use a key of their own,
    /// `super`, whatever the container's key type: they used to crash on a `CodingKeys` enum.
    @Test func subclassesCodeTheirSuperclassUnderItsOwnKey() throws {
        let screen = ProductScreen(title: "Latte", productID: 7, banner: Screen(title: "New"))
        let coder = try roundTrip { try $0.encode(screen, forKey: "screen") }
        let decoded = try coder.decode(ProductScreen.self, forKey: "screen")
        #expect(decoded.title == "Latte" && decoded.productID == 7 && decoded.banner?.title == "New")
        #expect(
            try coder.value(forKey: "screen")
                == .container([
                    "productID": .int(7), "banner": .container(["title": .string("New")]),
                    "super": .container(["title": .string("Latte")]),
                ]))
        // A superclass that was never encoded reads as null: a typed error naming its path.
        let withoutSuper = try roundTrip { c in
            try c.encode(["productID": 7], forKey: "screen")
        }
        #expect(throws: StateCodingError.typeMismatch(key: "screen.banner", expected: "container", found: "null")) {
            _ = try withoutSuper.decode(ProductScreen.self, forKey: "screen")
        }
    }

    /// Writing through a keyed container, then an unkeyed one (or two single values) lost
    /// what was written first without a word; it is refused, naming the value. A subclass
    /// and its superclass sharing a keyed container still write both.
    @Test(arguments: [
        MixedContainersValue.Mix.keyedThenUnkeyed, .unkeyedThenKeyed, .valueTwice, .keyedThenValue,
    ])
    func mixingContainerKindsIsRefusedNotHalfLost(mix: MixedContainersValue.Mix) throws {
        let coder = StateEncoder()
        let error = try #require(throws: StateCodingError.self) {
            try coder.encode(["first": MixedContainersValue(mix: mix)], forKey: "order")
        }
        guard case .unencodable(let key, let reason) = error else {
            Issue.record("expected unencodable, got \(error)")
            return
        }
        #expect(key == "order.first" && reason.contains("one would be lost"), "\(error)")
        #expect(try StateDecoder(blob: try coder.encodedBlob()).keys.isEmpty)

        try coder.encode(HotDrink(), forKey: "drink")
        let decoder = try StateDecoder(blob: try coder.encodedBlob())
        #expect(try decoder.value(forKey: "drink") == .container(["name": .string("Latte"), "temperature": .int(70)]))
    }

    /// A value that encodes what it wraps as its own single value, as a wrapper type does.
    final class Wrapper: Encodable {
        var wrapped: Wrapper?
        let name: String
        init(_ name: String, wrapping wrapped: Wrapper? = nil) {
            self.name = name
            self.wrapped = wrapped
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            if let wrapped { try container.encode(wrapped) } else { try container.encode(name) }
        }
    }

    /// Values inside values through single-value containers add no depth to the blob, so
    /// the container depth limit did not stop them: an object graph with a cycle, or a very
    /// long chain, overflowed the stack and crashed the app. It is refused, naming the key,
    /// and what the coder held stays. A few wrappers deep is one value, as before.
    @Test func aValueInsideItselfIsRefusedNotACrash() throws {
        let cycle = Wrapper("loop")
        cycle.wrapped = Wrapper("back", wrapping: cycle)
        var chain = Wrapper("end")
        for index in 0..<10_000 { chain = Wrapper("\(index)", wrapping: chain) }
        let coder = StateEncoder()
        try coder.encode("kept", forKey: "before")
        for value in [cycle, chain] {
            let error = try #require(throws: StateCodingError.self) {
                try coder.encode(["screen": value], forKey: "state")
            }
            guard case .unencodable(let key, let reason) = error else {
                Issue.record("expected unencodable, got \(error)")
                continue
            }
            #expect(key == "state.screen" && reason.contains("single-value containers"), "\(error)")
        }
        // The bound is the container depth limit: a chain of 64 wrappers (each but the outermost
        // inside another through a single-value container) is encoded; one more is refused.
        var longest = Wrapper("end")
        for index in 1..<DecodingLimits.default.maximumDepth { longest = Wrapper("\(index)", wrapping: longest) }
        let bound = StateEncoder()
        try bound.encode(longest, forKey: "longest")
        #expect(try StateDecoder(blob: try bound.encodedBlob()).decode(String.self, forKey: "longest") == "end")
        #expect(throws: StateCodingError.self) { try bound.encode(Wrapper("one more", wrapping: longest), forKey: "longer") }
        cycle.wrapped = nil  // no longer a cycle
        try coder.encode(Wrapper("a", wrapping: Wrapper("b", wrapping: Wrapper("c"))), forKey: "wrapped")
        let decoder = try StateDecoder(blob: try coder.encodedBlob())
        #expect(decoder.keys.sorted() == ["before", "wrapped"])
        #expect(try decoder.decode(String.self, forKey: "wrapped") == "c")
    }

    /// A nested container (or array) opened again for its key is the one already there, as
    /// in Foundation's encoders: it was replaced by an empty one, and what the first helper had
    /// written was lost without an error. One opened where a value of another kind is was
    /// refused as mixing kinds, as before.
    @Test func aNestedContainerOpenedTwiceForOneKeyKeepsBothParts() throws {
        let coder = StateEncoder()
        try coder.encode(OrderInParts(), forKey: "order")
        let decoder = try StateDecoder(blob: try coder.encodedBlob())
        #expect(
            try decoder.value(forKey: "order")
                == .container([
                    "meta": .container(["customer": .string("Ada"), "placedAt": .int(1_700_000_000)]),
                    "lines": .array([.string("Latte"), .string("Scone"), .string("Cookie")]),
                ]))
        #expect(try decoder.decode(OrderInParts.self, forKey: "order") == OrderInParts())

        for reopened in [NestedAfterValue.Kind.keyedAfterValue, .unkeyedAfterKeyed] {
            let error = try #require(throws: StateCodingError.self) {
                try StateEncoder().encode(NestedAfterValue(kind: reopened), forKey: "order")
            }
            guard case .unencodable(let key, let reason) = error else {
                Issue.record("expected unencodable, got \(error)")
                continue
            }
            #expect(key == "order.meta" && reason.contains("one would be lost"), "\(error)")
        }
    }

    /// A nested container opened for a key that holds a value of another kind.
    struct NestedAfterValue: Encodable {
        enum Kind { case keyedAfterValue, unkeyedAfterKeyed }
        let kind: Kind
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: OrderInParts.Keys.self)
            switch kind {
            case .keyedAfterValue:
                try container.encode(5, forKey: .meta)
                var meta = container.nestedContainer(keyedBy: OrderInParts.MetaKeys.self, forKey: .meta)
                try meta.encode("Ada", forKey: .customer)
            case .unkeyedAfterKeyed:
                var meta = container.nestedContainer(keyedBy: OrderInParts.MetaKeys.self, forKey: .meta)
                try meta.encode("Ada", forKey: .customer)
                var items = container.nestedUnkeyedContainer(forKey: .meta)
                try items.encode(1)
            }
        }
    }

    @Test func nestedContainersAndDeepButLegalNesting() throws {
        let coder = try roundTrip { c in
            try c.encodeNested(forKey: "scroll") { scroll in
                try scroll.encode(120.5, forKey: "offset")
                try scroll.encodeNested(forKey: "inset") { try $0.encode(8, forKey: "top") }
            }
            // The root is depth 1: 62 nested containers reach the limit of 64 with a value inside.
            func nest(_ coder: StateEncoder, _ remaining: Int) throws {
                if remaining == 0 { try coder.encode("bottom", forKey: "leaf"); return }
                try coder.encodeNested(forKey: "n") { try nest($0, remaining - 1) }
            }
            try nest(c, 63)
        }
        let scroll = try coder.decodeNested(forKey: "scroll")
        #expect(try scroll.decode(Double.self, forKey: "offset") == 120.5)
        #expect(try scroll.decodeNested(forKey: "inset").decode(Int.self, forKey: "top") == 8)
        var level = coder
        for _ in 0..<63 { level = try level.decodeNested(forKey: "n") }
        #expect(try level.decode(String.self, forKey: "leaf") == "bottom")
    }

    /// A container's entries are kept inline up to 8, in an array above, and looked up by
    /// binary search above 16: every key is found at each size, and no other.
    @Test(arguments: [0, 1, 7, 8, 9, 16, 17, 40])
    func everyKeyIsFoundWhateverTheNumberOfKeys(count: Int) throws {
        // Keys of several lengths sharing prefixes, so that lookups compare bytes, not only lengths.
        let keys = (0..<count).map { "k\($0 % 3 == 0 ? "ey" : "")\($0)" }
        let coder = try roundTrip { c in
            for (index, key) in keys.enumerated() { try c.encode(index, forKey: key) }
            try c.encodeNested(forKey: "nested") { nested in
                for (index, key) in keys.enumerated() { try nested.encode(-index, forKey: key) }
            }
        }
        let nested = try coder.decodeNested(forKey: "nested")
        for (index, key) in keys.enumerated() {
            #expect(try coder.decode(Int.self, forKey: key) == index)
            #expect(try nested.decode(Int.self, forKey: key) == -index)
        }
        #expect(Set(coder.keys) == Set(keys + ["nested"]))
        #expect(nested.keys == keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        for missing in ["", "k", "key", "k\(count)", "key\(count)x", "nestedx"] {
            #expect(!coder.contains(missing), "\(missing)")
            #expect(!nested.contains(missing), "\(missing)")
        }
    }

    /// Keys are compared a word at a time (the encoder sorts them by their first 8 bytes as a
    /// number, the decoder checks their order and looks them up 8 or 4 bytes at a time): keys
    /// that share their first 8 bytes, differ only past them, only in length, or only by a NUL
    /// or a non-ASCII byte are each found, and told apart, in containers small and large, as
    /// an object's keys (the last of which lies right before the checksum: "sel", "selected",
    /// "selectedI", "z" and "🙂🙂x"), a nested container's and a dictionary's.
    @Test(arguments: [3, 8, 9, 21, 24])
    func keysSharingTheirFirstEightBytesAreToldApart(count: Int) throws {
        let pool = [
            "s", "se", "sel", "sele", "selec", "select", "selecte", "selected", "selectedI", "selectedIn",
            "selectedIndex", "selectedIndey", "selectedIndexes", "selectedItem", "selected\u{0}", "select\u{0}d",
            "sé", "sélectionné", "sélectionnée", "selectedé", "z", "zz", "\u{1F642}", "\u{1F642}\u{1F642}x",
        ]
        let keys = Array(pool.prefix(count))
        let values = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($0.element, $0.offset) })
        let coder = try roundTrip { c in
            for (key, value) in values { try c.encode(value, forKey: key) }
        }
        let outer = try roundTrip { c in
            try c.encodeNested(forKey: "n") { nested in
                for (key, value) in values { try nested.encode(value, forKey: key) }
            }
            try c.encode(values, forKey: "d")
        }
        let nested = try outer.decodeNested(forKey: "n")
        for (key, value) in values {
            #expect(try coder.decode(Int.self, forKey: key) == value, "\(key)")
            #expect(try nested.decode(Int.self, forKey: key) == value, "\(key)")
        }
        #expect(try outer.decode([String: Int].self, forKey: "d") == values)
        #expect(coder.keys == keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(nested.keys == coder.keys)
        for missing in pool.dropFirst(count) + ["", "selectedIndex\u{0}", "selectedIndexe", "selectedIndew", "sf", "s\u{0}"] {
            #expect(!coder.contains(missing), "\(missing)")
            #expect(!nested.contains(missing), "\(missing)")
        }
    }

    @Test func nestingPastTheLimitIsRefusedWhenEncoding() throws {
        let encoder = StateEncoder()
        func nest(_ coder: StateEncoder, _ remaining: Int) throws {
            if remaining == 0 { return }
            try coder.encodeNested(forKey: "n") { try nest($0, remaining - 1) }
        }
        #expect(throws: StateCodingError.self) { try nest(encoder, 64) }
        indirect enum Chain: Codable { case end, link(Chain) }
        var chain = Chain.end
        for _ in 0..<100 { chain = .link(chain) }
        #expect(throws: StateCodingError.self) { try StateEncoder().encode(chain, forKey: "chain") }
    }

    @Test func referencesToOtherRestorableObjects() throws {
        let children = [try RestorationPath("Tabs", "Nav", "Categories"), try RestorationPath("Tabs", "Nav", "Menu")]
        let coder = try roundTrip { c in
            try c.encodeReference(to: try RestorationPath("Tabs", "Nav/with%slash"), forKey: "selected")
            try c.encodeReferences(to: children, forKey: "children")
        }
        #expect(try coder.decodeReference(forKey: "selected") == (try RestorationPath("Tabs", "Nav/with%slash")))
        #expect(try coder.decodeReferences(forKey: "children") == children)
        #expect(try coder.value(forKey: "children") == .array(children.map { .reference($0) }))
        // One reference is not a list of them, nor a list one.
        #expect(throws: StateCodingError.typeMismatch(key: "selected", expected: "array of references", found: "reference")) {
            try coder.decodeReferences(forKey: "selected")
        }
        #expect(throws: StateCodingError.self) { try coder.decodeReference(forKey: "children") }
    }

    @Test func reservedAndInvalidKeysAreRefused() throws {
        let encoder = StateEncoder()
        #expect(throws: StateCodingError.reservedKey("restoration.children")) {
            try encoder.encode(1, forKey: "restoration.children")
        }
        // In a nested container too: the prefix is the engine's wherever it appears.
        #expect(throws: StateCodingError.reservedKey("restoration.children")) {
            try encoder.encodeNested(forKey: "nested") { try $0.encode(1, forKey: "restoration.children") }
        }
        #expect(throws: StateCodingError.self) { try encoder.encode(1, forKey: "") }
        // A nested container's own key too, before its body runs.
        var bodyRan = false
        #expect(throws: StateCodingError.reservedKey("restoration.nested")) {
            try encoder.encodeNested(forKey: "restoration.nested") { _ in bodyRan = true }
        }
        #expect(throws: StateCodingError.self) { try encoder.encodeNested(forKey: "") { _ in bodyRan = true } }
        #expect(!bodyRan)
        #expect(throws: StateCodingError.self) { try encoder.encode(1, forKey: String(repeating: "k", count: 1025)) }
        #expect(throws: StateCodingError.invalidKey("a key must be at most 1024 bytes of UTF-8")) {
            try encoder.encode(1, forKey: "é" + String(repeating: "k", count: 1023))  // 1,025 bytes, 1,024 characters
        }
        // A value that fails part-way (a dictionary key too long) leaves nothing behind.
        #expect(throws: StateCodingError.self) {
            try encoder.encode(["a": 1, String(repeating: "k", count: 1025): 2], forKey: "dictionary")
        }
        #expect(encoder.keys.isEmpty)
        try encoder.encode(7, forKey: "kept")
        let blob = try encoder.encodedBlob()
        #expect(blob == sealed([0x01, 0x01, 0x04] + Array("kept".utf8) + [0x03, 0x0E]))
        let engine = StateEncoder.forEngine()
        try engine.encode(1, forKey: "restoration.children")
        #expect(engine.keys == ["restoration.children"])
    }

    @Test func theReservedPrefixIsComparedByItsBytes() throws {
        let prefix = Array(StateEncoder.reservedKeyPrefix.utf8)
        #expect(prefix.count == 12)
        #expect(prefix.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } == StateEncoder.reservedKeyHead)
        #expect(
            prefix.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) }
                == StateEncoder.reservedKeyTail)
        for key in ["restoration.", "restoration.x", "restoration.état"] {
            #expect(throws: StateCodingError.reservedKey(key)) { try StateEncoder().encode(1, forKey: key) }
        }
        let allowed = ["restoration", "restorationX", "restoration_x", "Restoration.x", "restoratioN.x", "xrestoration.", "é"]
        let encoder = StateEncoder()
        for key in allowed { try encoder.encode(1, forKey: key) }
        #expect(Set(encoder.keys) == Set(allowed))
    }

    /// The coder keeps up to 8 entries inline and more in an array, and finds each entry's end
    /// from where the next begins: keys in any order, repeated, of lengths whose prefix takes
    /// one or two bytes, with a failed value among them, give the blob the tree gives.
    @Test(arguments: [1, 8, 9, 30])
    func shuffledRepeatedKeysGiveTheSameBlobAsTheTree(count: Int) throws {
        var generator = SeededGenerator(seed: UInt64(count))
        let keys = (0..<count).map { index in
            String(repeating: "k", count: index % 4 == 0 ? 130 + index : 1 + index % 9) + "\(index)"
        }
        var expected: [String: StateValue] = [:]
        let encoder = StateEncoder()
        for round in 0..<2 {
            for key in keys.shuffled(using: &generator) {
                let value = "\(key.count)-\(round)"
                try encoder.encode(value, forKey: key)
                expected[key] = .string(value)
                #expect(throws: StateCodingError.self) {
                    try encoder.encode(["a": 1, String(repeating: "x", count: 1025): 2], forKey: key + "!")
                }
            }
        }
        #expect(try encoder.encodedBlob() == StateValue.encode(expected))
        #expect(encoder.keys == keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test func encodingIsDeterministicWhateverTheOrder() throws {
        let first = StateEncoder()
        try first.encode(1, forKey: "b")
        try first.encode("x", forKey: "a")
        try first.encode(["z": 1, "y": 2, "x": 3], forKey: "c")
        let second = StateEncoder()
        try second.encode(["x": 3, "y": 2, "z": 1], forKey: "c")
        try second.encode("x", forKey: "a")
        try second.encode(0, forKey: "b")
        try second.encode(1, forKey: "b")  // the last value of a key wins
        #expect(try first.encodedBlob() == second.encodedBlob())
        #expect(first.keys == ["a", "b", "c"])
        // And the tree encodes to the same bytes as the coder.
        let tree = try StateValue.decode(blob: try first.encodedBlob())
        #expect(try StateValue.encode(tree) == first.encodedBlob())
    }

    @Test func anEmptyCoderIsAValidBlob() throws {
        let blob = try StateEncoder().encodedBlob()
        #expect(blob.count == 6)
        #expect(try StateDecoder(blob: blob).keys == [])
    }
}
