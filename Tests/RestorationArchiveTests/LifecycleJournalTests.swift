import Foundation
import Logging
import RestorationArchive
import Synchronization
import Testing
import TestSupport

/// The lifecycle events of one launch, recorded by a fresh `ArchiveStore` (a new launch).
private func launch(
    _ path: String, _ events: [LifecycleEvent], configuration: ArchiveStore.Configuration = .init()
) throws -> ArchiveStore {
    let store = try ArchiveStore(path: path, configuration: configuration)
    for event in events { try store.record(event) }
    return store
}

private let started: [LifecycleEvent] = [.willFinishLaunching, .didFinishLaunching, .didBecomeActive]
private let backgrounded: [LifecycleEvent] = started + [.willResignActive, .didEnterBackground]

@Suite("Lifecycle journal (R15)")
struct LifecycleJournalTests {
    @Test func R15_eachEventIsCommittedAtOnceWithTheAppState() throws {
        try withTemporaryStorePath { path in
            let app = try ArchiveStore(path: path)
            let inspector = try ArchiveStore(path: path, mode: .readOnly)
            for event in LifecycleEvent.allCases {
                let entry = try app.record(event)
                // Another connection sees it at once: it was committed.
                #expect(try inspector.journal(limit: 1) == [entry])
            }
            let entries = try inspector.journal()
            #expect(entries.map(\.kind) == LifecycleEvent.allCases.map { .lifecycle($0, $0.applicationState) })
            #expect(entries.map(\.sequence) == entries.map(\.sequence).sorted())
            #expect(Set(entries.map(\.launch)).count == 1, "one store, one launch")
            #expect(entries.map(\.processID).allSatisfy { $0 == Int64(getpid()) })
            #expect(
                LifecycleEvent.allCases.map(\.applicationState)
                    == [.inactive, .inactive, .active, .inactive, .background, .inactive, .terminated])
            // On screen, where an unexpected death is a crash: all but the background and the end.
            #expect(
                LifecycleEvent.allCases.map(\.applicationState.isForeground) == [true, true, true, true, false, true, false])
        }
    }

    @Test(arguments: [
        (started, LaunchSummary.Ending.inForeground),
        (backgrounded, .inBackground),
        (backgrounded + [.willEnterForeground], .inForeground),
        (backgrounded + [.willEnterForeground, .didBecomeActive, .willResignActive], .inForeground),
        (backgrounded + [.willTerminate], .terminated),
        ([.willFinishLaunching], .inForeground),
    ])
    func R15_theNextLaunchTellsHowThePreviousOneEnded(events: [LifecycleEvent], ending: LaunchSummary.Ending) throws {
        try withTemporaryStorePath { path in
            _ = try launch(path, events)
            let next = try ArchiveStore(path: path)
            let previous = try #require(try next.previousLaunch())
            #expect(previous.ending == ending)
            #expect(previous.lastEvent == events.last)
            // Once this launch records its own events, "previous" still means the one before.
            try next.record(.willFinishLaunching)
            #expect(try next.previousLaunch() == previous)
            #expect(try next.launches().count == 2)
        }
    }

    @Test func R15_aFirstLaunchHasNoPreviousLaunch() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            #expect(try store.previousLaunch() == nil)
            try store.record(.willFinishLaunching)
            #expect(try store.previousLaunch() == nil)
            #expect(try store.launches().map(\.ending) == [.inForeground])
        }
    }

    @Test func R15_willFinishLaunchingStartsANewLaunchInTheSameStore() throws {
        try withTemporaryStorePath { path in
            let store = try launch(path, backgrounded)
            try store.record(.willFinishLaunching)
            let launches = try store.launches()
            #expect(launches.map(\.ending) == [.inBackground, .inForeground])
            #expect(try store.previousLaunch()?.launch == launches[0].launch)
        }
    }

    /// The previous launch, asked on one thread while another records the store's first
    /// event: the launch before, never the launch that event starts (which the store then
    /// records in).
    @Test func thePreviousLaunchAskedWhileTheLaunchStartsIsTheOneBefore() throws {
        try withTemporaryStorePath { path in
            let failures = Failures()
            for _ in 0..<40 {
                let before = try launch(path, backgrounded).launches().last?.launch
                let store = try ArchiveStore(path: path)
                let started = DispatchSemaphore(value: 0)
                let recorded = DispatchSemaphore(value: 0)
                Thread {
                    started.signal()
                    do { try store.record(.willFinishLaunching) } catch { failures.append("\(error)") }
                    recorded.signal()
                }.start()
                started.wait()
                while recorded.wait(timeout: .now()) == .timedOut {
                    let previous = try store.previousLaunch()?.launch
                    if previous != before { failures.append("previous launch \(String(describing: previous)), not \(String(describing: before))") }
                }
                #expect(try store.previousLaunch()?.launch == before)
                try store.record(.didEnterBackground)
            }
            #expect(failures.all.isEmpty)
        }
    }

    @Test func R15_theJournalKeepsOnlyItsNewestEntries() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let total = ArchiveStore.retainedJournalEntries + 44
            var last: JournalEntry?
            for index in 0..<total {
                last = try store.record(index.isMultiple(of: 2) ? .didEnterBackground : .willEnterForeground)
            }
            let entries = try store.journal()
            #expect(entries.count == ArchiveStore.retainedJournalEntries)
            #expect(entries.last == last)
            #expect(entries.first?.sequence == Int64(total - ArchiveStore.retainedJournalEntries + 1))
            #expect(try store.journal(limit: 3) == Array(entries.suffix(3)))
            // The launch is still known although its first entry is gone.
            #expect(try store.launches().map(\.ending) == [.inForeground])
        }
    }

    /// An entry that cannot be read makes the whole journal throw, but a limit reads only the
    /// entries it returns: the newest, after the damaged one, still read, as its comment says.
    @Test func R15_aDamagedEntryHidesTheJournalButNotTheNewerEntriesALimitReads() throws {
        try withTemporaryStorePath { path in
            _ = try launch(path, backgrounded)
            _ = try launch(path, backgrounded)
            try tamper(with: path, "PRAGMA ignore_check_constraints = ON; UPDATE journal SET event = 'bogus' WHERE id = 3")
            let store = try ArchiveStore(path: path)
            let error = #expect(throws: ArchiveStoreError.self) { try store.journal() }
            #expect(error == .damagedHistory("a journal entry has an unknown event"))
            let newer = try store.journal(limit: 7)
            #expect(newer.map(\.sequence) == Array(4...10))
            #expect(throws: ArchiveStoreError.self) { try store.journal(limit: 8) }
        }
    }

    @Test func R15_aReadOnlyStoreRecordsNothing() throws {
        try withTemporaryStorePath { path in
            _ = try launch(path, started)
            let before = fileBytes(path)
            let inspector = try ArchiveStore(path: path, mode: .readOnly)
            #expect(throws: ArchiveStoreError.readOnly) { () throws -> Void in try inspector.record(.didBecomeActive) }
            #expect(try inspector.journal().count == started.count)
            #expect(fileBytes(path) == before)
        }
    }
}

