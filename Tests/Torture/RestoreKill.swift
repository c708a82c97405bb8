import Foundation
import RestorationArchive
import TestSupport

/// 2. SIGKILL during restore at a random node: the next launch applies the crash policy and
/// nothing loops.
///
/// Each trial plays the example app with `restorectl demo --step ...` in real processes: two
/// launches that save (the second restores the first's generation cleanly, so a known-good
/// generation exists), then launches whose restoration is killed at a random node, until one
/// survives. A policy allows a bounded number of such deaths: `discard` and `foreground` one,
/// `retry:2` two, `fall-back` two (the newest generation, then the known-good one).
enum RestoreKill {
    static let policies: [(name: String, allowedDeaths: Int)] = [
        ("discard", 1), ("foreground", 1), ("retry:2", 2), ("fall-back", 2),
    ]

    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("restore-kill")
        var deaths = 0
        for index in 0..<scale.trials(quick: 52, full: 500) {
            let policy = policies[index % policies.count]
            scenario.trial("trial \(index), policy \(policy.name)") { trial in
                try withTemporaryDirectory { directory in
                    deaths += try killRestorations(
                        path: directory + "/store.sqlite", policy: policy.name, allowedDeaths: policy.allowedDeaths,
                        trial: &trial)
                }
            }
        }
        scenario.remark("\(deaths) restorations killed by SIGKILL")
        return scenario
    }

    /// Returns how many launches died restoring.
    private static func killRestorations(path: String, policy: String, allowedDeaths: Int, trial: inout Trial) throws
        -> Int
    {
        for _ in 0..<2 {
            let saved = try demo("save", path: path, policy: policy)
            guard saved.status == 0, !saved.signalled else {
                trial.fail("a saving launch failed: \(saved.lines)")
                return 0
            }
        }
        var deaths = 0
        var crashed: Set<Generation> = []
        var survived = false
        for _ in 0...(allowedDeaths + 1) {
            let launch = try demo("restore-crash", path: path, policy: policy)
            // "Launch: restoring generation G; the app will be killed at node K of N."
            if let line = launch.lines.first(where: { $0.hasPrefix("Launch: restoring generation ") }),
                let number = line.dropFirst("Launch: restoring generation ".count).split(separator: ";").first
                    .flatMap({ Int64($0) })
            {
                crashed.insert(Generation(number))
            }
            if launch.signalled && launch.status == SIGKILL {
                deaths += 1
                continue
            }
            trial.expect(!launch.timedOut, "a launch hung")
            survived = true
            break
        }
        trial.expect(survived, "\(deaths) launches in a row died restoring: the crash policy loops")
        // Every restoration reaches its random node, so each policy spends its whole allowance.
        trial.expect(deaths == allowedDeaths, "\(deaths) launches died restoring; the policy allows \(allowedDeaths)")

        let store = try ArchiveStore(path: path)
        for summary in try store.generations() where crashed.contains(summary.generation) {
            if case .valid = summary.state {
                trial.fail("generation \(summary.generation) crashed and is still valid")
            }
        }
        let problems = try store.check()
        trial.expect(problems.isEmpty, "check: \(problems)")
        // A normal launch after all this works.
        let next = try demo("restore", path: path, policy: policy)
        trial.expect(next.status == 0 && !next.signalled, "the launch after the crashes failed: \(next.lines)")
        return deaths
    }

    private static func demo(_ step: String, path: String, policy: String) throws
        -> (lines: [String], signalled: Bool, status: Int32, timedOut: Bool)
    {
        try Child.run(Child.restorectl, ["demo", "--step", step, "--db", path, "--crash-policy", policy], timeout: 30)
    }
}
