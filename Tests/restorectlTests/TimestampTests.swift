import Foundation
import Testing
import TestSupport
@testable import restorectl

/// Dates as restorectl writes them: exactly the millisecond stored, in the proleptic
/// Gregorian calendar, and something true for any `Double` an app's state holds.
@Suite("restorectl: timestamps")
struct TimestampTests {
    /// How the store turns its millisecond counts into dates.
    private func stored(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// Foundation formats whole seconds exactly from 1583 on: the oracle for the rest.
    @Test func everyStoredMillisecondIsWrittenAsStored() {
        let wholeSeconds = Date.ISO8601FormatStyle()
        var random = SeededGenerator(seed: 39)
        for _ in 0..<5_000 {
            // 1583 to 9999, with most around now.
            let milliseconds =
                Bool.random(using: &random)
                ? Int64.random(in: 1_700_000_000_000...1_900_000_000_000, using: &random)
                : Int64.random(in: -12_212_553_600_000...253_402_300_799_999, using: &random)
            let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
            let expected =
                String(Date(timeIntervalSince1970: Double(seconds)).formatted(wholeSeconds).dropLast())
                + "." + String(format: "%03d", milliseconds - seconds * 1000) + "Z"
            #expect(Timestamp.text(stored(milliseconds)) == expected, "\(milliseconds) ms")
        }
    }

    @Test func edgesOfTheCalendar() {
        #expect(Timestamp.text(stored(0)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.text(stored(-1)) == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp.text(stored(1_795_000_007_919)) == "2026-11-18T11:06:47.919Z")
        #expect(Timestamp.text(stored(951_782_400_000)) == "2000-02-29T00:00:00.000Z")
        // No Julian days: the day before the Gregorian calendar began is 1582-10-14.
        #expect(Timestamp.text(stored(-12_219_292_800_000 - 1)) == "1582-10-14T23:59:59.999Z")
        #expect(Timestamp.text(stored(-62_135_596_800_000)) == "0001-01-01T00:00:00.000Z")
        #expect(Timestamp.text(stored(-62_135_596_800_000 - 86_400_000)) == "0000-12-31T00:00:00.000Z")
        #expect(Timestamp.text(stored(-62_167_219_200_000 - 1)) == "-000001-12-31T23:59:59.999Z")
        #expect(Timestamp.text(stored(253_402_300_800_000)) == "+010000-01-01T00:00:00.000Z")
        // The ends of JavaScript's dates, as its toISOString writes them.
        #expect(Timestamp.text(stored(8_640_000_000_000_000)) == "+275760-09-13T00:00:00.000Z")
        #expect(Timestamp.text(stored(-8_640_000_000_000_000)) == "-271821-04-20T00:00:00.000Z")
        // The nearest millisecond, not the one below.
        #expect(Timestamp.text(Date(timeIntervalSinceReferenceDate: 0.0009996)) == "2001-01-01T00:00:00.001Z")
    }

    @Test func datesThatAreNotOnTheCalendar() {
        #expect(Timestamp.text(Date(timeIntervalSinceReferenceDate: .nan)) == "NaN")
        #expect(Timestamp.text(Date(timeIntervalSinceReferenceDate: .infinity)) == "+Infinity")
        #expect(Timestamp.text(Date(timeIntervalSinceReferenceDate: -.infinity)) == "-Infinity")
        #expect(Timestamp.text(Date(timeIntervalSinceReferenceDate: 1e300)) == "1e+300 seconds since 2001-01-01T00:00:00Z")
        #expect(Timestamp.text(Date(timeIntervalSinceReferenceDate: -1e17)) == "-1e+17 seconds since 2001-01-01T00:00:00Z")
        // Nearly as far as a millisecond count reaches (9.2e15 s) is still a date: 9e15 s is
        // 285,200,616.56 average Gregorian years (365.2425 days) after 1970.
        #expect(Timestamp.text(Date(timeIntervalSince1970: 9e15)) == "+285200616-07-24T16:00:00.000Z")
        // A tampered store's extremes: the least is a date (as Java's Instant writes it), the
        // greatest rounds past Int64 as a Double, and is written in seconds.
        #expect(Timestamp.text(stored(.min)) == "-292275055-05-16T16:47:04.192Z")
        #expect(Timestamp.text(stored(.max)) == "9.223371058547576e+15 seconds since 2001-01-01T00:00:00Z")
    }
}
