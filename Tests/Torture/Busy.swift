import CSQLite
import Foundation
import RestorationArchive
import TestSupport

/// 4. Another process holds the write lock longer, then shorter, than the busy timeout: the
/// save fails with a typed busy error within the timeout plus 20%, or succeeds once the lock
/// is released; reads are never blocked; nothing hangs.
enum Busy {
    static let timeout = Duration.milliseconds(400)
    static let timeoutSeconds = 0.4

    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("busy")
        var longest = 0.0
        try withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            try ArchiveStore(path: path).save(try Content.tree(count: 30, using: &random), header: Content.header)
            for index in 0..<scale.trials(quick: 12, full: 60) {
                let longer = index % 2 == 0
                let hold = longer ? Double.random(in: 2...4, using: &random) : Double.random(in: 0.1...0.6, using: &random)
                scenario.trial("trial \(index), lock held \(Int(hold * timeoutSeconds * 1000)) ms") { trial in
                    let waited = try contend(path: path, holdSeconds: hold * timeoutSeconds, trial: &trial, random: &random)
                    if longer { longest = max(longest, waited) }
                }
            }
        }
        scenario.remark(
            String(format: "busy timeout %.0f ms; the longest wait before the busy error was %.0f ms", timeoutSeconds * 1000, longest * 1000))
        return scenario
    }

    /// Returns how long the save waited.
    private static func contend(path: String, holdSeconds: Double, trial: inout Trial, random: inout SeededGenerator)
        throws -> Double
    {
        let store = try ArchiveStore(path: path, configuration: .init(busyTimeout: timeout))
        let before = try store.snapshot()
        let holder = try Child(Child.torture, ["child", "hold-lock", path, String(holdSeconds)])
        defer { holder.wait(timeout: 10) }
        guard holder.nextLine() == "locked" else {
            trial.fail("the other process did not take the lock: \(holder.lines)")
            return 0
        }
        // Readers are not blocked by a writer.
        let reading = Date()
        trial.expect(try store.snapshot() == before, "a read while locked differs")
        trial.expect(Date().timeIntervalSince(reading) < timeoutSeconds / 2, "a read waited for the writer")

        let tree = try Content.tree(count: 30, using: &random)
        let started = Date()
        var refusal: ArchiveStoreError?
        do {
            try store.save(tree, header: Content.header)
        } catch {
            refusal = error
        }
        let waited = Date().timeIntervalSince(started)
        let milliseconds = String(format: "%.0f ms", waited * 1000)
        if let refusal {
            guard case .database(let error) = refusal, error.resultCode == .busy else {
                trial.fail("\(refusal), not busy")
                return waited
            }
            trial.expect(holdSeconds > timeoutSeconds, "busy although the lock was released within the timeout")
            trial.expect(waited <= timeoutSeconds * 1.2, "busy only after \(milliseconds)")
            trial.expect(waited >= timeoutSeconds * 0.9, "busy after \(milliseconds), before the timeout")
            trial.expect(try store.snapshot() == before, "the refused save changed the archive")
        } else {
            trial.expect(holdSeconds < timeoutSeconds, "a save succeeded while the lock was held past the timeout")
            trial.expect(waited < timeoutSeconds * 1.2, "the save waited \(milliseconds)")
            trial.expect(try store.snapshot().map { Content.digest($0.nodes) } == Content.digest(tree), "the save differs")
        }
        return waited
    }

    /// The child: takes the write lock, says so, holds it for `seconds`, then commits.
    static func holdLock(_ arguments: [String]) throws {
        guard arguments.count == 2, let seconds = Double(arguments[1]) else { throw ChildError.usage }
        var database: OpaquePointer?
        guard sqlite3_open_v2(arguments[0], &database, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
            sqlite3_exec(database, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK
        else { throw ChildError.usage }
        announce("locked")
        usleep(UInt32(seconds * 1_000_000))
        sqlite3_exec(database, "COMMIT", nil, nil, nil)
        sqlite3_close(database)
        announce("released")
    }
}
