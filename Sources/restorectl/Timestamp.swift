import Foundation

/// How restorectl writes a date, in text and in JSON: ISO 8601 in UTC with milliseconds,
/// the precision the store keeps (`2026-11-22T18:01:07.412Z`), so that events of the same
/// second still read in order.
enum Timestamp {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    static func text(_ date: Date) -> String {
        date.formatted(style)
    }
}
