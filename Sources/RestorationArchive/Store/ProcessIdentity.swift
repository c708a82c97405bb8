#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A process's start as the system counts it: the boot it ran in and the clock tick of that
/// boot it started at. No step of the wall clock changes it, and no two processes of one boot
/// with the same id share it: a crash marker or a journal entry records its writer's, and a
/// process with the writer's id is the writer when its start is the one recorded.
struct ProcessStart: Hashable, Sendable {
    /// The system's boot id (Linux: `/proc/sys/kernel/random/boot_id`).
    var boot: String
    /// When the process started, in clock ticks since that boot (`/proc/PID/stat`'s
    /// starttime).
    var ticks: Int64

    /// The start of a row's writer: `nil` when the row has none (written before schema
    /// v0010, or where the system told neither).
    init?(boot: String?, ticks: Int64?) {
        guard let boot, let ticks else { return nil }
        self.boot = boot
        self.ticks = ticks
    }

    /// The start of a row's writer in its columns `first` (the boot) and `first + 1` (the
    /// ticks); `nil` when they hold none, or cannot be read: the start only sharpens the
    /// test by the row's time, to which damage there falls back (as for a row written before
    /// v0010) rather than making the whole row unreadable.
    init?(_ statement: Statement, columns first: Int32) {
        self.init(boot: try? statement.optionalString(first), ticks: try? statement.optionalInt64(first + 1))
    }

    /// This process's; `nil` where the system does not tell (no `/proc`, another system).
    static var current: ProcessStart? { current(as: getpid()) }

    /// The start of this process, whose id is `pid`: read once, and again when the id
    /// changed (in a child forked without `exec`, which would otherwise record its parent's
    /// start with its own id, and be taken for dead while it runs).
    static func current(as pid: pid_t) -> ProcessStart? {
        currentByID.withLock { known in
            if let known, known.pid == pid { return known.start }
            let start = ProcessIdentity.start(of: pid)
            known = (pid, start)
            return start
        }
    }

    private static let currentByID = Locked<(pid: pid_t, start: ProcessStart?)?>(nil)
}

/// Whether a process id recorded at some moment still names the process that recorded it.
///
/// The system gives an id again once its process exits. A crash marker or a launch in the
/// journal left by a process that died may so name another process, started later, that runs
/// for hours: taken for the restoring process, it would keep every launch from restoring (and
/// from applying the crash policy) for as long as it runs. The process with the id is the one
/// that recorded it when it started at the ``ProcessStart`` recorded; for a row without one,
/// when it started no later than the row's moment on the wall clock.
enum ProcessIdentity {
    /// Allowance for the wall clock being stepped between the moment and now, for rows
    /// without a ``ProcessStart``.
    static let clockAllowance: Int64 = 2_000

    /// Whether a process with `processID` runs and is the one that recorded a row at `moment`
    /// (milliseconds since 1970, as ``Clock`` has them) with `start`, its writer's start.
    ///
    /// With `start`, where the system tells the process's start and its boot: whether they
    /// are the ones recorded. Otherwise whether it started no later than `moment`, give or
    /// take ``clockAllowance`` (a clock stepped by more misleads this test); where the system
    /// does not tell when a process started, whether one with that id runs. A process that
    /// died but that its parent has not reaped yet (a zombie) keeps its id and answers to it,
    /// but runs nothing: where the system tells (Linux), it does not run. One whose main
    /// thread alone exited (`dispatchMain()` does so) runs.
    static func isRunning(_ processID: Int64, recordedAt moment: Int64, start: ProcessStart?) -> Bool {
        guard let pid = pid_t(exactly: processID), pid > 0 else { return false }
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let status = status(of: pid) else { return true }
        if status.hasDied { return false }
        if let start, let ticks = status.startTicks, let boot = bootID {
            return start.boot == boot && start.ticks == ticks
        }
        guard let started = status.startMilliseconds else { return true }
        let (latest, overflow) = moment.addingReportingOverflow(clockAllowance)
        return overflow || started <= latest
    }

    /// The start of the process `pid`; `nil` when it cannot be told (no such process, no
    /// `/proc`, another system).
    static func start(of pid: pid_t) -> ProcessStart? {
        ProcessStart(boot: bootID, ticks: status(of: pid)?.startTicks)
    }

