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

    /// `date` in milliseconds; one past what `Int64` counts saturates, and one that is not a
    /// number is 0. The store's own dates are the clock's, but a date of a public value
    /// (``LaunchSummary/startedAt`` is a `var`) may be any `Double`: converting one out of
    /// range trapped.
    static func milliseconds(_ date: Date) -> Int64 {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        if milliseconds.isNaN { return 0 }
        return Int64(exactly: milliseconds) ?? (milliseconds < 0 ? .min : .max)
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
