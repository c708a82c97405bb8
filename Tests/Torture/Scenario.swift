import Foundation

/// One scenario's tally: how many trials ran and how many failed, with the first failures'
/// reasons kept for the report.
final class Scenario {
    let name: String
    private(set) var trials = 0
    private(set) var failures = 0
    private var reasons: [String] = []
    /// What the scenario did besides its trials (a part it skipped, a figure it measured).
    private var remarks: [String] = []

    init(_ name: String) { self.name = name }

    /// Runs one trial. The trial fails when `body` records a problem or throws.
    func trial(_ label: @autoclosure () -> String, _ body: (inout Trial) throws -> Void) {
        trials += 1
        var trial = Trial()
        do {
            try body(&trial)
        } catch {
            trial.problems.append("unexpected error: \(error)")
        }
        guard !trial.problems.isEmpty else { return }
        failures += 1
        if reasons.count < 8 {
            let reason = "\(label()): \(trial.problems.joined(separator: "; "))"
            reasons.append(reason.count > 600 ? reason.prefix(600) + "…" : reason)
        }
    }

    func remark(_ text: String) { remarks.append(text) }

    /// `NAME: N trials, F failures` on standard output; the reasons and remarks, indented, on
    /// standard error.
    func report() {
        print("\(name): \(trials) trials, \(failures) failures")
        fflush(nil)
        for line in remarks { printToStandardError("  \(name): \(line)") }
        for line in reasons { printToStandardError("  \(name) FAILED \(line)") }
    }
}

/// What one trial found wrong.
struct Trial {
    var problems: [String] = []

    /// Records `problem` unless `condition` holds.
    mutating func expect(_ condition: Bool, _ problem: @autoclosure () -> String) {
        if !condition { problems.append(problem()) }
    }

    mutating func fail(_ problem: String) { problems.append(problem) }
}

func printToStandardError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// How many trials each scenario runs.
enum Scale: String {
    case quick, standard, full

    /// `quick`, `standard` (the default) and `full` trial counts.
    func trials(quick: Int, full: Int) -> Int {
        switch self {
        case .quick: quick
        case .standard: (quick + full) / 2
        case .full: full
        }
    }
}

extension Dictionary where Key: Comparable {
    /// A scenario's tally as one line: its entries sorted by key, each written by `entry`
    /// (given the key and the count), joined by commas.
    func listed(_ entry: (Key, Value) -> String) -> String {
        sorted { $0.key < $1.key }.map { entry($0.key, $0.value) }.joined(separator: ", ")
    }
}
