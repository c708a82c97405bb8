import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

/// A process id recorded by a process that exited may be given to another: the store tells the
/// two apart by when the process with that id started.
@Suite("Process identity")
struct ProcessIdentityTests {
    @Test func aProcessStartedAfterTheMomentIsNotTheOneThatRecordedIt() throws {
        let before = Clock.nowMilliseconds()
        try withRunningProcess { sleeper in
            let after = Clock.nowMilliseconds()
            let started = try #require(ProcessIdentity.startMilliseconds(of: sleeper.processIdentifier))
            // The start is read to the kernel's clock tick (10 ms), rounded down.
            #expect(started >= before - 20 && started <= after, "started \(started), spawned in \(before)...\(after)")
            let processID = Int64(sleeper.processIdentifier)
            #expect(ProcessIdentity.isRunning(processID, recordedAt: after))
            // A marker written a minute before this process started was written by another one.
            #expect(!ProcessIdentity.isRunning(processID, recordedAt: before - 60_000))
            // Within the clock's allowance, it is given the benefit of the doubt.
            #expect(ProcessIdentity.isRunning(processID, recordedAt: before - 1_000))
            #expect(ProcessIdentity.isRunning(processID, recordedAt: .max))
        }
    }

    @Test func noProcessRunsForAnExitedOrImpossibleID() throws {
        let exited = Int64(try deadProcessID())
        for processID in [exited, 0, -1, Int64(Int32.max) + 1, .min] {
            #expect(!ProcessIdentity.isRunning(processID, recordedAt: Clock.nowMilliseconds()), "\(processID)")
        }
        #expect(ProcessIdentity.startMilliseconds(of: getpid()).map { $0 <= Clock.nowMilliseconds() } == true)
    }
}
