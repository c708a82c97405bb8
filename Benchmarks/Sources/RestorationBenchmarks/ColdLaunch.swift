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
}
