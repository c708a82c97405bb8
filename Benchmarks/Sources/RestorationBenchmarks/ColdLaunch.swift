import Foundation
import RestorationArchive

/// A launch as an app has it: the first thing its process does with the store. `launch`
/// times launches repeated in one process, where every launch after the first finds SQLite
/// initialised, the Swift runtime's metadata made and the code in the caches; an app opens
/// its store once per process. `scripts/cold-launch` runs each launch below in a process of
/// its own, with the store's file in the system's cache (an earlier process saved it), and
/// times it the way `measure` does: from opening the store to the last node restored.
enum ColdLaunch {
    static let app = AppIdentity(version: "11.0", build: "1024")

    static func path(_ implementation: String, n: Int, in directory: String) -> String {
        "\(directory)/cold-\(implementation)-\(n).sqlite"
    }

    /// Saves ours' and the floor's stores of each size into `directory`, for the launches.
    static func setUp(sizes: [Int], directory: String) throws {
        for n in sizes {
            let paths = try samplePaths(n)
            let states = (0..<n).map(ScreenState.sample)
            let engine = try benchEngine(store: try ArchiveStore(path: path("ours", n: n, in: directory)), app: app)
            try engine.preserve(BenchScreen.tree(paths: paths, states: states))
            FloorStore(path: path("floor", n: n, in: directory)).saveAll(
                zip(paths, states).map { path, state in
                    FloorStore.Row(
                        path: path.description, parent: path.parent?.description, className: "Screen",
                        state: state.encodeFloor())
                })
        }
    }

    /// One launch of `implementation` (`ours` or `floor`) on its store of `n` nodes in
    /// `directory`: its time in nanoseconds. The store is closed after the timer stops, as in
    /// `measure`.
    static func launch(_ implementation: String, n: Int, directory: String) throws -> UInt64 {
        let start = now()
        let store: AnyObject
        switch implementation {
        case "ours":
            let opened = try ArchiveStore(path: path("ours", n: n, in: directory))
            let result = try benchEngine(store: opened, app: app).restore([])
            precondition(result.isComplete && result.report.restoredCount == n)
            store = opened
        case "floor":
            let opened = FloorStore(path: path("floor", n: n, in: directory))
            precondition(opened.launch().count == n)
            store = opened
        default:
            preconditionFailure("a cold launch is ours or the floor's, not \(implementation)")
        }
        let elapsed = now() - start
        withExtendedLifetime(store) {}
        return elapsed
    }

    /// One launch as ``launch(_:n:directory:)``, of an app that was killed in the background
    /// and is killed in turn: timed the same way, then one node is saved (the app going to
    /// the background) and the process ends without closing the store, so the write-ahead log
    /// stays as it is for the next launch, which reads it back before its first statement.
    /// Prints the launch's time in nanoseconds, the pages the log held as it began, and the
    /// time its trips to the background took in all (their saves and journal entries).
    ///
    /// - Parameter sessions: when given, the app goes to the background that many times
    ///   before it is killed, saving one node each time, as an app the system brings back to
    ///   the foreground without killing it does; ours records each move in its journal
    ///   (`willResignActive`, the save, `didEnterBackground`, then `willEnterForeground` and
    ///   `didBecomeActive` to come back). `nil`: one save, and no event recorded.
    static func killedLaunch(_ implementation: String, n: Int, directory: String, sessions: Int?) throws -> Never {
        let path = path(implementation, n: n, in: directory)
        let pagesInLog = framesInLog(path + "-wal")
        let start = now()
        // One trip to the background: the `session`th of the process, from 0.
        let goToTheBackground: (_ session: Int) throws -> Void
        switch implementation {
        case "ours":
            let store = try ArchiveStore(path: path)
            let engine = try benchEngine(store: store, app: app)
            let result = try engine.restore([])
            precondition(result.isComplete && result.report.restoredCount == n)
            let roots = result.roots
            goToTheBackground = { session in
                guard let screen = result.object(at: try samplePaths(n)[n / 2]) as? BenchScreen else {
                    preconditionFailure("the launch restored no screen at the changed path")
                }
                screen.state.selectedIndex += 1
                guard sessions != nil else {
                    try engine.preserve(roots)
                    return
                }
                if session > 0 {
                    try store.record(.willEnterForeground)
                    try store.record(.didBecomeActive)
                }
                try store.record(.willResignActive)
                try engine.preserve(roots)
                try store.record(.didEnterBackground)
            }
        case "floor":
            let opened = FloorStore(path: path)
            let screens = opened.launch()
            precondition(screens.count == n)
            goToTheBackground = { session in
                let path = try samplePaths(n)[n / 2]
                var state = ScreenState.sample(n / 2)
                state.selectedIndex = Int(getpid()) &+ session
                opened.saveOne(
                    FloorStore.Row(
                        path: path.description, parent: path.parent?.description, className: "Screen",
                        state: state.encodeFloor()))
            }
        default:
            preconditionFailure("a cold launch is ours or the floor's, not \(implementation)")
        }
        let elapsed = now() - start
        let trips = now()
        for session in 0..<(sessions ?? 1) { try goToTheBackground(session) }
        print(elapsed, pagesInLog, now() - trips)
        fflush(nil)
        _exit(0)
    }

    /// The frames of the write-ahead log at `path` that SQLite reads back at the first opening
    /// after a kill: those carrying the log header's salt, from the first on.
    static func framesInLog(_ path: String) -> Int {
        guard let bytes = FileManager.default.contents(atPath: path), bytes.count >= 32 else { return 0 }
        func word(_ offset: Int) -> UInt32 { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        let pageSize = Int(word(8))
        guard pageSize > 0 else { return 0 }
        var frames = 0
        var offset = 32
        while offset + 24 + pageSize <= bytes.count, word(offset + 8) == word(16), word(offset + 12) == word(20) {
            frames += 1
            offset += 24 + pageSize
        }
        return frames
    }
}
