import Foundation
import RestorationArchive
import TestSupport

/// 5. Read-only access: a store opened read-only refuses every write with a typed error and
/// changes no file, whether or not an app has it open; a `-wal` without its `-shm` (an app
/// killed, then its index deleted) is read by a read-only open, the log replayed in memory,
/// with the acknowledged save and a clean check, and leaves the files as they were; the next
/// read-write open recovers that save.
enum ReadOnly {
    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("read-only")
        for index in 0..<scale.trials(quick: 20, full: 200) {
            scenario.trial("trial \(index)") { trial in
                try withTemporaryDirectory { directory in
                    let path = directory + "/store.sqlite"
                    switch index % 3 {
                    case 0: try refusesWrites(path: path, appRunning: false, trial: &trial, random: &random)
                    case 1: try refusesWrites(path: path, appRunning: true, trial: &trial, random: &random)
                    default: try logWithoutIndex(path: path, trial: &trial, random: &random)
                    }
                }
            }
        }
        scenario.remark("as root, a file without write permission is still writable, so that case is not tried here")
        return scenario
    }

    private static func refusesWrites(path: String, appRunning: Bool, trial: inout Trial, random: inout SeededGenerator)
        throws
    {
        let tree = try Content.tree(count: Int.random(in: 1...80, using: &random), using: &random)
        var app: Child?
        defer {
            app?.kill()
            app?.wait()
        }
        if appRunning {
            // An app with the store open in another process: its -wal and -shm exist.
            app = try Child(Child.torture, ["child", "save-and-wait", path, String(random.next())])
            guard app?.nextLine() == "saved" else {
                trial.fail("the app did not save: \(app?.lines ?? [])")
                return
            }
        } else {
            try ArchiveStore(path: path).save(tree, header: Content.header)
        }
        let before = Files.storeFiles(path).map(fileBytes)
        let store = try ArchiveStore(path: path, mode: .readOnly)
        let snapshot = try store.snapshot()
        trial.expect(snapshot != nil, "nothing to read")
        let generation = snapshot?.header.generation ?? 0
        for write in ["save", "saveChanges", "discard", "discardAll", "record"] {
            do {
                switch write {
                case "save": try store.save(tree, header: Content.header)
                case "saveChanges": try store.saveChanges(tree, basedOn: generation, header: Content.header)
                case "discard": try store.discard(reason: "test")
                case "discardAll": try store.discardAll(reason: "test")
                default: try store.record(.didEnterBackground)
                }
                trial.fail("\(write) wrote to a read-only store")
            } catch .readOnly {
            } catch {
                trial.fail("\(write): \(error), not readOnly")
            }
        }
        trial.expect(try store.check().isEmpty, "check finds problems")
        trial.expect(Files.storeFiles(path).map(fileBytes) == before, "a file changed")
    }

    private static func logWithoutIndex(path: String, trial: inout Trial, random: inout SeededGenerator) throws {
        let app = try Child(Child.torture, ["child", "save-and-wait", path, String(random.next())])
        guard app.nextLine() == "saved", let digest = app.nextLine().flatMap(UInt64.init) else {
            trial.fail("the app did not save: \(app.lines)")
            app.kill()
            app.wait()
            return
        }
        app.kill()
        app.wait()
        Files.remove(path + "-shm")
        trial.expect(fileExists(path + "-wal"), "the killed app left no -wal")
        let before = Files.storeFiles(path).map(fileBytes)
        do {
            let reader = try ArchiveStore(path: path, mode: .readOnly)
            trial.expect(
                try reader.snapshot().map { Content.digest($0.nodes) } == digest,
                "read-only, the log replayed lacks the acknowledged save")
            let problems = try reader.check()
            trial.expect(problems.isEmpty, "read-only check: \(problems)")
        } catch {
            trial.fail("a read-only open of a -wal without -shm: \(error)")
        }
        trial.expect(Files.storeFiles(path).map(fileBytes) == before, "a file changed")
        let recovered = try ArchiveStore(path: path)
        trial.expect(try recovered.snapshot().map { Content.digest($0.nodes) } == digest, "the acknowledged save was lost")
    }

    /// The child: an app that saves, says so (and the digest), and waits to be killed.
    static func saveAndWait(_ arguments: [String]) throws {
        guard arguments.count == 2, let seed = UInt64(arguments[1]) else { throw ChildError.usage }
        var random = SeededGenerator(seed: seed)
        let store = try ArchiveStore(path: arguments[0])
        let tree = try Content.tree(count: Int.random(in: 1...80, using: &random), using: &random)
        try store.save(tree, header: Content.header)
        announce("saved")
        announce(String(Content.digest(tree)))
        while true { sleep(60) }
    }
}
