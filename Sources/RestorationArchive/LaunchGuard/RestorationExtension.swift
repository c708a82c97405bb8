import Logging
import Synchronization

/// Asynchronous work that restoration waits for (R10): made by
/// ``RestorationContext/extendRestoration()``, completed with ``complete()``.
///
/// Safe to complete from any thread or task. Keep it until the work ends, and complete it
/// then: one released without being completed leaves its restoration in progress for the
/// rest of the process (an error is logged), and a launch after the process ends takes it
/// for a restoration that died (R11).
public final class RestorationExtension: Sendable {
    private let progress: RestorationProgress
    /// The object that extended restoration: what the log names.
    private let path: RestorationPath
    private let completed = Atomic<Bool>(false)
    /// Made once its restoration had completed: it holds nothing back, and completing or
    /// releasing it changes nothing.
    private let late: Bool

    init(progress: RestorationProgress, path: RestorationPath, late: Bool) {
        self.progress = progress
        self.path = path
        self.late = late
    }

    /// Released without being completed: a programming error, which nothing can mend now (its
    /// restoration never completes). Said in the log, naming the object, since all the app
    /// sees otherwise is a restoration that never ends and its state invalidated at a later
    /// launch. Its work is gone with it, though: saves from now on are not taken for state
    /// whose restoration is still running.
    deinit {
        guard !late, !completed.load(ordering: .acquiring) else { return }
        progress.logger?.error(
            "The restoration extension of '\(path)' was released without being completed: restoring archive '\(progress.archive)' generation \(progress.generation) can never complete")
        if let token = progress.token { progress.store.restorationAbandoned(progress.archive, token: token) }
    }

    /// Completes this extension. When it is the last one and every node has been decoded,
    /// restoration is complete: the crash marker is removed and the report kept.
    ///
    /// - Returns: `false`, changing nothing, when this extension was completed already: a
    ///   programming error, which is logged, never a crash.
    @discardableResult
    public func complete() -> Bool {
        guard completed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else {
            progress.logger?.error(
                "The restoration extension of '\(path)' in archive '\(progress.archive)' was completed twice")
            return false
        }
        if !late { progress.completeOne() }
        return true
    }
}

/// One restoration in progress: its extensions, and what ends it.
final class RestorationProgress: Sendable {
    private struct State {
        var pending = 0
        var report: RestoreReport?
        var finished = false
    }

    let store: ArchiveStore
    let archive: ArchiveName
    let generation: Generation
    /// The restored generation's node digest: what tells it from another generation of its
    /// number (the store erased and saved again before the restoration completed).
    let nodeDigest: Int64
    /// What the store knows this restoration by; `nil` on a read-only store, which keeps no
    /// marker.
    let token: UInt64?
    let logger: Logger?
    private let state = Locked(State())

    init(
        store: ArchiveStore, archive: ArchiveName, generation: Generation, nodeDigest: Int64, token: UInt64?,
        logger: Logger?
    ) {
        self.store = store
        self.archive = archive
        self.generation = generation
        self.nodeDigest = nodeDigest
        self.token = token
        self.logger = logger
    }

    var isComplete: Bool { state.withLock { $0.finished } }

    /// An extension by the object at `path`. Once the restoration has completed (a context
    /// kept past its object's decoding), it holds nothing back: a programming error, logged.
    func extend(by path: RestorationPath) -> RestorationExtension {
        let late = state.withLock { state in
            if state.finished { return true }
            state.pending += 1
            return false
        }
        if late {
            logger?.error(
                "'\(path)' extended the restoration of archive '\(archive)' generation \(generation) after it had completed: the extension holds nothing back")
        }
        return RestorationExtension(progress: self, path: path, late: late)
    }

    func completeOne() {
        finish(state.withLock { state in
            state.pending -= 1
            return takeReportIfDone(&state)
        })
    }

    /// Every node is decoded and told that restoration finished.
    func walkEnded(with report: RestoreReport) {
        finish(state.withLock { state in
            state.report = report
            return takeReportIfDone(&state)
        })
    }

    private func takeReportIfDone(_ state: inout State) -> RestoreReport? {
        guard state.pending == 0, !state.finished, let report = state.report else { return nil }
        state.finished = true
        return report
    }

    private func finish(_ report: RestoreReport?) {
        guard let report, let token else { return }
        do {
            try store.finishRestoration(
                of: archive, generation: generation, nodeDigest: nodeDigest, token: token, report: report)
        } catch .reportNotRecorded(let reason) {
            // The end is recorded, without the report.
            logger?.error("The restore report of archive '\(archive)' was not recorded: \(reason)")
        } catch {
            // The marker stays, and the store keeps the end for the archive's next save or
            // restoration in this process to record; a launch after this process ends takes
            // it for a restoration that died.
            logger?.error(
                "The end of restoring archive '\(archive)' generation \(generation) was not recorded: \(error.description); the archive's next save or restoration in this process records it")
        }
    }
}