@Suite("Crash policy: discard after a death in the foreground")
struct ForegroundDeathPolicyTests {
    let policy = ArchiveStore.Configuration(crashPolicy: .discardAfterForegroundDeath)

    /// A launch that saves "value" in the background and then runs `after`.
    private func savingLaunch(_ path: String, _ value: String, then after: [LifecycleEvent] = []) throws {
        let store = try launch(path, started + [.willResignActive], configuration: policy)
        try makeEngine(store).preserve([Probe("Root", value: value)])
        for event in [LifecycleEvent.didEnterBackground] + after { try store.record(event) }
    }

    @Test func killedInTheBackgroundIsRestored() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            let store = try launch(path, [.willFinishLaunching], configuration: policy)
            let root = Probe("Root")
            #expect(try makeEngine(store).restore([root]).report.outcome == .restored)
            #expect(root.value == "saved")
            #expect(try store.journal().allSatisfy { if case .lifecycle = $0.kind { true } else { false } })
        }
    }

    @Test func diedInTheForegroundIsInvalidatedBeforeAnythingIsDecoded() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved", then: [.willEnterForeground, .didBecomeActive])
            let reason = "the app died in the foreground (its last event was didBecomeActive)"
            let root = Probe("Root")
            let refused = RestoreReport.Outcome.refused(reason: "generation 1 was invalidated: \(reason)")
            do {
                let store = try launch(path, [.willFinishLaunching], configuration: policy)
                #expect(try makeEngine(store).restore([root]).report.outcome == refused)
                #expect(root.decodeCount == 0)
                let entries = try store.journal()
                #expect(entries.last?.kind == .invalidated(.main, 1, reason: reason))
                #expect(entries.last?.launch == entries.dropLast().last?.launch, "the invalidation belongs to this launch")
                // No loop: this launch dies in the foreground too (its store is released on
                // screen), before saving anything; the next one has nothing left to
                // invalidate and restores nothing.
                try store.record(.didBecomeActive)
            }
            let third = try launch(path, [.willFinishLaunching], configuration: policy)
            #expect(try third.previousLaunch()?.ending == .inForeground)
            #expect(try makeEngine(third).restore([root]).report.outcome == refused)
            #expect(try third.journal().filter { if case .invalidated = $0.kind { true } else { false } }.count == 1)

            // What that launch saves in the background is restored by the next one.
            try makeEngine(third).preserve([Probe("Root", value: "fresh")])
            try third.record(.didEnterBackground)
            let fourth = try launch(path, [.willFinishLaunching], configuration: policy)
            let fresh = Probe("Root")
            #expect(try makeEngine(fourth).restore([fresh]).report.outcome == .restored)
            #expect(fresh.value == "fresh")
        }
    }

    /// A read-only store cannot record the verdict on a launch that died in the foreground,
    /// but it decides as the app's next read-write launch will, writing nothing: it restored
    /// the state that launch left, which the policy discards (and which may kill whatever
    /// restores it the same way).
    @Test func aReadOnlyStoreJudgesALaunchThatDiedInTheForegroundWithoutWriting() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved", then: [.willEnterForeground, .didBecomeActive])
            let before = fileBytes(path)
            let reader = try ArchiveStore(path: path, mode: .readOnly, configuration: policy)
            let root = Probe("Root")
            let result = try makeEngine(reader).restore([root])
            #expect(
                result.report.outcome
                    == .refused(
                        reason:
                            "the app died in the foreground (its last event was didBecomeActive): a read-write launch invalidates generation 1"
                    ))
            #expect(root.decodeCount == 0)
            #expect(fileBytes(path) == before)
            // Another policy restores it, read-only or not.
            let other = Probe("Root")
            #expect(try makeEngine(try ArchiveStore(path: path, mode: .readOnly)).restore([other]).report.outcome == .restored)
            #expect(other.value == "saved")
            // The app's launch records the verdict; the reader then says what it recorded.
            let store = try launch(path, [.willFinishLaunching], configuration: policy)
            let reason = "the app died in the foreground (its last event was didBecomeActive)"
            guard case .invalidated(let recorded, _)? = try store.header()?.state else {
                Issue.record("the launch must invalidate generation 1")
                return
            }
            #expect(recorded == reason)
            #expect(
                try makeEngine(reader).restore([Probe("Root")]).report.outcome
                    == .refused(reason: "generation 1 was invalidated: \(reason)"))
            // While that launch runs on screen, the reader judges nothing more: what it saves
            // is restored.
            try makeEngine(store).preserve([Probe("Root", value: "fresh")])
            let fresh = Probe("Root")
            #expect(try makeEngine(reader).restore([fresh]).report.outcome == .restored)
            #expect(fresh.value == "fresh")
        }
    }

    /// Launch numbers start again after an erase. A store of this process whose launch began
    /// before the erase kept appending to "its" number, by then another launch's (here the
    /// one of a store opened after the erase, which ended in the background and was
    /// released): that launch then read as one that died on screen, unlisted, and the next
    /// launch invalidated what it saved. A launch now knows the store it began in.
    @Test func aLaunchBegunBeforeAnEraseDoesNotContinueAnotherLaunchOfItsNumber() throws {
        try withTemporaryStorePath { path in
            let app = try launch(path, started, configuration: policy)
            let before = try #require(try app.journal().last?.launch)
            try ArchiveStore.erase(at: path)
            do {
                // Another part of the app, opened after the erase: a launch of its own, which
                // saves, goes to the background and ends.
                let other = try launch(path, [.willFinishLaunching], configuration: policy)
                #expect(try other.journal().last?.launch == before, "numbers start again")
                try makeEngine(other).preserve([Probe("Root", value: "saved after the erase")])
                try other.record(.didEnterBackground)
            }
            let entry = try app.record(.willResignActive)
            #expect(entry.launch != before)
            #expect(try app.launches().count == 2)

            let next = try launch(path, [.willFinishLaunching], configuration: policy)
            let root = Probe("Root")
            #expect(try makeEngine(next).restore([root]).report.outcome == .restored)
            #expect(root.value == "saved after the erase")
            #expect(try next.journal().allSatisfy { if case .lifecycle = $0.kind { true } else { false } })
            withExtendedLifetime(app) {}
        }
    }

    /// A summary's dates are `var`s an app may set to any value: asking whether its process
    /// runs answers, for a date too far out to count in milliseconds too (it trapped).
    @Test func aLaunchSummaryOfAnyDateTellsWhetherItsProcessRuns() throws {
        let farOut = [Double.infinity, 1e300, 9.3e15, -Double.infinity, -1e300, Double.nan, 0]
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved", then: [.willEnterForeground, .didBecomeActive])
            var summary = try #require(try ArchiveStore(path: path).previousLaunch())
            #expect(summary.processIsRunning, "this process recorded it")
            // Its entries record this process's start, which no date changes.
            for seconds in farOut {
                summary.startedAt = Date(timeIntervalSince1970: seconds)
                #expect(summary.processIsRunning, "\(seconds)")
            }
            // Entries written before schema v0010 (and so before v0012's checksums) record no
            // start: the date tells.
            try tamper(with: path, "UPDATE journal SET process_boot = NULL, process_start = NULL, checksum = NULL")
            summary = try #require(try ArchiveStore(path: path).previousLaunch())
            #expect(summary.processIsRunning, "this process recorded it")
            for seconds in farOut {
                summary.startedAt = Date(timeIntervalSince1970: seconds)
                // This process started after the moments of the last four: not the one that
                // recorded them.
                #expect(summary.processIsRunning == (seconds > 0), "\(seconds)")
            }
        }
    }

    /// Another instance of the app, on screen in another process now, has not died: a launch
    /// while it runs invalidates nothing of what it saved. Nor after the wall clock was
    /// stepped forward an hour since its launch began (its entries' times then lie before its
    /// process seems to have started): the journal records the process's start as the system
    /// counts it (schema v0010). A recorded start that cannot be read (text that is not
    /// UTF-8, in an entry written before schema v0012, without a checksum) is judged by the
    /// entries' times, as an entry written before v0010 is: taken for damage, it would make
    /// the launch count as a death.
    @Test(arguments: [("", true), (", at = at - 3600000", true), (", process_boot = CAST(x'ff' AS TEXT)", false)])
    func aLaunchOfAnotherProcessStillOnScreenIsNotADeath(_ change: String, sealed: Bool) throws {
        try withTemporaryStorePath { path in
            // The process taken for the other instance runs from before its launch began.
            try withRunningProcess { sleeper in
                try savingLaunch(path, "saved", then: [.willEnterForeground, .didBecomeActive])
                try tamper(with: path, "UPDATE journal SET checksum = NULL, \(try writer(sleeper))\(change)")
                // Its entries as that process wrote them, or as entries written before v0012.
                if sealed { try resealJournal(at: path) }
                #expect(try ArchiveStore(path: path).previousLaunch()?.processIsRunning == true)

                let store = try launch(path, [.willFinishLaunching], configuration: policy)
                let root = Probe("Root")
                #expect(try makeEngine(store).restore([root]).report.outcome == .restored)
                #expect(root.value == "saved")
                #expect(try store.journal().allSatisfy { if case .lifecycle = $0.kind { true } else { false } })
            }
        }
    }

    /// Two `ArchiveStore`s of one process that both record events (two parts of an app that
    /// each open the store, perhaps naming it differently): the second's launch does not take
    /// the first's, open and on screen, for a death.
    @Test(arguments: [false, true])
    func aLaunchRecordedByAnotherOpenStoreOfThisProcessIsNotADeath(otherSpelling: Bool) throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            let first = try launch(path, started, configuration: policy)
            let second = try launch(otherSpelling ? spelledAnotherWay(path) : path, [.willFinishLaunching], configuration: policy)
            #expect(try second.previousLaunch()?.ending == .inForeground)
            let root = Probe("Root")
            #expect(try makeEngine(second).restore([root]).report.outcome == .restored)
            #expect(root.value == "saved")
            #expect(try second.journal().allSatisfy { if case .lifecycle = $0.kind { true } else { false } })
            // The first goes on recording in its own launch.
            #expect(try first.record(.willResignActive).launch == first.launches().dropLast().last?.launch)
        }
    }

    /// Once the store that recorded a launch of this process is released, that launch has
    /// ended: where it left the app in the foreground, it died there.
    @Test func aLaunchWhoseStoreWasReleasedHasEnded() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            var first: ArchiveStore? = try launch(path, started, configuration: policy)
            #expect(try first?.launches().count == 2)
            first = nil
            let next = try launch(path, [.willFinishLaunching], configuration: policy)
            let reason = "the app died in the foreground (its last event was didBecomeActive)"
            #expect(try next.journal().last?.kind == .invalidated(.main, 1, reason: reason))
        }
    }

    /// Two stores of one process, on two threads, start launches at the same time and stay
    /// in the foreground until both have started: whichever starts second reads the other's
    /// launch, on screen, as the newest, and must not take it for a death.
    @Test func launchesStartedAtOnceInOneProcessAreNotDeaths() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            let failures = Failures()
            for _ in 0..<5 {
                let opened = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
                let onScreen = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
                let done = DispatchGroup()
                for side in 0..<2 {
                    done.enter()
                    Thread { [policy] in
                        defer { done.leave() }
                        do {
                            let store = try ArchiveStore(path: path, configuration: policy)
                            opened[side].signal()
                            opened[1 - side].wait()
                            for event in started { try store.record(event) }
                            onScreen[side].signal()
                            onScreen[1 - side].wait()
                            for event in [LifecycleEvent.willResignActive, .didEnterBackground] { try store.record(event) }
                        } catch {
                            failures.append("\(error)")
                            // The other side must not wait for this one forever.
                            opened[side].signal()
                            onScreen[side].signal()
                        }
                    }.start()
                }
                done.wait()
            }
            #expect(failures.all.isEmpty)
            let store = try ArchiveStore(path: path)
            #expect(try store.launches().count == 11)
            #expect(try store.journal().allSatisfy { if case .lifecycle = $0.kind { true } else { false } })
            #expect(try makeEngine(store).restore([Probe("Root")]).report.outcome == .restored)
        }
    }

    /// Damage that leaves the journal's ids and its `AUTOINCREMENT` counter at the lowest
    /// integers, from which SQLite numbers the next entry: pruning the entries before the new
    /// one's id overflowed, and a discard trapped.
    @Test func aJournalWhoseIdsAreTheLowestIntegersTakesADiscard() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            try tamper(
                with: path,
                """
                PRAGMA ignore_check_constraints = ON;
                UPDATE journal SET id = id - 9223372036854775800, launch = NULL, checksum = NULL;
                UPDATE sqlite_sequence SET seq = seq - 9223372036854775800 WHERE name = 'journal'
                """)
            let store = try ArchiveStore(path: path)
            let before = try store.journal()
            #expect(!before.isEmpty && before.allSatisfy { $0.sequence < -9_223_372_036_854_775_000 })
            _ = try store.discard(.main, reason: "the user quit")
            let after = try store.journal()
            #expect(after.dropLast() == before[...], "nothing pruned")
            #expect(after.last?.kind == .discarded(.main, reason: "the user quit"))
        }
    }

    /// Damage that leaves the journal's numbering at the highest integer (its newest id, or
    /// the `AUTOINCREMENT` counter SQLite numbers the next entry from, whatever its type):
    /// SQLite then numbers no entry, and every event recorded and every discard (the user's
    /// explicit quit) failed for good with "database or disk is full", while `check()` found
    /// nothing. `check()` names it; the next entry starts the journal afresh, and a launch
    /// of its own (the launch this store recorded has a number of the journal before).
    @Test(arguments: [
        "UPDATE sqlite_sequence SET seq = 9223372036854775807 WHERE name = 'journal'",
        "UPDATE sqlite_sequence SET seq = '9223372036854775807' WHERE name = 'journal'",
        "UPDATE journal SET id = 9223372036854775807 WHERE id = (SELECT max(id) FROM journal)",
    ])
    func aJournalWhoseNumberingRanOutStartsAfresh(_ damage: String) throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            let sink = LogSink()
            let store = try ArchiveStore(path: path, configuration: policy, logger: Logger(label: "test") { _ in sink })
            let counter = try store.record(.willFinishLaunching).sequence
            try tamper(with: path, "PRAGMA ignore_check_constraints = ON; \(damage)")
            // An entry given another id no longer has its launch's number, which it started:
            // its checksum (schema v0012) says so; its number is past the journal's counter.
            let renumbered = damage.hasPrefix("UPDATE journal")
            #expect(
                try store.check().map(\.description) == [
                    "the lifecycle journal: its numbering has reached the highest integer (the next entry written starts it afresh)"
                ]
                    + (renumbered
                        ? [
                            "journal entry 9223372036854775807: The store's history is damaged: a journal entry does not match its checksum.",
                            "the lifecycle journal: The store's history is damaged: journal entry 9223372036854775807 is past the "
                                + "journal's counter (\(counter)): damage changed its number, or the counter.",
                        ] : []))
            let restart = "The lifecycle journal's numbering had reached the highest integer (damage): its entries are deleted and it starts afresh"
            #expect(!sink.messages.contains(restart))
            let root = Probe("Root")
            #expect(try makeEngine(store).restore([root]).report.outcome == .restored)
            #expect(root.value == "saved")
            let first = try store.record(.didFinishLaunching)
            #expect(first.sequence == 1 && first.launch == 1)
            #expect(sink.messages.filter { $0 == restart }.count == 1, "\(sink.messages)")
            _ = try store.discard(.main, reason: "the user quit")
            #expect(try store.journal().map(\.sequence) == [1, 2])
            #expect(try store.journal().map(\.launch) == [1, 1])
            #expect(try store.check() == [])
        }
    }

    /// A launch number that damage made NULL, text or a real is damage to the history, named,
    /// as any other unreadable entry is: the launches are read launch by launch, by number, and
    /// such an entry must not drop out of them unseen (`launch = ?` finds no NULL).
    /// `previousLaunch()` reads the newest two launches (1 and 6 here): a NULL number sorts
    /// below them; text, which sorts above every number, and 2.5 are no launch's, and are
    /// left out (each launch under `discardAfterForegroundDeath` took text for the previous
    /// launch, and invalidated what the launch before had saved).
    @Test(arguments: ["NULL", "'x'", "2.5"])
    func aLaunchNumberOfAnotherTypeIsDamageToTheHistory(_ number: String) throws {
        try withTemporaryStorePath { path in
            _ = try launch(path, backgrounded)
            _ = try launch(path, backgrounded)
            try tamperBypassingStrict(
                with: path, table: "journal", "PRAGMA ignore_check_constraints = ON; UPDATE journal SET launch = \(number) WHERE id = 2")
            let store = try ArchiveStore(path: path)
            let error = #expect(throws: ArchiveStoreError.self) { try store.launches() }
            guard case .damagedHistory? = error else {
                Issue.record("\(String(describing: error))")
                return
            }
            #expect(try store.previousLaunch()?.launch == 6)
        }
    }

    /// A damaged record of the previous launch must not stop the launches after it (each
    /// judged it again, threw, and recorded nothing): under this policy it counts as a death
    /// in the foreground, since it may have been one, and the launch goes on.
    @Test func aDamagedRecordOfThePreviousLaunchCountsAsADeathInTheForeground() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            try tamper(
                with: path,
                """
                PRAGMA ignore_check_constraints = ON;
                UPDATE journal SET event = 'bogus' WHERE id = (SELECT max(id) FROM journal WHERE app_state IS NOT NULL)
                """)
            let store = try launch(path, [.willFinishLaunching], configuration: policy)
            let root = Probe("Root")
            let reason = "the journal's record of the previous launch is damaged, so it may have died in the foreground"
            #expect(try makeEngine(store).restore([root]).report.outcome == .refused(reason: "generation 1 was invalidated: \(reason)"))
            #expect(root.decodeCount == 0)
            // This launch goes on: what it saves in the background, the next one restores.
            try makeEngine(store).preserve([Probe("Root", value: "fresh")])
            try store.record(.didEnterBackground)
            let next = try launch(path, [.willFinishLaunching], configuration: policy)
            let fresh = Probe("Root")
            #expect(try makeEngine(next).restore([fresh]).report.outcome == .restored)
            #expect(fresh.value == "fresh")
        }
    }

    /// The next launch under the policy takes the previous launch, whose record is damaged,
    /// for one that may have died on screen: it invalidates generation 1 before decoding it.
    private func expectTheNextLaunchTakesADamagedRecordForADeath(
        _ path: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let store = try launch(path, [.willFinishLaunching], configuration: policy)
        let root = Probe("Root")
        let reason = "the journal's record of the previous launch is damaged, so it may have died in the foreground"
        #expect(
            try makeEngine(store).restore([root]).report.outcome == .refused(reason: "generation 1 was invalidated: \(reason)"),
            sourceLocation: sourceLocation)
        #expect(root.decodeCount == 0, sourceLocation: sourceLocation)
    }

    /// The previous launch and its last entry are found through the journal's index of
    /// launches (`journal_by_launch`). An index that damage made lose its last entries (its
    /// page counting fewer cells: found flipping bits in that page of a store) hid the
    /// launch's return to the foreground, and the launch that died on screen read as one
    /// that ended in the background: the state it died with was restored. Lost whole, it
    /// hid the launch (no previous launch). The newest lifecycle entry, read from the table
    /// itself, must be the previous launch's last: otherwise the record is damaged.
    @Test(arguments: [2, Int.max])
    func aDeathInTheForegroundThatTheLaunchIndexLostIsADamagedRecord(lostEntries: Int) throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved", then: [.willEnterForeground, .didBecomeActive])
            // One index entry for each journal entry.
            let entries = try ArchiveStore(path: path, mode: .readOnly).journal().count
            for _ in 0..<min(lostEntries, entries) { try dropLastEntry(ofIndex: "journal_by_launch", at: path) }
            let damage = ArchiveStoreError.damagedHistory(
                "the journal's index of launches does not find its newest lifecycle entry")
            #expect(throws: damage) { try ArchiveStore(path: path, mode: .readOnly).previousLaunch() }
            #expect(throws: damage) { try ArchiveStore(path: path, mode: .readOnly).launches() }
            try expectTheNextLaunchTakesADamagedRecordForADeath(path)
        }
    }

    /// An entry of the journal's index of launches whose launch number damage changed in place
    /// (the launch that died on screen's last entry filed under the first launch, out of the
    /// index's order; found by the `journal-damage` torture scenario): the index then named
    /// the first launch as the newest, and its end, in the background, was taken for the
    /// previous launch's. The newest lifecycle entry's own launch cannot be newer than the
    /// newest launch the index names.
    @Test func aLaunchTheIndexMisfiledUnderAnOlderOneIsADamagedRecord() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            _ = try launch(path, started, configuration: policy)
            let entries = try ArchiveStore(path: path, mode: .readOnly).journal()
            let last = try #require(entries.last)
            let died = try #require(last.launch)
            try #require(died < 128 && last.sequence < 128)
            // The index's record: its header (3 bytes: its length, two one-byte integers), then
            // the launch number and the entry's id.
            try changeEntry(
                ofIndex: "journal_by_launch", from: [3, 1, 1, UInt8(died), UInt8(last.sequence)],
                to: [3, 1, 1, 1, UInt8(last.sequence)], at: path)
            try expectTheNextLaunchTakesADamagedRecordForADeath(path)
        }
    }

    /// The newest lifecycle entry whose launch number damage made no launch's (text here) is
    /// no launch's last entry, and the launch it ended read as ending before it: one that came
    /// back to the foreground and died there read as one that ended in the background, and
    /// the state it died with was restored. That launch's end is not known: damage.
    @Test func aNewestLifecycleEntryOfNoLaunchIsADamagedRecord() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved", then: [.willEnterForeground])
            try tamperBypassingStrict(
                with: path, table: "journal",
                """
                PRAGMA ignore_check_constraints = ON;
                UPDATE journal SET launch = 'x' WHERE id = (SELECT max(id) FROM journal WHERE app_state IS NOT NULL)
                """)
            #expect(throws: ArchiveStoreError.damagedHistory("the journal's newest lifecycle entry names no launch")) {
                try ArchiveStore(path: path, mode: .readOnly).previousLaunch()
            }
            try expectTheNextLaunchTakesADamagedRecordForADeath(path)
        }
    }

    /// A launch that died on screen, whose last entry damage turned into a move to the
    /// background: every value readable and allowed, so that only the entry's checksum
    /// (schema v0012) tells. Read as it is, the launch ended in the background, and the state
    /// it died with was restored; it is a damaged record now, which may hide a death in the
    /// foreground. The same for a change to its process.
    @Test(arguments: [
        "event = 'didEnterBackground', app_state = 'background'", "process_id = process_id + 1", "at = at - 1",
    ])
    func aRecordOfThePreviousLaunchChangedByDamageIsDamaged(_ change: String) throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved", then: [.willEnterForeground, .didBecomeActive])
            try tamper(with: path, "UPDATE journal SET \(change) WHERE id = (SELECT max(id) FROM journal)")
            let damage = ArchiveStoreError.damagedHistory("a journal entry does not match its checksum")
            #expect(throws: damage) { try ArchiveStore(path: path).previousLaunch() }
            try expectTheNextLaunchTakesADamagedRecordForADeath(path)
        }
    }

    /// A store event's entry whose columns damage shifted (a byte of its record's header
    /// flipped: "mainthe user quit th", "e app explicitly…") still reads as text of its
    /// columns' types: its checksum tells, and only that entry is damaged. Entries written
    /// before schema v0012, without a checksum, are read as they are.
    @Test func aStoreEventChangedByDamageIsDamagedAndAnEntryWithoutAChecksumIsRead() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.record(.willFinishLaunching)
            try makeEngine(store).preserve([Probe("Root", value: "saved")])
            _ = try store.discard(.main, reason: "the user quit the app explicitly")
            let discard = try #require(try store.journal().last)
            #expect(discard.kind == .discarded(.main, reason: "the user quit the app explicitly"))
            try store.record(.willTerminate)
            let shifted = "archive = 'mainthe user quit th', detail = 'e app explicitly'"
            try tamper(with: path, "UPDATE journal SET \(shifted) WHERE id = \(discard.sequence)")
            let damage = ArchiveStoreError.damagedHistory("a journal entry does not match its checksum")
            #expect(throws: damage) { try store.journal() }
            #expect(try store.journal(limit: 1).map(\.kind) == [.lifecycle(.willTerminate, .terminated)])
            #expect(
                try store.check().map(\.description)
                    == ["journal entry \(discard.sequence): The store's history is damaged: a journal entry does not match its checksum."])
            // Written before v0012: no checksum, read as it is.
            try tamper(with: path, "UPDATE journal SET checksum = NULL WHERE id = \(discard.sequence)")
            #expect(try store.journal().map(\.kind).contains(.discarded(try ArchiveName("mainthe user quit th"), reason: "e app explicitly")))
            #expect(try store.check().isEmpty)
        }
    }

    /// A launch's start is when its first entry still in the journal was written. It was the
    /// earliest time of any of its entries, read without their checksums: one flipped bit in
    /// a later entry's time (found by flipping bits in the journal's page of a store) moved
    /// the previous launch's start a second back, which `restorectl info` showed, exit 0 (and
    /// which judges whether a launch recorded before schema version 10 still runs). The start
    /// is now the first entry's, whose checksum is verified.
    @Test func aLaunchStartsWhenItsFirstEntryWasWrittenAsItsChecksumSays() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            for event in [LifecycleEvent.willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willResignActive] {
                try store.record(event)
            }
            let entries = try store.journal()
            let started = try #require(entries.first?.date)
            #expect(try ArchiveStore(path: path, mode: .readOnly).previousLaunch()?.startedAt == started)
            // A later entry's time damaged an hour back: the start is the first entry's still.
            try tamper(with: path, "UPDATE journal SET at = at - 3600000 WHERE id = \(entries[2].sequence)")
            let damaged = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try damaged.previousLaunch()?.startedAt == started)
            // The first entry's own time damaged: the launch cannot be read, as when its last is.
            try tamper(with: path, "UPDATE journal SET at = at - 3600000 WHERE id = \(entries[0].sequence)")
            #expect(throws: ArchiveStoreError.damagedHistory("a journal entry does not match its checksum")) {
                try ArchiveStore(path: path, mode: .readOnly).previousLaunch()
            }
        }
    }

    /// A journal entry whose number damage changed (a flipped bit in its row's key: entry 2
    /// read as a second entry 4, with entry 2's event) read back as another entry: its
    /// checksum does not cover its number. Read in the table's order, it is out of order:
    /// damage, and the entries after it are read.
    @Test func aJournalEntryWhoseNumberDamageChangedIsDamage() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            for event in [LifecycleEvent.willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willResignActive] {
                try store.record(event)
            }
            #expect(try store.journal().map(\.sequence) == [1, 2, 3, 4])
            try changeKey(ofRow: 2, inTable: "journal", to: 4, at: path)
            let damaged = try ArchiveStore(path: path, mode: .readOnly)
            #expect(
                throws: ArchiveStoreError.damagedHistory(
                    "journal entry 4 is out of order, before entry 3: damage changed an entry's number")
            ) { try damaged.journal() }
            #expect(try damaged.journal(limit: 2).map(\.sequence) == [3, 4])
            // `check()` names it in the same words (beside SQLite's "Rowid 3 out of order").
            let outOfOrder = "the lifecycle journal: The store's history is damaged: journal entry 4 is out of order, "
                + "before entry 3: damage changed an entry's number."
            #expect(try damaged.check().map(\.description).contains(outOfOrder))
        }
    }

    /// The newest entry's number changed upwards by damage stays in order: it read back as
    /// an entry the journal never numbered (found by the `journal-damage` torture scenario:
    /// entry 8 read as entry 9). The journal's counter (`AUTOINCREMENT`) has the newest
    /// number it gave.
    @Test func aNewestJournalEntryPastTheCounterIsDamage() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            for event in [LifecycleEvent.willFinishLaunching, .didFinishLaunching, .didBecomeActive] {
                try store.record(event)
            }
            try changeKey(ofRow: 3, inTable: "journal", to: 5, at: path)
            let damaged = try ArchiveStore(path: path, mode: .readOnly)
            let past = "journal entry 5 is past the journal's counter (3): damage changed its number, or the counter"
            #expect(throws: ArchiveStoreError.damagedHistory(past)) { try damaged.journal() }
            #expect(throws: ArchiveStoreError.damagedHistory(past)) { try damaged.journal(limit: 1) }
            #expect(
                try damaged.check().map(\.description)
                    .contains("the lifecycle journal: The store's history is damaged: \(past)."))
        }
    }

    /// Damage to the launch number of an older entry: text, a real or an integer past the
    /// entry's own id (which no launch has, a launch being numbered by its first entry's id)
    /// sorted above every launch, and was taken for the previous launch at every launch after
    /// it: each invalidated what the launch before had saved, until the journal's pruning
    /// deleted the entry 256 entries later (found by the `damage` torture scenario, "locked").
    /// Such a number is not a launch's: the previous launch is the newest of the others.
    @Test(arguments: ["'x'", "x'01'", "1e300", "id + 1", "9223372036854775807"])
    func aLaunchNumberDamageMadeLargerIsNotThePreviousLaunch(damaged: String) throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            try tamperBypassingStrict(
                with: path, table: "journal",
                """
                PRAGMA ignore_check_constraints = ON;
                UPDATE journal SET launch = \(damaged) WHERE id = (SELECT min(id) FROM journal)
                """)
            try launchesEachRestoringTheSaveBefore(path)
        }
    }

    /// The journal rebuilt by another program without its key (`CREATE TABLE … AS SELECT`):
    /// the `id` column of the rows written since is NULL, and launches are numbered by the
    /// row's `rowid`. A check of launch numbers against `id` left out every launch, and each
    /// launch took the journal for damaged and invalidated what the launch before had saved
    /// (found by the `schema-tampering` torture scenario, "rebuilt-bare").
    @Test func aJournalRebuiltWithoutItsKeyStillNamesThePreviousLaunch() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            try tamper(
                with: path,
                "CREATE TABLE tampered AS SELECT * FROM journal; DROP TABLE journal; ALTER TABLE tampered RENAME TO journal")
            let store = try launchesEachRestoringTheSaveBefore(path)
            #expect(try store.previousLaunch()?.ending == .inBackground)
        }
    }

    /// Three launches under this policy: the first two each restore, save and go to the
    /// background, and the third restores the second's save. Returns the third's store.
    @discardableResult
    private func launchesEachRestoringTheSaveBefore(_ path: String) throws -> ArchiveStore {
        for value in ["first", "second"] {
            let store = try launch(path, [.willFinishLaunching], configuration: policy)
            let root = Probe("Root")
            #expect(try makeEngine(store).restore([root]).report.outcome == .restored, "\(value)")
            try makeEngine(store).preserve([Probe("Root", value: value)])
            try store.record(.didEnterBackground)
        }
        let store = try launch(path, [.willFinishLaunching], configuration: policy)
        let last = Probe("Root")
        #expect(try makeEngine(store).restore([last]).report.outcome == .restored)
        #expect(last.value == "second")
        return store
    }

    @Test(arguments: [CrashPolicy.discard, .fallBackToKnownGood, .retry(attempts: 2)])
    func otherPoliciesRestoreAfterADeathInTheForeground(other: CrashPolicy) throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved", then: [.willEnterForeground, .didBecomeActive])
            let configuration = ArchiveStore.Configuration(crashPolicy: other)
            let store = try launch(path, [.willFinishLaunching], configuration: configuration)
            #expect(try store.previousLaunch()?.ending == .inForeground)
            let root = Probe("Root")
            #expect(try makeEngine(store).restore([root]).report.outcome == .restored)
            #expect(root.value == "saved")
        }
    }

    /// R9's order is will-finish-launching, restoration, did-finish-launching: the app records
    /// the first and the last, and a restoration belongs to the launch the first started. An
    /// app that restores without having recorded it gets a launch started by the restoration.
    @Test func R9_aRestorationStartsTheLaunchWhenTheAppDidNot() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved", then: [.willEnterForeground])
            // The app restores without recording willFinishLaunching first.
            let store = try ArchiveStore(path: path, configuration: policy)
            #expect(try makeEngine(store).restore([Probe("Root")]).report.outcome != .restored)
            let launches = try store.launches()
            #expect(launches.count == 2)
            #expect(launches.last?.lastEvent == .willFinishLaunching)
        }
    }

    /// An app that restores before it records `willFinishLaunching` (R9's order reversed)
    /// records it in the launch the restoration started. Taken for a new launch, it judged
    /// that one, its own, as dead on screen, and invalidated every scene just restored.
    @Test func R9_willFinishLaunchingAfterARestorationContinuesTheLaunchItStarted() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            let store = try ArchiveStore(path: path, configuration: policy)
            #expect(try makeEngine(store).restore([Probe("Root")]).report.outcome == .restored)
            try store.record(.willFinishLaunching)
            try store.record(.didFinishLaunching)
            #expect(try store.journal().allSatisfy { if case .lifecycle = $0.kind { true } else { false } })
            #expect(try store.launches().count == 2)
            // A willFinishLaunching after one the app recorded starts a new launch, as before.
            try store.record(.willFinishLaunching)
            #expect(try store.launches().count == 3)
        }
    }

    /// Two threads restore two scenes through one store before the app recorded an event:
    /// each restoration starts the launch unless one is under way, and one started by the
    /// other thread in between is this launch. Judged as the previous launch instead, it had
    /// died in the foreground (its own), and every scene was invalidated.
    @Test func restorationsOnTwoThreadsStartOneLaunch() throws {
        try withTemporaryStorePath { path in
            let scenes = [try ArchiveName("left"), try ArchiveName("right")]
            do {
                let store = try launch(path, started, configuration: policy)
                for scene in scenes { try makeEngine(store).preserve([Probe("Root", value: "saved")], in: scene) }
                try store.record(.willTerminate)
            }
            let failures = Failures()
            for _ in 0..<10 {
                let store = try ArchiveStore(path: path, configuration: policy)
                let ready = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
                let done = DispatchGroup()
                for side in 0..<2 {
                    done.enter()
                    Thread {
                        defer { done.leave() }
                        ready[side].signal()
                        ready[1 - side].wait()
                        do {
                            let root = Probe("Root")
                            let outcome = try makeEngine(store).restore([root], from: scenes[side]).report.outcome
                            if outcome != .restored || root.value != "saved" {
                                failures.append("'\(scenes[side])': \(outcome), \(root.value)")
                            }
                        } catch {
                            failures.append("'\(scenes[side])': \(error)")
                        }
                    }.start()
                }
                done.wait()
                try store.record(.willTerminate)
            }
            #expect(failures.all.isEmpty)
            let store = try ArchiveStore(path: path)
            #expect(try store.launches().count == 11)
            #expect(try store.journal().allSatisfy { if case .lifecycle = $0.kind { true } else { false } })
        }
    }

    /// Merged by date, a restore report comes after its launch's journal entries of the same
    /// millisecond or earlier: its date is to the millisecond, as the journal's are. Its exact
    /// start could fall before the `willFinishLaunching` the journal had rounded up, and the
    /// report then read as the previous launch's.
    @Test func aRestoreReportIsDatedToTheMillisecondAsTheJournalIs() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "saved")
            for _ in 0..<20 {
                let store = try launch(path, [.willFinishLaunching])
                let report = try makeEngine(store).restore([Probe("Root")]).report
                let milliseconds = report.date.timeIntervalSince1970 * 1000
                #expect(milliseconds == milliseconds.rounded(), "\(report.date.timeIntervalSince1970)")
                #expect(try store.restoreReports().first?.date == report.date)
                let started = try #require(try store.journal(limit: 1).first)
                #expect(started.kind == .lifecycle(.willFinishLaunching, .inactive))
                #expect(started.date <= report.date)
            }
        }
    }

    @Test func aRestorationThatDiedIsInvalidatedOnce() throws {
        try withTemporaryStorePath { path in
            try savingLaunch(path, "crashes the app")
            // The launch records willFinishLaunching, commits the marker, and dies.
            let dying = try launch(path, [.willFinishLaunching], configuration: policy)
            #expect(try !makeEngine(dying).restore([SlowScreen("Root")]).isComplete)
            try markRestorationDead(at: path)

            let next = try launch(path, [.willFinishLaunching], configuration: policy)
            guard case .refused = try makeEngine(next).restore([Probe("Root")]).report.outcome else {
                Issue.record("a generation whose restoration died must not be restored")
                return
            }
            #expect(try !next.hasCrashMarker())
            #expect(try next.journal().filter { if case .invalidated = $0.kind { true } else { false } }.count == 1)
        }
    }
}

