import Foundation
import RestorationArchive
import Testing
import TestSupport

/// R11 and R15 with real processes: `restorectl demo --step …` launches the example app
/// against a store, recording its lifecycle events, and some steps die by SIGKILL in the
/// background, in the foreground, during restoration, or while restoration is extended.
@Suite("Crash policies with real processes")
struct LifecycleProcessTests {
    let restorectl = builtProduct("restorectl")

    private func step(_ name: String, _ path: String, policy: String) throws -> ProcessOutcome {
        try runProcess(restorectl, ["demo", "--step", name, "--db", path, "--crash-policy", policy])
    }

    private func expectKilled(_ outcome: ProcessOutcome, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            outcome.wasSignalled && outcome.status == SIGKILL, "\(outcome.standardError)", sourceLocation: sourceLocation)
    }

    static let policies = ["discard", "fall-back", "retry:2", "foreground"]

    @Test(arguments: policies)
    func killedInTheBackgroundIsRestoredNormally(policy: String) throws {
        try withTemporaryStorePath { path in
            expectKilled(try step("background-kill", path, policy: policy))
            let next = try step("restore", path, policy: policy)
            #expect(next.status == 0, "\(next.standardError)")
            #expect(
                next.standardOutput.contains(
                    "Launch (the previous launch ended in the background): restored 12 of 12 screens from generation 1."),
                "\(next.standardOutput)")
        }
    }

    @Test(arguments: policies)
    func killedInTheForegroundCountsPerPolicy(policy: String) throws {
        try withTemporaryStorePath { path in
            #expect(try step("save", path, policy: policy).status == 0)
            expectKilled(try step("foreground-crash", path, policy: policy))
            let next = try step("restore", path, policy: policy)
            #expect(next.standardOutput.contains("the previous launch died in the foreground, after didBecomeActive"))
            if policy == "foreground" {
                let refusal =
                    "not restored, because generation 1 was invalidated: the app died in the foreground (its last event was didBecomeActive)"
                #expect(next.standardOutput.contains(refusal), "\(next.standardOutput)")
                // No loop: the launch after that has nothing new to judge and restores nothing.
                #expect(try step("restore", path, policy: policy).standardOutput.contains(refusal))
            } else {
                // The restoration itself completed: the crash came later, and these policies
                // only judge restorations.
                #expect(next.standardOutput.contains("restored 12 of 12 screens from generation 1."), "\(next.standardOutput)")
            }
        }
    }

    @Test(arguments: policies)
    func anExtensionNeverCompletedCountsAsACrash(policy: String) throws {
        try withTemporaryStorePath { path in
            #expect(try step("save", path, policy: policy).status == 0)
            let dying = try step("load-crash", path, policy: policy)
            expectKilled(dying)
            #expect(dying.standardOutput.contains("restored 12 of 12 screens"), "the nodes were all decoded")
            let next = try step("restore", path, policy: policy)
            switch policy {
            case "retry:2":
                // The first of two attempts died; the second one is allowed.
                #expect(next.standardOutput.contains("restored 12 of 12 screens from generation 1."), "\(next.standardOutput)")
            case "foreground":
                #expect(next.standardOutput.contains("generation 1 was invalidated: the app died in the foreground"))
            default:
                #expect(
                    next.standardOutput.contains("generation 1 was invalidated: the app died while restoring it"),
                    "\(next.standardOutput)")
            }
        }
    }

    /// A launch whose restoration is refused has no page loading when it is killed, and says
    /// so: it said a restored page was still loading.
    @Test func aKilledLaunchThatRestoredNothingSaysSo() throws {
        try withTemporaryStorePath { path in
            #expect(try step("save", path, policy: "discard").status == 0)
            expectKilled(try step("load-crash", path, policy: "discard"))
            let refused = try step("load-crash", path, policy: "discard")
            expectKilled(refused)
            #expect(refused.standardOutput.contains("not restored, because generation 1 was invalidated"), "\(refused.standardOutput)")
            #expect(refused.standardOutput.contains("nothing was restored, so no restoration was in progress"))
            #expect(!refused.standardOutput.contains("still loading"))
        }
    }

    @Test func retryAllowsItsAttemptsThenInvalidates() throws {
        try withTemporaryStorePath { path in
            #expect(try step("save", path, policy: "retry:2").status == 0)
            expectKilled(try step("restore-crash", path, policy: "retry:2"))
            expectKilled(try step("restore-crash", path, policy: "retry:2"))
            let next = try step("restore", path, policy: "retry:2")
            #expect(
                next.standardOutput.contains(
                    "generation 1 was invalidated: the app died during each of its last 2 restorations"),
                "\(next.standardOutput)")
        }
    }

    @Test func fallBackRestoresTheLastGenerationThatRestoredCleanly() throws {
        try withTemporaryStorePath { path in
            #expect(try step("save", path, policy: "fall-back").status == 0)  // generation 1
            #expect(try step("save", path, policy: "fall-back").status == 0)  // restores 1 cleanly, saves 2
            expectKilled(try step("restore-crash", path, policy: "fall-back"))
            let next = try step("restore", path, policy: "fall-back")
            #expect(next.standardOutput.contains("restored 12 of 12 screens from generation 1."), "\(next.standardOutput)")
            // Generation 2 stays invalidated: the launch after restores 1 again, never 2.
            let after = try step("restore", path, policy: "fall-back")
            #expect(after.standardOutput.contains("restored 12 of 12 screens from generation 1."))
        }
    }

    @Test func theJournalRecordsEveryLaunch() throws {
        try withTemporaryStorePath { path in
            expectKilled(try step("background-kill", path, policy: "discard"))
            expectKilled(try step("foreground-crash", path, policy: "discard"))
            #expect(try step("quit", path, policy: "discard").status == 0)
            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try store.launches().map(\.ending) == [.inBackground, .inForeground, .terminated])
            #expect(try store.journal().contains { $0.kind == .discarded(.main, reason: "the user quit the app explicitly") })
            #expect(try store.header() == nil)
        }
    }
}
