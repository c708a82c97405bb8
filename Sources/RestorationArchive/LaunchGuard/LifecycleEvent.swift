#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A moment in the app's life that the app records in the store's lifecycle journal (R15),
/// named after UIKit's application delegate calls.
///
/// Record each one as it happens with ``ArchiveStore/record(_:)``: the entry is committed at
/// once, so it survives the process being killed right after. The next launch reads how the
/// previous one ended (``ArchiveStore/previousLaunch()``).
public enum LifecycleEvent: String, Hashable, Sendable, CaseIterable, Codable {
    /// The process has started and is about to restore state. Starts a new launch in the
    /// journal; record it before restoring (R9: will-finish-launching → restoration →
    /// did-finish-launching).
    case willFinishLaunching
    /// Launching is done, restoration included.
    case didFinishLaunching
    /// The app is in the foreground and receives events.
    case didBecomeActive
    /// The app is about to stop receiving events (an interruption, or on its way to the
    /// background).
    case willResignActive
    /// The app is in the background: save its state now, since it may be killed at any
    /// moment without another call.
    case didEnterBackground
    /// The app is coming back to the foreground.
    case willEnterForeground
    /// The app is terminating normally.
    case willTerminate

    /// The app's state once this event has happened.
    public var applicationState: ApplicationState {
        switch self {
        case .willFinishLaunching, .didFinishLaunching, .willResignActive, .willEnterForeground: .inactive
        case .didBecomeActive: .active
        case .didEnterBackground: .background
        case .willTerminate: .terminated
        }
    }

    /// Whether the app is on its way out of the foreground, to the background where the system
    /// may kill it after its next save.
    var leavesTheForeground: Bool { self == .willResignActive || self == .didEnterBackground }
}

/// Where the app is in its life, as its last recorded ``LifecycleEvent`` left it.
public enum ApplicationState: String, Hashable, Sendable, Codable {
    /// In the foreground without receiving events: launching, interrupted, or on its way in
    /// or out.
    case inactive
    /// In the foreground, receiving events.
    case active
    /// In the background: the system may kill it at any moment, which is normal.
    case background
    /// Terminated normally.
    case terminated

    /// Whether the app is on screen, where an unexpected death is a crash.
    public var isForeground: Bool { self == .inactive || self == .active }
}

/// One entry of the lifecycle journal: an event the app recorded, or one of the store's own.
public struct JournalEntry: Hashable, Sendable {
    /// What an entry records.
    public enum Kind: Hashable, Sendable {
        /// A lifecycle event the app recorded, and the state it left the app in.
        case lifecycle(LifecycleEvent, ApplicationState)
        /// A crash policy invalidated a generation of an archive, for the reason given.
        case invalidated(ArchiveName, Generation, reason: String)
        /// An archive was discarded, for the reason given.
        case discarded(ArchiveName, reason: String)
    }

    /// The entry's position in the journal: later entries have greater numbers.
    public var sequence: Int64
    /// The launch the entry belongs to: the ``sequence`` of that launch's first entry; `nil`
    /// for a store event written by a process that recorded no lifecycle event (such as
    /// `restorectl discard`).
    public var launch: Int64?
    /// When it was written.
    public var date: Date
    /// The process that wrote it.
    public var processID: Int64
    /// What it records.
    public var kind: Kind
}

/// How a launch ended, as far as the journal tells.
public struct LaunchSummary: Hashable, Sendable {
    /// How a launch ended.
    public enum Ending: Hashable, Sendable {
        /// It recorded ``LifecycleEvent/willTerminate``: a normal termination.
        case terminated
        /// Its last event left it in the background, where the system kills apps as a matter
        /// of course: its state is meant to be restored.
        case inBackground
        /// Its last event left it in the foreground, and no later event came: it died on
        /// screen (a crash), unless it is the launch still running.
        case inForeground
    }

    /// The launch: the ``JournalEntry/sequence`` of its first entry.
    public var launch: Int64
    /// The process that ran it.
    public var processID: Int64
    /// When its first entry still in the journal was written.
    public var startedAt: Date
    /// Its last lifecycle event.
    public var lastEvent: LifecycleEvent
    /// When ``lastEvent`` was recorded.
    public var lastEventAt: Date
    /// How it ended.
    public var ending: Ending
    /// When its process started, as the system counts it, where the journal has it.
    var processStart: ProcessStart?

    /// Whether the process that ran it runs now: a launch that ends ``Ending/inForeground``
    /// and whose process runs is probably still running. A process given the same id after
    /// it exited is told apart by when it started, where the system tells (Linux): by the
    /// system's count since boot, which no change of the wall clock moves (for an entry
    /// written before schema version 10, against ``startedAt``).
    public var processIsRunning: Bool {
        ProcessIdentity.isRunning(processID, recordedAt: Clock.milliseconds(startedAt), start: processStart)
    }
}
