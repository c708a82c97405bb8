import Foundation
import RestorationArchive
import TestSupport

/// 1d. SIGKILL at any moment of an app's life (R15): the journal tells the next launch how
/// the killed one ended, and ``CrashPolicy/discardAfterForegroundDeath`` invalidates the
/// newest generation exactly when it ended on screen.
///
/// A child process (`lifecycle-loop`) lives an app's life under that policy: it records
/// `willFinishLaunching`, `didFinishLaunching`, `didBecomeActive`, then goes to the background
/// and back at random (an interruption now and then: `willResignActive` then `didBecomeActive`),
/// saving a tree at each `didEnterBackground`, and now and then terminating normally
/// (`willTerminate`). It announces each event before recording it and acknowledges it, with
/// the journal entry's sequence and launch, once `record` returns; it spends 0–1 ms in each
/// state, so that kills land both inside a record's commit and between records. The parent
/// kills it at a random moment and reads the store as a tool does, recording nothing:
/// - `previousLaunch()` is the child's launch (or, when its first event never committed, the
///   one before), its last event the last one acknowledged or the one announced after it,
///   its ending that event's state, and its process not running;
/// - the journal holds exactly the acknowledged events of that launch, in order, with their
///   sequences (and the announced one last, when it committed);
/// - the child's `willFinishLaunching`, when it committed, judged the launch before it (the
///   previous trial's): the archive's newest generation then is invalidated, in that launch's
///   journal, when that launch ended in the foreground, and is left alone otherwise;
/// - no acknowledged save is lost, and `check()` finds nothing.
enum LifecycleKill {
    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("lifecycle-kill")
        var tally = Tally()
        let trials = scale.trials(quick: 200, full: 2_000)
        defer { scenario.remark(tally.description(trials: trials)) }
        try withTemporaryDirectory { directory in
            var before = Before()
            for index in 0..<trials {
                let path = "\(directory)/store-\(index / 50).sqlite"  // a new store every 50 trials
                if index % 50 == 0 { before = Before() }
                scenario.trial("trial \(index)") { trial in
                    try killOneLife(path: path, before: &before, tally: &tally, trial: &trial, random: &random)
                }
            }
        }
        return scenario
    }

    /// What the parent found after the previous trial: what the next child's
    /// `willFinishLaunching` judges, and what it may invalidate.
    struct Before {
        /// The newest launch in the journal, and how it ended.
        var launch: LaunchSummary?
        /// The archive's newest generation, and whether it was valid.
        var newest: Generation = 0
        var newestIsValid = false
        /// The newest generation a save acknowledged.
        var acknowledgedSave: Generation = 0
    }

    /// What the trials saw, to show where the kills landed.
    struct Tally {
        var endings: [String: Int] = [:]
        var killedInsideARecord = 0
        var announcedEventCommitted = 0
        var invalidations = 0
        var events = 0
        var terminated = 0

        func description(trials: Int) -> String {
            let ends = endings.listed { name, count in "\(name) \(count)" }
            return "\(trials) lives, \(events) events acknowledged; the killed launch ended: \(ends); "
                + "\(killedInsideARecord) kills between an event's announcement and its acknowledgement "
                + "(\(announcedEventCommitted) of those events committed); \(invalidations) generations invalidated "
                + "after a death in the foreground; \(terminated) children terminated normally"
        }
    }

    /// What a child announced.
    private struct Life {
        /// The events acknowledged, in order.
        var acknowledged: [(event: LifecycleEvent, sequence: Int64, launch: Int64)] = []
        /// The event announced and not acknowledged: it may have committed or not.
        var announced: LifecycleEvent?
        var acknowledgedSave: Generation = 0
        var terminated = false
    }

    private static func killOneLife(
        path: String, before: inout Before, tally: inout Tally, trial: inout Trial, random: inout SeededGenerator
    ) throws {
        let child = try Child(Child.torture, ["child", "lifecycle-loop", path, "\(random.next())"])
        // Most kills land in the app's life; one in ten while the child starts and opens the store.
        if Int.random(in: 0..<10, using: &random) > 0 {
            guard child.nextLine() == "ready" else {
                child.kill()
                child.wait()
                trial.fail("the child never got ready: \(child.lines)")
                return
            }
        }
        usleep(UInt32.random(in: 0...25_000, using: &random))
        child.kill()
        child.remainingLines()
        let ending = child.wait()
        let life = parse(child.lines, trial: &trial)
        if life.terminated {
            // Killed or not, between its announcement and its exit.
            tally.terminated += 1
            trial.expect(
                ending.signalled ? ending.status == SIGKILL : ending.status == 0,
                "the child ended badly after willTerminate (\(ending))")
        } else {
            trial.expect(ending.signalled && ending.status == SIGKILL, "the child ended by itself (status \(ending.status))")
        }
        tally.events += life.acknowledged.count
        if life.announced != nil { tally.killedInsideARecord += 1 }

        // The next look at the store, as a tool makes it: nothing recorded.
        let store = try ArchiveStore(path: path)
        let problems = try store.check()
        trial.expect(problems.isEmpty, "check: \(problems)")
        let previous = try store.previousLaunch()
        let childsLaunch = previous.flatMap { $0.processID == Int64(child.processIdentifier) ? $0 : nil }
        checkLaunch(previous, of: life, processID: child.processIdentifier, before: before, tally: &tally, trial: &trial)
        let journal = try store.journal()
        if let childsLaunch {
            checkJournal(journal, of: childsLaunch, life: life, trial: &trial)
            try checkJudgement(
                journal, launch: childsLaunch.launch, before: before, store: store, tally: &tally, trial: &trial)
        }
        let newest = try store.summary(of: .main)
        let acknowledged = max(before.acknowledgedSave, life.acknowledgedSave)
        trial.expect(
            (newest?.latestGeneration ?? 0) >= acknowledged,
            "acknowledged save \(acknowledged) lost; newest \(newest?.latestGeneration ?? 0)")
        let newestGeneration = newest?.latestGeneration ?? 0
        let newestState = try store.generations(of: .main).first { $0.generation == newestGeneration }?.state
        before = Before(
            launch: previous, newest: newestGeneration, newestIsValid: newestState == .valid,
            acknowledgedSave: newestGeneration)
        tally.endings[previous.map { "\($0.ending)" } ?? "none", default: 0] += 1
    }

    private static func parse(_ lines: [String], trial: inout Trial) -> Life {
        var life = Life()
        for line in lines {
            let words = line.split(separator: " ").map(String.init)
            let event = words.count >= 2 ? LifecycleEvent(rawValue: words[1]) : nil
            if line == "ready" || line == "save" {
            } else if line == "terminated" {
                life.terminated = true
            } else if words.count == 2, words[0] == "begin", let event {
                life.announced = event
            } else if words.count == 4, words[0] == "ack", let event, event == life.announced,
                let sequence = Int64(words[2]), let launch = Int64(words[3])
            {
                life.acknowledged.append((event, sequence, launch))
                life.announced = nil
            } else if words.count == 2, words[0] == "saved", let generation = Int64(words[1]) {
                life.acknowledgedSave = Generation(generation)
            } else {
                trial.fail("the child said: \(line)")
            }
        }
        return life
    }

    /// The ending a launch whose last event was `event` has.
    private static func ending(after event: LifecycleEvent) -> LaunchSummary.Ending {
        switch event.applicationState {
        case .terminated: .terminated
        case .background: .inBackground
        case .active, .inactive: .inForeground
        }
    }

    /// `previousLaunch()` is the child's launch, ending where its last committed event left
    /// it; or, when none of its events committed, the launch before it.
    private static func checkLaunch(
        _ previous: LaunchSummary?, of life: Life, processID: pid_t, before: Before, tally: inout Tally, trial: inout Trial
    ) {
        guard let previous else {
            trial.expect(
                life.acknowledged.isEmpty && before.launch == nil,
                "no previous launch, after \(life.acknowledged.count) events acknowledged")
            return
        }
        trial.expect(!previous.processIsRunning, "the killed launch's process counts as running")
        trial.expect(
            previous.ending == ending(after: previous.lastEvent),
            "the launch ended \(previous.ending) after \(previous.lastEvent)")
        let last = life.acknowledged.last
        if let last {
            trial.expect(previous.launch == last.launch, "previous launch \(previous.launch), the child's \(last.launch)")
        }
        let isChilds = last != nil || previous.launch != before.launch?.launch
        guard isChilds else {
            trial.expect(previous == before.launch, "the launch before the child's changed: \(previous)")
            return
        }
        trial.expect(
            previous.processID == Int64(processID), "the child's launch was run by process \(previous.processID)")
        if let announced = life.announced, previous.lastEvent == announced, last.map({ $0.event != announced }) ?? true {
            tally.announcedEventCommitted += 1
        } else if let last {
            trial.expect(
                previous.lastEvent == last.event,
                "the launch's last event is \(previous.lastEvent), the child's last acknowledged \(last.event)"
                    + (life.announced.map { " (then announced \($0))" } ?? ""))
        } else {
            trial.fail("a launch of the child that acknowledged nothing ends with \(previous.lastEvent)")
        }
    }

    /// The journal holds the child's acknowledged events, and no other lifecycle event of its
    /// launch but the announced one, last.
    private static func checkJournal(_ journal: [JournalEntry], of launch: LaunchSummary, life: Life, trial: inout Trial) {
        var recorded: [(event: LifecycleEvent, sequence: Int64)] = []
        for entry in journal where entry.launch == launch.launch {
            if case .lifecycle(let event, let state) = entry.kind {
                trial.expect(state == event.applicationState, "entry \(entry.sequence): \(event) with state \(state)")
                recorded.append((event, entry.sequence))
            }
        }
        var expected = life.acknowledged.map { (event: $0.event, sequence: $0.sequence) }
        if journal.count == ArchiveStore.retainedJournalEntries, let oldest = journal.first?.sequence,
            oldest > launch.launch
        {
            // The launch's first entries were deleted as newer ones came.
            expected = expected.filter { $0.sequence >= oldest }
        }
        if recorded.count == expected.count + 1, let announced = life.announced, recorded.last?.event == announced {
            expected.append(recorded[recorded.count - 1])
        }
        trial.expect(
            recorded.map(\.event) == expected.map(\.event) && recorded.map(\.sequence) == expected.map(\.sequence),
            "the launch's journal \(recorded.map { "\($0.event)@\($0.sequence)" }), acknowledged "
                + "\(life.acknowledged.map { "\($0.event)@\($0.sequence)" }), announced \(life.announced.map { "\($0)" } ?? "nothing")")
    }

    /// The child's `willFinishLaunching` judged the launch before it: it invalidated the
    /// newest generation, in the child's launch, exactly when that launch ended in the
    /// foreground and the generation was valid.
    private static func checkJudgement(
        _ journal: [JournalEntry], launch: Int64, before: Before, store: ArchiveStore, tally: inout Tally,
        trial: inout Trial
    ) throws {
        let invalidated = journal.compactMap { entry -> Generation? in
            guard entry.launch == launch, case .invalidated(let archive, let generation, _) = entry.kind,
                archive == .main
            else { return nil }
            return generation
        }
        let diedOnScreen = before.launch?.ending == .inForeground
        let expected = diedOnScreen && before.newestIsValid ? [before.newest] : []
        trial.expect(
            invalidated == expected,
            "the child's launch invalidated \(invalidated), after a launch that ended "
                + "\(before.launch.map { "\($0.ending)" } ?? "nowhere") with generation \(before.newest) "
                + (before.newestIsValid ? "valid" : "not valid"))
        tally.invalidations += invalidated.count
        guard before.newest > 0,
            let state = try store.generations(of: .main).first(where: { $0.generation == before.newest })?.state
        else { return }
        if expected.isEmpty {
            trial.expect(
                (state == .valid) == before.newestIsValid,
                "generation \(before.newest) was \(before.newestIsValid ? "valid" : "not valid"), is \(state)")
        } else if case .invalidated = state {
        } else {
            trial.fail("generation \(before.newest) is \(state), not invalidated")
        }
    }

    /// The child: an app living its life until it is killed.
    /// `lifecycle-loop PATH SEED`.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 2, let seed = UInt64(arguments[1]) else { throw ChildError.usage }
        var random = SeededGenerator(seed: seed)
        let store = try ArchiveStore(
            path: arguments[0], configuration: .init(crashPolicy: .discardAfterForegroundDeath))
        announce("ready")
        var event = LifecycleEvent.willFinishLaunching
        while true {
            announce("begin \(event.rawValue)")
            let entry = try store.record(event)
            announce("ack \(event.rawValue) \(entry.sequence) \(entry.launch ?? -1)")
            usleep(UInt32.random(in: 0...1_000, using: &random))
            switch event {
            case .willFinishLaunching: event = .didFinishLaunching
            case .didFinishLaunching, .willEnterForeground: event = .didBecomeActive
            case .didBecomeActive: event = .willResignActive
            case .willResignActive:
                // An interruption (a call, the notification centre) one time in three.
                event = Int.random(in: 0..<3, using: &random) == 0 ? .didBecomeActive : .didEnterBackground
            case .didEnterBackground:
                announce("save")
                let tree = try Content.tree(count: Int.random(in: 5...60, using: &random), using: &random)
                let saved = try store.save(tree, header: Content.header, in: .main)
                announce("saved \(saved.generation)")
                event = Int.random(in: 0..<12, using: &random) == 0 ? .willTerminate : .willEnterForeground
            case .willTerminate:
                announce("terminated")
                return
            }
        }
    }
}
