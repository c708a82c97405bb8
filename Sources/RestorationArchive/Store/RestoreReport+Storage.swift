#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// How the store keeps a restore report: one blob (docs/blob-format.md) with the nodes as
// columns, so that recording a report of thousands of nodes costs little at launch.
//
//   archive: string, generation: int (absent when none), date: date,
//   outcome: string ("restored", "nothing", "refused", "failed"), reason: string (refused/failed),
//   paths: [string], classes: [string], versions: [int], outcomes: [int] (0 restored, 1 skipped, 2 failed),
//   reasons: [null | container {kind: string, text: string, a: int, b: int}]
extension RestoreReport {
    /// The report as one blob in the layout above, written field by field: the bytes
    /// `StateValue.encode` writes for that tree, without building it (five `StateValue`s per
    /// node, each path and class name among them, cost about 1,500 instructions per node at
    /// launch; `RestoreReportStorageTests` holds the two to the same bytes).
    func storedBlob() throws(StateCodingError) -> [UInt8] {
        let reason: String? =
            switch outcome {
            case .refused(let reason), .failed(let reason): reason
            case .restored, .nothingToRestore: nil
            }
        // The root container's entries, keys in ascending byte order. Nodes are read in place
        // (`nodes[index].path`): `for node in nodes` copied each whole node, through its
        // runtime metadata, in each of the five loops.
        var writer = BlobWriter()
        writer.startBlob()
        writer.appendVarint(UInt64(8 + (generation == nil ? 0 : 1) + (reason == nil ? 0 : 1)))
        writer.appendLengthPrefixed("archive")
        writer.write(archive.rawValue)
        writer.appendLengthPrefixed("classes")
        writer.startArray(count: nodes.count)
        for index in nodes.indices { writer.write(nodes[index].className) }
        writer.appendLengthPrefixed("date")
        writer.write(date)
        if let generation {
            writer.appendLengthPrefixed("generation")
            writer.write(generation.rawValue)
        }
        writer.appendLengthPrefixed("outcome")
        writer.write(outcome.storedName)
        writer.appendLengthPrefixed("outcomes")
        writer.startArray(count: nodes.count)
        for index in nodes.indices { writer.write(nodes[index].outcome.storedCode) }
        writer.appendLengthPrefixed("paths")
        writer.startArray(count: nodes.count)
        for index in nodes.indices { writer.write(nodes[index].path.description) }
        if let reason {
            writer.appendLengthPrefixed("reason")
            writer.write(reason)
        }
        writer.appendLengthPrefixed("reasons")
        writer.startArray(count: nodes.count)
        for index in nodes.indices {
            switch nodes[index].outcome {
            case .restored: writer.writeNull()
            // An array's elements are at depth 2.
            case .skipped(let reason), .failed(let reason): try writer.write(reason.stored, depth: 2)
            }
        }
        writer.appendLengthPrefixed("versions")
        writer.startArray(count: nodes.count)
        for index in nodes.indices { writer.write(Int64(nodes[index].classVersion)) }
        return try writer.finishBlob()
    }

