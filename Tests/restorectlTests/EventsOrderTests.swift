import Foundation
import TestSupport
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
        let ordered = EventsCommand.inOrder(journal: [earlier, started, invalidated], others: [saved, report])
        #expect(ordered.map(\.kind) == ["didEnterBackground", "willFinishLaunching", "invalidated", "saved", "restored"])
    }

    /// Events of one millisecond without a journal sequence stay in the order they came.
    @Test func eventsOfOneMillisecondKeepTheirOrder() {
        let reports = (0..<40).map { event("restored \($0)", at: 2_000.001, launch: nil, tiebreak: .max) }
        #expect(EventsCommand.inOrder(journal: [], others: reports).map(\.kind) == reports.map(\.kind))
        let journal = [event("didEnterBackground", at: 2_000.001, launch: 1, tiebreak: 3)]
        #expect(EventsCommand.inOrder(journal: journal, others: reports).map(\.kind) == ["didEnterBackground"] + reports.map(\.kind))
    }

    /// A launch whose clock was behind: a device that boots with a stale clock until it is set,
    /// a user who set it back. The journal's events stay in the order they were recorded, and
    /// each save and report stays with the launch it was made in, the one whose events' dates
    /// surround it: sorted by date, the launches of a clock set back came first, with their
    /// saves and reports, and `--limit` showed older launches in place of the newest.
    @Test func aClockSetBackLeavesEachEventWithItsLaunch() {
        let now = 1_800_000_000.0
        let year = 365 * 86_400.0
        let journal = [
            event("willFinishLaunching", at: now, launch: 1, tiebreak: 1),
            event("didEnterBackground", at: now + 0.004, launch: 1, tiebreak: 2),
            // The clock a year behind.
            event("willFinishLaunching", at: now - year, launch: 3, tiebreak: 3),
            event("didBecomeActive", at: now - year + 0.002, launch: 3, tiebreak: 4),
            event("didEnterBackground", at: now - year + 5, launch: 3, tiebreak: 5),
            // Set again, then back by a minute: the launch is dated before the first one.
            event("willFinishLaunching", at: now - 60, launch: 6, tiebreak: 6),
            event("invalidated", at: now - 60, launch: 6, tiebreak: 7),
            event("didBecomeActive", at: now - 59.9, launch: 6, tiebreak: 8),
        ]
        let others = [
            // Generation 1, saved as launch 1 went to the background; generation 2 as launch
            // 3 did, a moment after its last event; launch 6's refused restoration.
            event("saved 1", at: now + 0.004, launch: nil, tiebreak: .max - 1),
            event("saved 2", at: now - year + 5.001, launch: nil, tiebreak: .max - 1),
            event("restored 1", at: now - year + 0.001, launch: nil, tiebreak: .max),
            event("restored 2", at: now - 60, launch: nil, tiebreak: .max),
        ]
        let ordered = EventsCommand.inOrder(journal: journal, others: others)
        #expect(
            ordered.map(\.kind) == [
                "willFinishLaunching", "didEnterBackground", "saved 1",
                "willFinishLaunching", "restored 1", "didBecomeActive", "didEnterBackground", "saved 2",
                "willFinishLaunching", "invalidated", "restored 2", "didBecomeActive",
            ])
        #expect(ordered.last?.launch == 6, "the newest event is last, where --limit keeps it")
    }

    /// While the clock only goes forward, the events are in the order of their dates (by the
    /// millisecond, then the tiebreak; events of one millisecond and tiebreak in the order
    /// they came), whatever the mix of journal entries, saves and reports.
    @Test(arguments: 0..<40)
    func withAClockThatOnlyGoesForwardTheOrderIsByDate(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var journal: [EventsCommand.Event] = []
        var time = 1_700_000_000.0
        var launch: Int64 = 1
        for sequence in Int64(1)..<Int64.random(in: 1...31, using: &random) {
            // Events often share a millisecond; a new launch starts now and then.
            time += [0, 0, 0.001, 0.002, 1.5].randomElement(using: &random)!
            if Int.random(in: 0..<5, using: &random) == 0 { launch = sequence }
            journal.append(event("journal \(sequence)", at: time, launch: launch, tiebreak: sequence))
        }
        let others = (0..<Int.random(in: 0...30, using: &random)).map { index in
            event(
                "other \(index)", at: 1_700_000_000 + Double(Int.random(in: 0...20_000, using: &random)) / 1000,
                launch: nil, tiebreak: Bool.random(using: &random) ? .max : .max - 1)
        }
        func millisecond(_ event: EventsCommand.Event) -> Double { (event.date.timeIntervalSince1970 * 1000).rounded() }
        let byDate = (journal + others).enumerated().sorted {
            (millisecond($0.element), $0.element.tiebreak, $0.offset) < (millisecond($1.element), $1.element.tiebreak, $1.offset)
        }.map(\.element.kind)
        #expect(EventsCommand.inOrder(journal: journal, others: others).map(\.kind) == byDate)
    }
}
