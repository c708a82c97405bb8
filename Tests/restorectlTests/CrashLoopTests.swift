import Foundation
import RestorationArchive
import Testing
import TestSupport

/// R11 with real processes: `restorectl demo --step restore-crash` restores the example app
/// and is killed with SIGKILL at a random node; the launches after it must invalidate that
/// generation, never loop, and never discard a generation whose restoration completed.
@Suite("Crash loop with real processes")
struct CrashLoopTests {
    let restorectl = builtProduct("restorectl")

    private func step(_ name: String, _ path: String) throws -> ProcessOutcome {
        try runProcess(restorectl, ["demo", "--step", name, "--db", path])
    }

    @Test func R11_killedRestorationsAreInvalidatedAndNeverLoop() throws {
        try withTemporaryStorePath { path in
            var generation = 0
            for iteration in 1...50 {
                // A launch that saves a new generation (restoring the previous one if it can).
                let saved = try step("save", path)
                #expect(saved.status == 0, "\(saved.standardError)")
                generation += 1

                if iteration.isMultiple(of: 5) {
                    // Clean restorations in between are never discarded.
                    for _ in 0..<2 {
                        let clean = try step("restore", path)
                        #expect(clean.standardOutput.contains("restored 12 of 12 screens from generation \(generation)."))
                    }
                }

                let crash = try step("restore-crash", path)
                #expect(crash.wasSignalled && crash.status == SIGKILL, "iteration \(iteration): \(crash.standardError)")

                // The next launch invalidates that generation before decoding anything…
                let next = try step("restore", path)
                #expect(
                    next.standardOutput.contains("generation \(generation) was invalidated: the app died while restoring it"),
                    "iteration \(iteration): \(next.standardOutput)")
                // …and the launch after that does not loop: still nothing restored.
                let after = try step("restore", path)
                #expect(
                    after.standardOutput.contains(
                        "not restored, because generation \(generation) was invalidated: the app died while restoring it"),
                    "iteration \(iteration): \(after.standardOutput)")
            }
            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try !store.hasCrashMarker())
            #expect(try store.generations().allSatisfy { if case .invalidated = $0.state { true } else { false } })
        }
    }
}
