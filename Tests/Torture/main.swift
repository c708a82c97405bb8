import Foundation
import TestSupport

// The torture suite: scenarios that do to the store what crashes, full disks, other processes,
// damaged files and hostile apps do, each reported as `NAME: N trials, F failures`.
//
//   torture [--quick | --full] [--seed N] [SCENARIO ...]
//
// Run it through `scripts/torture`, which also runs the codec fuzzer. The exit status is 1 when
// any trial failed. `torture child MODE ...` is the child process some scenarios start.

let usage = "usage: torture [--quick | --full] [--seed N] [SCENARIO ...]"

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "child" {
    do {
        try ChildMode.run(Array(arguments.dropFirst()))
        exit(0)
    } catch {
        announce("error: \(error)")
        exit(3)
    }
}

var scale = Scale.standard
var seed = UInt64.random(in: 1...UInt64.max)
var selected: [String] = []
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--quick": scale = .quick
    case "--full": scale = .full
    case "--seed":
        guard let value = arguments.first.flatMap(UInt64.init) else {
            printToStandardError(usage)
            exit(2)
        }
        seed = value
        arguments.removeFirst()
    case _ where argument.hasPrefix("-"):
        printToStandardError(usage)
        exit(2)
    default:
        guard Scenarios.all.contains(where: { $0.name == argument }) else {
            printToStandardError("torture: no scenario '\(argument)'; there are \(Scenarios.all.map(\.name).joined(separator: ", "))")
            exit(2)
        }
        selected.append(argument)
    }
}

printToStandardError("torture: \(scale) run, seed \(seed) (replay with --seed \(seed))")
var random = SeededGenerator(seed: seed)
var failed = false
for entry in Scenarios.all where selected.isEmpty || selected.contains(entry.name) {
    let started = Date()
    do {
        let scenario = try entry.run(scale, &random)
        scenario.report()
        printToStandardError(String(format: "  %@: %.1f s", entry.name, Date().timeIntervalSince(started)))
        failed = failed || scenario.failures > 0
    } catch {
        print("\(entry.name): could not run: \(error)")
        failed = true
    }
}
exit(failed ? 1 : 0)