    /// The report a blob of ``storedBlob()`` holds, or `nil` when it does not hold one.
    init?(storedBlob blob: [UInt8]) {
        guard let root = try? StateValue.decode(blob: blob),
            case .string(let archiveText)? = root["archive"], let archive = try? ArchiveName(archiveText),
            case .date(let date)? = root["date"], case .string(let outcomeName)? = root["outcome"],
            case .array(let paths)? = root["paths"], case .array(let classes)? = root["classes"],
            case .array(let versions)? = root["versions"], case .array(let outcomes)? = root["outcomes"],
            case .array(let reasons)? = root["reasons"],
            classes.count == paths.count, versions.count == paths.count, outcomes.count == paths.count,
            reasons.count == paths.count
        else { return nil }
        var generation: Generation?
        if case .int(let value)? = root["generation"] { generation = Generation(value) }
        let reasonText: String? = if case .string(let text)? = root["reason"] { text } else { nil }
        let outcome: Outcome
        switch (outcomeName, reasonText) {
        case ("restored", _): outcome = .restored
        case ("nothing", _): outcome = .nothingToRestore
        case ("refused", let reason?): outcome = .refused(reason: reason)
        case ("failed", let reason?): outcome = .failed(reason: reason)
        default: return nil
        }
        var nodes: [Node] = []
        nodes.reserveCapacity(paths.count)
        for index in paths.indices {
            guard case .string(let pathText) = paths[index], let path = RestorationPath(canonicalText: pathText),
                case .string(let className) = classes[index], case .int(let version) = versions[index],
                case .int(let code) = outcomes[index]
            else { return nil }
            guard let nodeOutcome = NodeOutcome(storedCode: code, reason: Reason(stored: reasons[index])) else {
                return nil
            }
            nodes.append(Node(path: path, className: className, classVersion: Int(truncatingIfNeeded: version), outcome: nodeOutcome))
        }
        self.init(archive: archive, generation: generation, date: date, outcome: outcome, nodes: nodes)
    }
}

extension RestoreReport.NodeOutcome {
    /// The `outcomes` entry: 0 restored, 1 skipped, 2 failed.
    var storedCode: Int64 {
        switch self {
        case .restored: 0
        case .skipped: 1
        case .failed: 2
        }
    }

    /// The outcome an `outcomes` entry and its `reasons` entry stand for; nil for an unknown
    /// code, or a skipped or failed node without a reason.
    init?(storedCode: Int64, reason: RestoreReport.Reason?) {
        switch (storedCode, reason) {
        case (0, _): self = .restored
        case (1, let reason?): self = .skipped(reason)
        case (2, let reason?): self = .failed(reason)
        default: return nil
        }
    }
}

extension RestoreReport.Reason {
    var stored: StateValue {
        func entry(_ kind: String, text: String? = nil, a: Int? = nil, b: Int? = nil) -> StateValue {
            var fields: [String: StateValue] = ["kind": .string(kind)]
            if let text { fields["text"] = .string(text) }
            if let a { fields["a"] = .int(Int64(a)) }
            if let b { fields["b"] = .int(Int64(b)) }
            return .container(fields)
        }
        return switch self {
        case .noRestorationClass: entry("noRestorationClass")
        case .declined: entry("declined")
        case .classMismatch(let found): entry("classMismatch", text: found)
        case .versionTooNew(let supported): entry("versionTooNew", a: supported)
        case .decodeFailed(let message): entry("decodeFailed", text: message)
        case .parentNotRestored: entry("parentNotRestored")
        case .checksumMismatch: entry("checksumMismatch")
        case .overBudget(let bytes, let budget): entry("overBudget", a: bytes, b: budget)
        }
    }

    init?(stored: StateValue) {
        guard case .container(let fields) = stored, case .string(let kind)? = fields["kind"] else { return nil }
        let text: String? = if case .string(let value)? = fields["text"] { value } else { nil }
        let a: Int? = if case .int(let value)? = fields["a"] { Int(truncatingIfNeeded: value) } else { nil }
        let b: Int? = if case .int(let value)? = fields["b"] { Int(truncatingIfNeeded: value) } else { nil }
        switch (kind, text, a, b) {
        case ("noRestorationClass", _, _, _): self = .noRestorationClass
        case ("declined", _, _, _): self = .declined
        case ("classMismatch", let found?, _, _): self = .classMismatch(found: found)
        case ("versionTooNew", _, let supported?, _): self = .versionTooNew(supported: supported)
        case ("decodeFailed", let message?, _, _): self = .decodeFailed(message)
        case ("parentNotRestored", _, _, _): self = .parentNotRestored
        case ("checksumMismatch", _, _, _): self = .checksumMismatch
        case ("overBudget", _, let bytes?, let budget?): self = .overBudget(bytes: bytes, budget: budget)
        default: return nil
        }
    }
}
