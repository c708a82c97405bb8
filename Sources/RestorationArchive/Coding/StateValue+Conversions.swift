#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Typed reads of a value, telling apart a type mismatch and an integer out of range.
extension StateValue {
    func integer<T: FixedWidthInteger>(_: T.Type, key: String) throws(StateCodingError) -> T {
        switch self {
        case .int(let value):
            guard let exact = T(exactly: value) else { throw .integerOutOfRange(key: key, type: "\(T.self)") }
            return exact
        case .uint(let value):
            guard let exact = T(exactly: value) else { throw .integerOutOfRange(key: key, type: "\(T.self)") }
            return exact
        default:
            throw .typeMismatch(key: key, expected: "integer", found: typeName)
        }
    }

    func bool(key: String) throws(StateCodingError) -> Bool {
        guard case .bool(let value) = self else { throw .typeMismatch(key: key, expected: "bool", found: typeName) }
        return value
    }

    /// A double, or a float widened exactly.
    func double(key: String) throws(StateCodingError) -> Double {
        switch self {
        case .double(let value): return value
        case .float(let value): return Double(value)
        default: throw .typeMismatch(key: key, expected: "double", found: typeName)
        }
    }

    /// A float, or a double that a float holds exactly (NaN included).
    func float(key: String) throws(StateCodingError) -> Float {
        switch self {
        case .float(let value): return value
        case .double(let value):
            if value.isNaN { return .nan }
            guard let exact = Float(exactly: value) else {
                throw .typeMismatch(key: key, expected: "float", found: "double")
            }
            return exact
        default: throw .typeMismatch(key: key, expected: "float", found: typeName)
        }
    }

    func string(key: String) throws(StateCodingError) -> String {
        guard case .string(let value) = self else { throw .typeMismatch(key: key, expected: "string", found: typeName) }
        return value
    }

    func bytes(key: String) throws(StateCodingError) -> [UInt8] {
        guard case .bytes(let value) = self else { throw .typeMismatch(key: key, expected: "bytes", found: typeName) }
        return value
    }

    func date(key: String) throws(StateCodingError) -> Date {
        guard case .date(let value) = self else { throw .typeMismatch(key: key, expected: "date", found: typeName) }
        return value
    }

    func uuid(key: String) throws(StateCodingError) -> UUID {
        guard case .uuid(let value) = self else { throw .typeMismatch(key: key, expected: "uuid", found: typeName) }
        return value
    }

    func url(key: String) throws(StateCodingError) -> URL {
        guard case .url(let value) = self else { throw .typeMismatch(key: key, expected: "url", found: typeName) }
        return value
    }

    func reference(key: String) throws(StateCodingError) -> RestorationPath {
        guard case .reference(let value) = self else {
            throw .typeMismatch(key: key, expected: "reference", found: typeName)
        }
        return value
    }
}