@Suite("Scenes: one archive per scene (R14), all discarded on an explicit quit (R13)")
struct SceneArchiveTests {
    let left = try! ArchiveName("scene-left")
    let right = try! ArchiveName("scene-right")

    private func saveBoth(_ store: ArchiveStore) throws {
        let engine = try makeEngine(store)
        try engine.preserve([Probe("Root", value: "left")], in: left)
        try engine.preserve([Probe("Root", value: "right")], in: right)
    }

    @Test func aCrashRestoringOneSceneInvalidatesOnlyThatScene() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try saveBoth(store)
            #expect(try !makeEngine(store).restore([SlowScreen("Root")], from: left).isComplete)
            try markRestorationDead(at: path, of: left)

            let next = try makeEngine(try ArchiveStore(path: path))
            guard case .refused = try next.restore([Probe("Root")], from: left).report.outcome else {
                Issue.record("the scene whose restoration died must not be restored")
                return
            }
            let other = Probe("Root")
            #expect(try next.restore([other], from: right).report.outcome == .restored)
            #expect(other.value == "right")
        }
    }

    /// Two scenes whose names are one string in two Unicode forms ("Café" composed and
    /// decomposed, as a document's title typed and read from a file system may be) are two
    /// archives in the store, which finds an archive by its name's bytes. They were one to
    /// the engine, whose changes for one scene were then computed against the other scene's
    /// nodes and written on top of the first's: a node unchanged from the other scene kept
    /// the first scene's stale state.
    @Test func scenesNamedInTwoUnicodeFormsAreTwoScenesEverywhere() throws {
        let composed = try ArchiveName("Caf\u{E9}")
        let decomposed = try ArchiveName("Cafe\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            func scene(_ root: String, _ child: String) -> [any Restorable] {
                [Probe("Root", value: root, [Probe("Child", value: child), Probe("Other", value: "o")])]
            }
            try engine.preserve(scene("A", "x"), in: composed)
            try engine.preserve(scene("B", "y"), in: decomposed)
            // Scene A's child now holds what scene B's holds.
            try engine.preserve(scene("A", "y"), in: composed)
            for (archive, expected) in [(composed, ["A", "y", "o"]), (decomposed, ["B", "y", "o"])] {
                let nodes = try #require(try store.snapshot(of: archive)).nodes
                #expect(try nodes.map { try StateDecoder(blob: $0.state).decode(String.self, forKey: "value") } == expected)
            }
            #expect(Set(try store.archives().map(\.name)) == [composed, decomposed])
        }
    }

    @Test func closingOneSceneForGoodKeepsTheOther() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try saveBoth(store)
            try store.discard(right, reason: "its window was closed")
            #expect(try store.header(of: right) == nil)
            let kept = Probe("Root")
            #expect(try makeEngine(store).restore([kept], from: left).report.outcome == .restored)
            #expect(kept.value == "left")
            #expect(try store.journal().last?.kind == .discarded(right, reason: "its window was closed"))
        }
    }

    @Test func anExplicitQuitDiscardsEveryScene() throws {
        try withTemporaryStorePath { path in
            let store = try launch(path, started)
            try saveBoth(store)
            try makeEngine(store).preserve([Probe("Root", value: "main")])
            let discarded = try store.discardAll(reason: "the user quit the app")
            #expect(Set(discarded.keys) == [left, right, .main])
            #expect(discarded.values.allSatisfy { $0.nodesDeleted == 1 && $0.writeAheadLogTruncated })
            for archive in [left, right, ArchiveName.main] {
                #expect(try store.header(of: archive) == nil)
                #expect(try makeEngine(store).restore([Probe("Root")], from: archive).report.outcome == .nothingToRestore)
            }
            let thisLaunch = try store.launches().last?.launch
            let discards = try store.journal().compactMap { entry -> ArchiveName? in
                guard case .discarded(let archive, "the user quit the app") = entry.kind else { return nil }
                #expect(entry.launch == thisLaunch)
                return archive
            }
            #expect(Set(discards) == [left, right, .main])
            // Nothing left to discard: a second quit discards nothing.
            #expect(try store.discardAll(reason: "again").isEmpty)
        }
    }

    @Test func aReadOnlyStoreDiscardsNothing() throws {
        try withTemporaryStorePath { path in
            try saveBoth(try ArchiveStore(path: path))
            let before = fileBytes(path)
            let inspector = try ArchiveStore(path: path, mode: .readOnly)
            #expect(throws: ArchiveStoreError.readOnly) { () throws -> Void in _ = try inspector.discardAll(reason: "quit") }
            #expect(try inspector.header(of: left) != nil && inspector.header(of: right) != nil)
            #expect(fileBytes(path) == before)
        }
    }

    @Test func aDeathInTheForegroundInvalidatesEverySceneUnderThatPolicy() throws {
        try withTemporaryStorePath { path in
            let policy = ArchiveStore.Configuration(crashPolicy: .discardAfterForegroundDeath)
            try saveBoth(try launch(path, started, configuration: policy))
            let next = try launch(path, [.willFinishLaunching], configuration: policy)
            let invalidated = try next.journal().compactMap { entry -> ArchiveName? in
                guard case .invalidated(let archive, 1, _) = entry.kind else { return nil }
                return archive
            }
            #expect(Set(invalidated) == [left, right])
            // A scene saved later in this launch is not touched by that judgement.
            try makeEngine(next).preserve([Probe("Root", value: "new")], in: left)
            let restored = Probe("Root")
            #expect(try makeEngine(next).restore([restored], from: left).report.outcome == .restored)
            #expect(restored.value == "new")
        }
    }

    /// One scene's damaged archive row does not stop the others' invalidation (it threw, and
    /// the launch recorded nothing): that scene is not restored anyway, and its next full save
    /// replaces it.
    @Test func aDamagedSceneDoesNotStopTheOthersInvalidation() throws {
        try withTemporaryStorePath { path in
            let policy = ArchiveStore.Configuration(crashPolicy: .discardAfterForegroundDeath)
            try saveBoth(try launch(path, started, configuration: policy))
            try tamper(with: path, "UPDATE archive SET created_at = created_at + 1 WHERE name = '\(left)'")
            let next = try launch(path, [.willFinishLaunching], configuration: policy)
            let invalidated = try next.journal().compactMap { entry -> ArchiveName? in
                guard case .invalidated(let archive, 1, _) = entry.kind else { return nil }
                return archive
            }
            #expect(invalidated == [right])
            guard case .failed = try makeEngine(next).restore([Probe("Root")], from: left).report.outcome else {
                Issue.record("the damaged scene must not be restored")
                return
            }
        }
    }
}

/// What threads of a test report, read once they are done.
private final class Failures: Sendable {
    private let items = Mutex<[String]>([])

    func append(_ failure: String) { items.withLock { $0.append(failure) } }
    var all: [String] { items.withLock { $0 } }
}
