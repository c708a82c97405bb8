import Foundation
import RestorationArchive
import TestSupport

/// `threads` across processes, with kills: three child processes of two threads each use one
/// new store at once, as an app, its extension and a tool looking at the store do, making the
/// calls of `threads` at random; in every other trial, now and then one is killed with
/// SIGKILL, wherever it is (in a save, an erase, a discard's compaction, a restoration, a read,
/// an opening recovering the log of one killed before), and a new one takes its place. Each
/// child tells the parent the digest of each tree before it saves it, what it found wrong, and
/// each generation invalidated. In the trials without kills no generation may be: each
/// child's stores record that its app terminates before they are released, each restoration
/// completes, and a launch or a restoration of another process that still runs is not judged
/// dead (R11, R15).
enum Processes {
    /// How many children run at once, and how many threads each runs.
    static let children = 3
    static let threadsPerChild = 2

    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("processes")
        var calls: [String: Int] = [:]
        var kills = 0
        var invalidations = 0
        for index in 0..<scale.trials(quick: 6, full: 30) {
            let killing = index % 2 == 1
            let policy = Int.random(in: 0..<Threads.crashPolicies.count, using: &random)
            scenario.trial("trial \(index) (\(Threads.crashPolicies[policy])\(killing ? "" : ", no kills"))") { trial in
                try withTemporaryDirectory { directory in
                    try race(
                        path: directory + "/store.sqlite", policy: policy, seconds: 2, killing: killing, calls: &calls,
                        kills: &kills, invalidations: &invalidations, trial: &trial, random: &random)
                }
            }
        }
        scenario.remark(
            "\(kills) children killed, \(invalidations) generations invalidated after their deaths; calls: "
                + calls.listed { name, count in "\(name) \(count)" })
        return scenario
    }

    private static func race(
        path: String, policy: Int, seconds: Double, killing: Bool, calls: inout [String: Int], kills: inout Int,
        invalidations: inout Int, trial: inout Trial, random: inout SeededGenerator
    ) throws {
        let deadline = Date().addingTimeInterval(seconds)
        func start() throws -> Child {
            let left = max(deadline.timeIntervalSinceNow, 0)
            let seeds = (0..<threadsPerChild).map { _ in "\(random.next())" }
            return try Child(Child.torture, ["child", "race-loop", path, "\(policy)", "\(left)"] + seeds)
        }
        var running = try (0..<children).map { _ in try start() }
        var ended: [(child: Child, killed: Bool)] = []
        // Kills at random moments until shortly before the deadline, a new child each time.
        while true {
            let pause = Double.random(in: 0.05...0.5, using: &random)
            guard Date().addingTimeInterval(pause + 0.2) < deadline else { break }
            drain(running, for: pause)
            // A developer looking at the store with restorectl while the app runs.
            if Bool.random(using: &random) { try inspect(path, calls: &calls, trial: &trial, random: &random) }
            guard killing else { continue }
            let victim = Int.random(in: 0..<running.count, using: &random)
            running[victim].kill()
            ended.append((running[victim], true))
            kills += 1
            running[victim] = try start()
        }
        ended += running.map { ($0, false) }

        var saved: Set<UInt64> = []
        for (child, killed) in ended {
            child.remainingLines()
            let ending = child.wait(timeout: 60)
            if !killed {
                trial.expect(
                    !ending.signalled && ending.status == 0 && child.lines.last == "done",
                    "a child ended with status \(ending.status)\(ending.signalled ? " (signal)" : ""): \(child.lines.suffix(3))")
            }
            for line in child.lines {
                if let digest = line.removingPrefix("saving ").flatMap(UInt64.init) {
                    saved.insert(digest)
                } else if let problem = line.removingPrefix("problem ") {
                    trial.fail(problem)
                } else if let call = line.removingPrefix("called ") {
                    let parts = call.split(separator: " ", maxSplits: 1)
                    if parts.count == 2, let count = Int(parts[0]) { calls[String(parts[1]), default: 0] += count }
                } else if let warning = line.removingPrefix("invalidated ") {
                    invalidations += 1
                    trial.expect(killing, "a generation was invalidated with no child killed: \(warning)")
                } else if line.hasPrefix("error: ") {
                    trial.fail("a child stopped: \(line)")
                }
            }
        }
        // The next launch, once every child is gone.
        let problems = Threads.Guarded<[String]>([])
        let launch = try Threads.Race(
            path: path, crashPolicy: Threads.crashPolicies[policy], deadline: Date(), saving: { _ in },
            failing: { problem in problems.withLock { $0.append(problem) } }, counting: { _ in }, invalidating: { _ in })
        try launch.finalCheck(saved: saved, trial: &trial)
        for problem in problems.withLock({ $0 }) { trial.fail(problem) }
    }

    /// Runs one of `restorectl`'s inspecting commands on the store: it succeeds, says the
    /// archive is gone (discarded, erased), or asks to try again (the store changed under five
    /// reads in a row, or an archive found gone was saved again). `check` must find no problem.
    private static func inspect(
        _ path: String, calls: inout [String: Int], trial: inout Trial, random: inout SeededGenerator
    ) throws {
        let archive = Threads.archives.randomElement(using: &random) ?? "main"
        let commands = [
            ["check", path], ["info", path], ["events", path], ["markers", path],
            ["tree", path, "--archive", archive], ["report", path, "--archive", archive],
        ]
        let command = commands[Int.random(in: 0..<commands.count, using: &random)]
        let outcome = try runProcess(Child.restorectl, command)
        calls["restorectl \(command[0])", default: 0] += 1
        if outcome.status == 0 { return }
        let error = outcome.standardError
        // The store changed under five reads in a row, or an archive found gone was saved again.
        let busy = error.contains("try again")
        let gone = outcome.status == 1 && (error.contains("No archive named") || error.contains("was discarded"))
        trial.expect(
            !outcome.wasSignalled && (busy || gone),
            "restorectl \(command[0]) exited \(outcome.status): \(error.prefix(400))")
    }

    /// Reads what the children write for `seconds`, so that none waits on a full pipe.
    private static func drain(_ children: [Child], for seconds: Double) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            for child in children { _ = child.nextLine(timeout: 0.005) }
        }
    }

    /// `torture child race-loop PATH POLICY SECONDS SEED...`: the threads of `threads`, one per
    /// seed, on the store at PATH under crash policy POLICY (an index of
    /// ``Threads/crashPolicies``) for SECONDS; prints `saving DIGEST` before each save, `problem …`
    /// for what it found wrong and `invalidated …` for each generation invalidated (on one line
    /// each), `called COUNT NAME` for each kind of call once done, then `done`.
    static func child(_ arguments: [String]) throws {
        guard arguments.count >= 4, let policy = Int(arguments[1]), Threads.crashPolicies.indices.contains(policy),
            let seconds = Double(arguments[2])
        else { throw ChildError.usage }
        let seeds = try arguments.dropFirst(3).map { argument in
            guard let seed = UInt64(argument) else { throw ChildError.usage }
            return seed
        }
        let calls = Threads.Guarded<[String: Int]>([:])
        let race = try Threads.Race(
            path: arguments[0], crashPolicy: Threads.crashPolicies[policy], deadline: Date().addingTimeInterval(seconds),
            saving: { digest in announce("saving \(digest)") },
            failing: { problem in announce("problem " + problem.replacingOccurrences(of: "\n", with: " ")) },
            counting: { call in calls.withLock { $0[call, default: 0] += 1 } },
            invalidating: { warning in announce("invalidated " + warning.replacingOccurrences(of: "\n", with: " ")) })
        race.run(seeds: seeds)
        for (call, count) in calls.withLock({ $0 }) { announce("called \(count) \(call)") }
        announce("done")
    }
}

extension String {
    /// What follows `prefix`, when the string starts with it.
    fileprivate func removingPrefix(_ prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }
}