    /// When the process `pid` started, in milliseconds since 1970, to the kernel's clock tick
    /// (10 ms); `nil` when it cannot be told (no such process, no `/proc`, another system).
    static func startMilliseconds(of pid: pid_t) -> Int64? {
        status(of: pid)?.startMilliseconds
    }

    /// What the system tells of a process: whether it died (a zombie its parent has not
    /// reaped, or one being reaped), and when it started.
    private struct Status {
        var hasDied: Bool
        /// When it started, in clock ticks since boot.
        var startTicks: Int64?

        /// When it started, in milliseconds since 1970 by the wall clock as it is now.
        var startMilliseconds: Int64? {
            #if os(Linux)
            startTicks.flatMap(ProcessIdentity.milliseconds(afterBoot:))
            #else
            nil
            #endif
        }
    }

    /// The system's boot id, read once: it changes only with the boot.
    private static let bootID: String? = {
        #if os(Linux)
        // 36 characters and a newline.
        guard let bytes = readSmallFile("/proc/sys/kernel/random/boot_id") else { return nil }
        let id = bytes.prefix { $0 > UInt8(ascii: " ") }
        return id.isEmpty ? nil : String(decoding: id, as: UTF8.self)
        #else
        return nil
        #endif
    }()

    /// `nil` when the system tells nothing (no such process, no `/proc`, another system).
    private static func status(of pid: pid_t) -> Status? {
        #if os(Linux)
        // /proc/PID/stat is "PID (NAME) STATE …"; NAME may hold spaces and parentheses, so the
        // fields are counted from the last ')'. The 22nd, starttime, is in clock ticks since
        // boot, suspended time included: CLOCK_BOOTTIME's count.
        guard let stat = readSmallFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: UInt8(ascii: ")")) else {
            return nil
        }
        let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3, the state: Z a zombie, X (x before Linux 3.13) dead. The
        // state is its main thread's: a process whose main thread called `pthread_exit` (as
        // `dispatch_main` does) shows Z while its other threads run. Field 20 counts the
        // threads, the exited main one included: 1 when the whole process died.
        guard let state = fields.first?.first else { return nil }
        let threads = fields.count > 17 ? decimal(fields[17]) : nil
        let hasDied =
            [UInt8(ascii: "Z"), UInt8(ascii: "X"), UInt8(ascii: "x")].contains(state) && threads.map { $0 <= 1 } == true
        // fields[0] is field 3 (the state): starttime, field 22, is fields[19].
        return Status(hasDied: hasDied, startTicks: fields.count > 19 ? decimal(fields[19]) : nil)
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// A moment `ticks` clock ticks after boot, in milliseconds since 1970 by the wall clock
    /// as it is now.
    private static func milliseconds(afterBoot ticks: Int64) -> Int64? {
        let ticksPerSecond = Int64(sysconf(Int32(_SC_CLK_TCK)))
        guard ticksPerSecond > 0 else { return nil }
        var realtime = timespec()
        var boottime = timespec()
        guard clock_gettime(CLOCK_REALTIME, &realtime) == 0, clock_gettime(CLOCK_BOOTTIME, &boottime) == 0 else {
            return nil
        }
        let bootedAt = milliseconds(realtime) - milliseconds(boottime)
        let (afterBoot, overflow) = ticks.multipliedReportingOverflow(by: 1_000)
        guard !overflow else { return nil }
        return bootedAt + afterBoot / ticksPerSecond
    }

    private static func milliseconds(_ time: timespec) -> Int64 {
        Int64(time.tv_sec) * 1_000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// A non-negative decimal number of at most 18 digits.
    private static func decimal(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard (1...18).contains(digits.count) else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        return value
    }

    /// The first 4 KiB of a file (a /proc/PID/stat line is far shorter); `nil` when it cannot
    /// be read.
    private static func readSmallFile(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4_096)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + count, buffer.count - count)
            }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { return nil }
            if got == 0 { break }
            count += got
        }
        return Array(bytes[..<count])
    }
    #endif
}
