import Foundation
import RestorationArchive
import Synchronization
import Testing
import TestSupport

/// restorectl reading a store while the app has it open and keeps saving to it: the app is this
/// test process, saving on a thread of its own; every command is a real restorectl process.
@Suite("restorectl while the app saves")
struct LiveStoreTests {
    let restorectl = builtProduct("restorectl")

    /// What the saving thread did, shared with the test.
    private final class Saver: Sendable {
        private let state = Mutex<(saves: Int, failure: String?, stop: Bool)>((0, nil, false))
        var saves: Int { state.withLock { $0.saves } }
        var failure: String? { state.withLock { $0.failure } }
        var shouldStop: Bool { state.withLock { $0.stop } }
        func stop() { state.withLock { $0.stop = true } }
        func saved() { state.withLock { $0.saves += 1 } }
        func failed(_ error: any Error) { state.withLock { $0.failure = "\(error)" } }
    }

    /// 120 nodes whose decodable state names the save, so that every save changes every node.
    private static func nodes(save: Int) throws -> [ArchivedNode] {
        var nodes: [ArchivedNode] = []
        for index in 0..<120 {
            let coder = StateEncoder()
            try coder.encode(save, forKey: "save")
            try coder.encode("screen \(index)", forKey: "title")
            let path = index == 0 ? try RestorationPath("Root") : try RestorationPath(parsing: "Root/s\(index % 10)/n\(index)")
            nodes.append(ArchivedNode(path: path, className: "Screen", state: try coder.encodedBlob()))
        }
        // The ten intermediate screens.
        for group in 0..<10 {
            let coder = StateEncoder()
            try coder.encode(save, forKey: "save")
            nodes.append(
                ArchivedNode(path: try RestorationPath(parsing: "Root/s\(group)"), className: "Group", state: try coder.encodedBlob()))
        }
        return nodes
    }

    /// Saves `main` on a thread of its own, each save followed by a journal entry, until told
    /// to stop or a save fails.
    private static func startSaving(_ app: ArchiveStore) -> (Saver, Thread) {
        let saver = Saver()
        let thread = Thread {
            var save = 1
            while !saver.shouldStop {
                do {
                    try app.save(try Self.nodes(save: save), header: SampleArchives.header)
                    _ = try app.record(save % 2 == 0 ? .didBecomeActive : .willResignActive)
                    saver.saved()
                    save += 1
                } catch {
                    saver.failed(error)
                    return
                }
            }
        }
        thread.start()
        return (saver, thread)
    }

    /// A discard that compacts the store writes it all again, its tables at new pages: the
    /// app's connection, which prepared its statements before, goes on saving and reading.
    @Test func discardingAnotherArchiveCompactsTheStoreWhileTheAppSaves() throws {
        try withTemporaryStorePath { path in
            let app = try ArchiveStore(path: path)
            let closed = try ArchiveName("closed-window")
            try app.save(try SampleArchives.tree(count: 4_000, stateSize: 400), header: SampleArchives.header, in: closed)
            try app.save(try Self.nodes(save: 0), header: SampleArchives.header)
            let (saver, thread) = Self.startSaving(app)
            defer { saver.stop() }
            while saver.saves < 3 && saver.failure == nil { usleep(1_000) }
            let outcome = try runProcess(restorectl, ["discard", path, "--archive", closed.rawValue, "--reason", "closed"])
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(outcome.standardOutput.contains("The store was compacted"), "\(outcome.standardOutput)")
            let savesAfter = saver.saves
            while saver.saves < savesAfter + 3 && saver.failure == nil { usleep(1_000) }
            saver.stop()
            while !thread.isFinished { usleep(1_000) }
            #expect(saver.failure == nil, "the app's save failed: \(saver.failure ?? "")")
            let last = try #require(try app.snapshot())
            #expect(last.nodes == (try Self.nodes(save: saver.saves)).sorted { $0.path < $1.path })
            #expect(try app.check() == [])
        }
    }

    @Test func everyReadingCommandWorksWhileTheAppSaves() throws {
        try withTemporaryStorePath { path in
            let app = try ArchiveStore(path: path)
            _ = try app.record(.willFinishLaunching)
            try app.save(try Self.nodes(save: 0), header: SampleArchives.header)
            let (saver, thread) = Self.startSaving(app)
            defer { saver.stop() }

            let commands: [[String]] = [
                ["info", path, "--format", "json"], ["tree", path], ["show", path, "Root/s3/n13"], ["markers", path],
                ["events", path], ["report", path], ["check", path], ["export", path, "--output", path + ".json", "--force"],
            ]
            let savesBefore = saver.saves
            for round in 0..<3 {
                for command in commands {
                    let outcome = try runProcess(restorectl, command)
                    #expect(outcome.status == 0, "round \(round) \(command[0]): \(outcome.standardError)")
                    #expect(outcome.standardError.isEmpty, "round \(round) \(command[0]): \(outcome.standardError)")
                }
            }
            let savesDuring = saver.saves - savesBefore
            saver.stop()
            while !thread.isFinished { usleep(1_000) }
            #expect(saver.failure == nil, "the app's save failed: \(saver.failure ?? "")")
            // The commands really ran while saves committed.
            #expect(savesDuring >= 10, "only \(savesDuring) saves while 24 commands ran")
            try? FileManager.default.removeItem(atPath: path + ".json")
        }
    }
}
