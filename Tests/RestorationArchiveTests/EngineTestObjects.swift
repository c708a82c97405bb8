import Dispatch
import RestorationArchive
import Testing
import TestSupport

/// What the test objects did, in order: "decode Root/A", "finish Root/A", …
final class EventLog {
    var events: [String] = []
}

/// A restorable object for engine tests: an identifier, children, one string of state.
class Probe: Restorable {
    class var restorationClassName: String { "Probe" }
    let restorationIdentifier: String?
    var children: [any Restorable]
    var ordered: Bool
    var value: String
    var extraKey: String?
    let log: EventLog
    private(set) var restoredChildren: [any Restorable] = []
    private(set) var childValuesAtFinish: [String] = []
    private(set) var decodeCount = 0
    /// The header its context gave it when it decoded.
    private(set) var decodedHeader: ArchiveHeader?

    init(_ identifier: String?, value: String = "", ordered: Bool = false, log: EventLog = EventLog(), _ children: [any Restorable] = []) {
        self.restorationIdentifier = identifier
        self.value = value
        self.ordered = ordered
        self.log = log
        self.children = children
    }

    var restorationChildren: [any Restorable] { children }
    var restorationChildrenAreOrdered: Bool { ordered }

    func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(value, forKey: "value")
        if let extraKey { try coder.encode(true, forKey: extraKey) }
    }

    func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        decodeCount += 1
        log.events.append("decode \(context.path)")
        decodedHeader = context.header
        value = try coder.decode(String.self, forKey: "value")
        restoredChildren = context.children
    }

    func restorationDidFinish() {
        log.events.append("finish \(restorationIdentifier ?? "?")")
        childValuesAtFinish = restoredChildren.compactMap { ($0 as? Probe)?.value }
    }
}

/// A second class, for class mismatches (R7).
final class OtherProbe: Probe {
    override class var restorationClassName: String { "OtherProbe" }
}

/// `OtherProbe` under a new name, which finds its old nodes through an alias (R7).
final class RenamedProbe: Probe {
    override class var restorationClassName: String { "RenamedProbe" }
}

/// A subclass that keeps its superclass's state under its own class name (R7).
final class SpecialProbe: Probe {
    override class var restorationClassName: String { "SpecialProbe" }
}

/// Two builds of one class: version 1 stored `title`; version 2 stores `name` (R12).
final class NoteV1: Restorable {
    static let restorationClassName = "Note"
    static let restorationClassVersion = 1
    let restorationIdentifier: String? = "Note"
    var title: String
    init(title: String) { self.title = title }
    func encodeRestorableState(with coder: StateEncoder) throws { try coder.encode(title, forKey: "title") }
    func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        title = try coder.decode(String.self, forKey: "title")
    }
}

final class NoteV2: Restorable {
    static let restorationClassName = "Note"
    static let restorationClassVersion = 2
    let restorationIdentifier: String? = "Note"
    var name = ""
    static func migrateRestorableState(_ state: inout [String: StateValue], from version: Int) throws {
        if version == 1 { state["name"] = state.removeValue(forKey: "title") }
    }
    func encodeRestorableState(with coder: StateEncoder) throws { try coder.encode(name, forKey: "name") }
    func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        name = try coder.decode(String.self, forKey: "name")
    }
}

/// A third build of `Note` (R12), which cannot read what version 1 stored: its migration
/// throws for it, and what it was asked to do is kept.
final class NoteV3: Restorable {
    static let restorationClassName = "Note"
    static let restorationClassVersion = 3
    let restorationIdentifier: String? = "Note"
    private(set) var decoded = false

    struct CannotMigrate: Error, CustomStringConvertible {
        let version: Int
        var description: String { "nothing reads version \(version) any more" }
    }

    static func migrateRestorableState(_ state: inout [String: StateValue], from version: Int) throws {
        guard version >= 2 else { throw CannotMigrate(version: version) }
    }
    func encodeRestorableState(with coder: StateEncoder) throws {}
    func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws { decoded = true }
}

/// An engine over `store` for an app at version 11.0 on Linux.
func makeEngine(
    _ store: ArchiveStore, registry: RestorationRegistry = RestorationRegistry(),
    configuration: RestorationEngine.Configuration = .init()
) throws -> RestorationEngine {
    try RestorationEngine(
        store: store, app: SampleArchives.app,
        registry: registry, configuration: configuration)
}

extension RestorationPath {
    /// A path from its text form, for tests.
    static func text(_ text: String) throws -> RestorationPath { try RestorationPath(parsing: text) }
}

/// A `Probe` that runs the test's code when it has encoded or decoded its state and when it
/// is told that restoration finished, as an app's object that saves on every change would.
final class SavingProbe: Probe {
    var whenEncoded: (() throws -> Void)?
    var whenDecoded: (() throws -> Void)?
    var whenFinished: (() -> Void)?

    override func encodeRestorableState(with coder: StateEncoder) throws {
        try super.encodeRestorableState(with: coder)
        try whenEncoded?()
    }

    override func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        try super.decodeRestorableState(with: coder, context: context)
        try whenDecoded?()
    }

    override func restorationDidFinish() {
        super.restorationDidFinish()
        whenFinished?()
    }
}

/// Runs `body` on another thread and waits for it to return: another writer of the store,
/// from inside an engine's walk or gate. Returns what `body` returned; when it threw, records
/// the error as an issue of the running test (back on its thread) and returns `nil`.
func onAnotherThread<Value: Sendable>(
    _ body: @escaping @Sendable () throws -> Value, sourceLocation: SourceLocation = #_sourceLocation
) -> Value? {
    let returned = ReturnedOnAnotherThread<Value>()
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        returned.result = Result { try body() }
        done.signal()
    }
    done.wait()
    switch returned.result {
    case .success(let value): return value
    case .failure(let error):
        Issue.record(error, "thrown on another thread", sourceLocation: sourceLocation)
        return nil
    case nil: return nil
    }
}

/// What ``onAnotherThread(_:sourceLocation:)``'s body returned or threw: written there before
/// the semaphore's signal, read after its wait.
private final class ReturnedOnAnotherThread<Value>: @unchecked Sendable {
    var result: Result<Value, any Error>?
}
