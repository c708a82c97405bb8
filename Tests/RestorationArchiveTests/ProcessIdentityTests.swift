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
            #expect(ProcessIdentity.isRunning(processID, recordedAt: after, start: nil))
            // A marker written a minute before this process started was written by another one.
            #expect(!ProcessIdentity.isRunning(processID, recordedAt: before - 60_000, start: nil))
            // Within the clock's allowance, it is given the benefit of the doubt.
            #expect(ProcessIdentity.isRunning(processID, recordedAt: before - 1_000, start: nil))
            #expect(ProcessIdentity.isRunning(processID, recordedAt: .max, start: nil))
        }
    }

    /// A row that records its writer's start names that process whatever the wall clock did
    /// since: stepped forward an hour (the row's moment then lies an hour before the process
    /// seems to have started, which the wall-clock test took for another process), or back
    /// (a later process with the id then seems to have started before the row's moment).
    @Test func aProcessIsTheOneThatRecordedItsStartWhateverTheClockDid() throws {
        try withRunningProcess { sleeper in
            let now = Clock.nowMilliseconds()
            let processID = Int64(sleeper.processIdentifier)
            let start = try #require(ProcessIdentity.start(of: sleeper.processIdentifier))
            // As the system tells, read here apart from the library.
            let stat = try String(contentsOfFile: "/proc/\(processID)/stat", encoding: .utf8)
            let fields = try #require(stat.split(separator: ")").last).split(separator: " ")
            let boot = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
            #expect(start == ProcessStart(boot: boot.trimmingCharacters(in: .newlines), ticks: Int64(fields[19])))
            #expect(ProcessStart.current == ProcessIdentity.start(of: getpid()))
            #expect(ProcessStart.current != start)

            #expect(ProcessIdentity.isRunning(processID, recordedAt: now - 3_600_000, start: start))
            #expect(ProcessIdentity.isRunning(processID, recordedAt: now, start: start))
            // Another process's start, recorded with this id, at a moment after this one started.
            var earlier = start
            earlier.ticks -= 1
            #expect(!ProcessIdentity.isRunning(processID, recordedAt: now + 3_600_000, start: earlier))
            var otherBoot = start
            otherBoot.boot = "00000000-0000-0000-0000-000000000000"
            #expect(!ProcessIdentity.isRunning(processID, recordedAt: now + 3_600_000, start: otherBoot))
            // Without a start (a row written before schema version 10): by the wall clock.
            #expect(!ProcessIdentity.isRunning(processID, recordedAt: now - 3_600_000, start: nil))
        }
    }

    /// This process's start is read once, and again when its id changed: a child forked
    /// without `exec` would otherwise record its parent's start with its own id, and be taken
    /// for dead while it runs. (A fork cannot be tried here: the test runner's threads leave
    /// a forked child only what is safe after `fork`; another process's id stands for it.)
    @Test func thisProcesssStartIsReadAgainWhenItsIDChanges() throws {
        let own = try #require(ProcessStart.current)
        #expect(own == ProcessIdentity.start(of: getpid()))
        try withRunningProcess { other in
            let start = try #require(ProcessIdentity.start(of: other.processIdentifier))
            #expect(start != own)
            #expect(ProcessStart.current(as: other.processIdentifier) == start)
            #expect(ProcessStart.current(as: getpid()) == own)
        }
    }

    /// A process that died and that its parent has not reaped yet (a zombie: the parent is
    /// busy, or, in a container, an init that never reaps) keeps its id, but runs nothing:
    /// taken for a restoration in progress, it would keep every launch from restoring until
    /// it is reaped.
    @Test func aDeadProcessNotYetReapedDoesNotRun() throws {
        var pid: pid_t = 0
        let arguments = ["/bin/sleep", "30"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        try #require(posix_spawn(&pid, "/bin/sleep", nil, nil, &argv, environ) == 0)
        defer { waitpid(pid, nil, 0) }
        let startedBefore = Clock.nowMilliseconds()
        let start = try #require(ProcessIdentity.start(of: pid))
        #expect(ProcessIdentity.isRunning(Int64(pid), recordedAt: startedBefore + 1_000, start: nil))
        #expect(ProcessIdentity.isRunning(Int64(pid), recordedAt: startedBefore + 1_000, start: start))
        kill(pid, SIGKILL)
        // Waits for its death and leaves it unreaped.
        var info = siginfo_t()
        try #require(waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == 0)
        #expect(kill(pid, 0) == 0, "a zombie still answers to its id")
        #expect(!ProcessIdentity.isRunning(Int64(pid), recordedAt: startedBefore + 1_000, start: nil))
        #expect(!ProcessIdentity.isRunning(Int64(pid), recordedAt: startedBefore + 1_000, start: start))
    }

    /// A process whose main thread exited while its other threads go on (what
    /// `dispatchMain()` does) shows the state of a zombie, and runs.
    @Test func aProcessWhoseMainThreadExitedRuns() throws {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            """
            import ctypes, sys, threading, time
            threading.Thread(target=time.sleep, args=(30,)).start()
            print('ready', flush=True)
            ctypes.CDLL(None).pthread_exit(None)
            """,
        ]
        let output = Pipe()
        process.standardOutput = output
        let recorded = Clock.nowMilliseconds() + 1_000
        try process.run()
        defer { stop(process) }
        try #require(String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"))
        // The main thread's exit shows in the state once the thread is gone.
        let stat = "/proc/\(process.processIdentifier)/stat"
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline,
            !((try? String(contentsOfFile: stat, encoding: .utf8))?.split(separator: ")").last?.hasPrefix(" Z") ?? false)
        {
            usleep(10_000)
        }
        try #require(try String(contentsOfFile: stat, encoding: .utf8).split(separator: ")").last?.hasPrefix(" Z") == true)
        #expect(ProcessIdentity.isRunning(Int64(process.processIdentifier), recordedAt: recorded, start: nil))
        let start = try #require(ProcessIdentity.start(of: process.processIdentifier))
        #expect(ProcessIdentity.isRunning(Int64(process.processIdentifier), recordedAt: recorded, start: start))
    }

    @Test func noProcessRunsForAnExitedOrImpossibleID() throws {
        let exited = Int64(try deadProcessID())
        for processID in [exited, 0, -1, Int64(Int32.max) + 1, .min] {
            let now = Clock.nowMilliseconds()
            #expect(!ProcessIdentity.isRunning(processID, recordedAt: now, start: nil), "\(processID)")
        }
        #expect(ProcessIdentity.startMilliseconds(of: getpid()).map { $0 <= Clock.nowMilliseconds() } == true)
    }
}
