import Foundation
import Testing
@testable import restorectl

/// How `restorectl events` merges the journal, the saves and the restore reports.
@Suite("restorectl: the order of events")
struct EventsOrderTests {
    private func event(_ kind: String, at seconds: Double, launch: Int64?, tiebreak: Int64) -> EventsCommand.Event {
        EventsCommand.Event(
            date: Date(timeIntervalSince1970: seconds), kind: kind, archive: nil, generation: nil, launch: launch,
            detail: "", tiebreak: tiebreak)
    }

    /// A restore report kept by an earlier version of the library has the restoration's exact
    /// start; the journal rounds to the millisecond, so the `willFinishLaunching` of the same
    /// launch can be dated after the report. Compared by the millisecond, the report comes
    /// after it, under its own launch.
    @Test func aReportOfTheSameMillisecondComesAfterTheJournalsEntries() {
        let earlier = event("didEnterBackground", at: 1_000.4, launch: 1, tiebreak: 5)
        let started = event("willFinishLaunching", at: 1_000.487, launch: 6, tiebreak: 6)
        let invalidated = event("invalidated", at: 1_000.487, launch: 6, tiebreak: 7)
        let report = event("restored", at: 1_000.4866, launch: nil, tiebreak: .max)
        let saved = event("saved", at: 1_000.4874, launch: nil, tiebreak: .max - 1)
        let ordered = EventsCommand.inOrder([report, saved, invalidated, earlier, started])
        #expect(ordered.map(\.kind) == ["didEnterBackground", "willFinishLaunching", "invalidated", "saved", "restored"])
    }

    /// Events of one millisecond without a journal sequence stay in the order they came.
    @Test func eventsOfOneMillisecondKeepTheirOrder() {
        let reports = (0..<40).map { event("restored \($0)", at: 2_000.001, launch: nil, tiebreak: .max) }
        #expect(EventsCommand.inOrder(reports).map(\.kind) == reports.map(\.kind))
    }
}
