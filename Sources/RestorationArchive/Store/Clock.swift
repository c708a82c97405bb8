#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Times as the store keeps them: milliseconds since 1970-01-01 UTC.
enum Clock {
    static func nowMilliseconds() -> Int64 {
        milliseconds(Date())
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
