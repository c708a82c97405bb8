import Foundation

/// How restorectl writes a date, in text and in JSON: ISO 8601 in UTC with milliseconds,
/// the precision the store keeps (`2026-11-22T18:01:07.412Z`), so that events of the same
/// second still read in order.
///
/// Written here rather than by Foundation's `ISO8601FormatStyle`, which shows a stored
/// millisecond one less about half the time (it truncates `Double` seconds such as
/// `…07.41199…`), switches to the Julian calendar before 1582-10-15, and shows every date
/// before 4713 BC (NaN included) as `-4712-01-01T12:00:00.000Z`. A date in an app's state can
/// be any `Double`, so:
/// - years 0000–9999 as `YYYY`, others as a sign and at least six digits (`+010000`,
///   `-000001`), as ISO 8601's expanded years and JavaScript's `toISOString` write them;
/// - a date too far out to count in milliseconds as its seconds since 2001-01-01
///   (`1e+300 seconds since 2001-01-01T00:00:00Z`);
/// - a date that is not a number as the strings restorectl uses for non-finite numbers:
///   `NaN`, `+Infinity`, `-Infinity`.
enum Timestamp {
    static func text(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        if !seconds.isFinite { return NonFiniteNumber.text(seconds) }
        guard let milliseconds = Int64(exactly: (seconds * 1000).rounded()) else {
            return "\(date.timeIntervalSinceReferenceDate) seconds since 2001-01-01T00:00:00Z"
        }
        let (days, millisecondOfDay) = floorDivision(milliseconds, by: 86_400_000)
        let (year, month, day) = civilDate(daysSince1970: days)
        let yearText =
            (0...9999).contains(year)
            ? padded(year, 4) : (year < 0 ? "-" : "+") + padded(year.magnitude, 6)
        return yearText + "-" + padded(month, 2) + "-" + padded(day, 2) + "T"
            + padded(millisecondOfDay / 3_600_000, 2) + ":" + padded(millisecondOfDay / 60_000 % 60, 2) + ":"
            + padded(millisecondOfDay / 1000 % 60, 2) + "." + padded(millisecondOfDay % 1000, 3) + "Z"
    }

    /// The quotient rounded down and a remainder in `0..<divisor`.
    private static func floorDivision(_ value: Int64, by divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01: Howard Hinnant's
    /// `civil_from_days` (http://howardhinnant.github.io/date_algorithms.html), exact for
    /// every day a millisecond count in `Int64` reaches.
    private static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468  // days since 0000-03-01
        let era = floorDivision(shifted, by: 146_097).0  // 400-year cycles
        let dayOfEra = shifted - era * 146_097  // 0...146_096
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365  // 0...399
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // 0...365, from March 1
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0...11, March first
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func padded(_ value: some BinaryInteger, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
