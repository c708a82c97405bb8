#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a launch does with a generation whose restoration the app did not survive (R11).
///
/// A crash marker is committed before the first node of a generation is decoded and removed
/// once its restoration has completed, asynchronous extensions included. The next launch
/// that finds the marker applies the policy before anything is decoded. Under every policy a
/// generation that crashed is never restored again once its allowance is spent, and no
/// policy can loop: each attempt is counted in the store before it begins. A restoration on
/// a read-only store counts nothing and changes nothing: it restores what applying the policy
/// would leave (to a marker, and under ``discardAfterForegroundDeath`` to a previous launch
/// that died in the foreground), and leaves the marker and the verdict to the app's next
/// read-write launch.
public enum CrashPolicy: Hashable, Sendable {
    /// The generation is invalidated and nothing is restored: UIKit's rule. The default.
    case discard
    /// The generation is invalidated, and the newest earlier retained generation that once
    /// completed a restoration (a "known good" one) is restored instead, if there is one.
    /// Keep at least two generations (``ArchiveStore/Configuration/retainedGenerations``).
    case fallBackToKnownGood
    /// The generation may be attempted this many times in a row (at least 1); the launch
    /// after the last attempt's crash invalidates it, as browsers do with their sessions. A
    /// restoration that completes starts the count again.
    case retry(attempts: Int)
    /// As ``discard``, and besides: when the previous launch died in the foreground, the
    /// newest generation of every archive is invalidated, as iOS does with scenes' state
    /// after a crash. A launch killed in the background is restored as usual.
    ///
    /// It judges launches by the lifecycle journal: record the app's lifecycle events with
    /// ``ArchiveStore/record(_:)``. A launch starts when it records its first event; a
    /// restoration starts one (recording ``LifecycleEvent/willFinishLaunching``) if the app
    /// has not, so the judgement always comes before anything is decoded; the app's own
    /// `willFinishLaunching` recorded after it belongs to that launch. A previous launch
    /// whose record in the journal is damaged counts as a death in the foreground: it may
    /// have been one. A launch that still runs does not: one of another process that runs
    /// (another instance of the app, on screen), or one that another `ArchiveStore` of this
    /// process, still open, records events in. A launch of this process whose store was
    /// released has ended.
    case discardAfterForegroundDeath
}

/// A restoration that began and has not completed: in progress, or dead (R11).
public struct CrashMarker: Hashable, Sendable {
    /// The archive being restored.
    public var archive: ArchiveName
    /// The generation the crash policy applies to if the restoration died: the one being
    /// restored, or the newest one saved while its restoration was in progress, which holds
    /// the same state.
    public var generation: Generation
    /// When its restoration began.
    public var startedAt: Date
    /// The process restoring it.
    public var processID: Int64
    /// Whether the process that began it runs now. When it does not, that restoration died,
    /// and the next launch applies the crash policy to ``generation``. A process given the
    /// same id after that one exited is told apart by when it started, where the system tells
    /// (Linux): by the system's count since boot, which no change of the wall clock moves
    /// (for a marker written before schema version 10: it started after the restoration
    /// began).
    public var processIsRunning: Bool
    /// Whether the marker's values cannot be read: damage to the store (a value of another
    /// type, which SQLite's `STRICT` tables refuse to write, or, in a marker written since
    /// schema version 13, values that do not match its checksum). The next launch takes it
    /// for a restoration that died, of the archive's newest generation, which ``generation``
    /// then is; ``startedAt`` (1970) and ``processID`` (0) are not known, and
    /// ``processIsRunning`` is `false`. `ArchiveStore.check()` names it.
    public var isDamaged = false
}
