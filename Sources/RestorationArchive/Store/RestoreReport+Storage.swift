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
//   pathShared: [int], pathTails: [string]: each node's path text is the first pathShared bytes
//     of the previous node's text (none for the first node), then its tail; the shared bytes
//     end at a character boundary, so that every tail is UTF-8,
//   classNames: [string] (each class name once, in order of first appearance),
//   classIndexes: [int] (each node's class, an index into classNames),
//   versions: [int], outcomes: [int] (0 restored, 1 skipped, 2 failed),
//   reasons: [null | container {kind: string, text: string, a: int, b: int}]
//
// Reports recorded by earlier versions of the library have `paths: [string]` and
// `classes: [string]` instead of the four path and class columns, every path and class name
// in full (46 bytes a node in the benchmark's tree of 1,000, where these take 13); they are
// still read.
extension RestoreReport {
    /// The report as one blob in the layout above, written field by field: the bytes
    /// `StateValue.encode` writes for that tree, without building it (five `StateValue`s per
    /// node, each path and class name among them, cost about 1,500 instructions per node at
    /// launch; `RestoreReportStorageTests` holds the two to the same bytes).
    ///
    /// A report of more nodes than an array of the blob format holds when read
    /// (``DecodingLimits/maximumElementCount``) is refused as
    /// ``StateCodingError/unencodable(key:reason:)``: written, it could never be read back.
    func storedBlob() throws(StateCodingError) -> [UInt8] {
        // `startArray` refuses it too; this says so in the report's words.
        guard nodes.count <= DecodingLimits.default.maximumElementCount else {
            throw .unencodable(
                key: "",
                reason: "the report lists \(nodes.count) nodes; a stored report holds at most "
                    + "\(DecodingLimits.default.maximumElementCount)")
        }
        let reason: String? =
            switch outcome {
            case .refused(let reason), .failed(let reason): UTF8Text.prose(reason, upTo: ArchiveStore.maximumReasonLength)
            case .restored, .nothingToRestore: nil
            }
        let (classNames, classIndexes) = classTable()
        let shared = sharedPathBytes()
        // The root container's entries, keys in ascending byte order. Nodes are read in place
        // (`nodes[index].path`): `for node in nodes` copied each whole node, through its
        // runtime metadata, in each loop.
        var writer = BlobWriter()
        writer.startBlob()
        writer.appendVarint(UInt64(10 + (generation == nil ? 0 : 1) + (reason == nil ? 0 : 1)))
        writer.appendLengthPrefixed("archive")
        writer.write(archive.rawValue)
        writer.appendLengthPrefixed("classIndexes")
        try writer.startArray(count: classIndexes.count)
        for index in classIndexes { writer.write(Int64(index)) }
        writer.appendLengthPrefixed("classNames")
        try writer.startArray(count: classNames.count)
        for name in classNames { writer.write(name) }
        writer.appendLengthPrefixed("date")
        writer.write(date)
        if let generation {
            writer.appendLengthPrefixed("generation")
            writer.write(generation.rawValue)
        }
        writer.appendLengthPrefixed("outcome")
        writer.write(outcome.storedName)
        writer.appendLengthPrefixed("outcomes")
        try writer.startArray(count: nodes.count)
        for index in nodes.indices { writer.write(nodes[index].outcome.storedCode) }
        writer.appendLengthPrefixed("pathShared")
        try writer.startArray(count: shared.count)
        for count in shared { writer.write(Int64(count)) }
        writer.appendLengthPrefixed("pathTails")
        try writer.startArray(count: nodes.count)
        for index in nodes.indices {
            UTF8Text.withBytes(of: nodes[index].path.description) { text in
                writer.tag(.string)
                writer.appendLengthPrefixed(UnsafeRawBufferPointer(rebasing: text[shared[index]...]))
            }
        }
        if let reason {
            writer.appendLengthPrefixed("reason")
            writer.write(reason)
        }
        writer.appendLengthPrefixed("reasons")
        try writer.startArray(count: nodes.count)
        for index in nodes.indices {
            switch nodes[index].outcome {
            case .restored: writer.writeNull()
            // An array's elements are at depth 2.
            case .skipped(let reason), .failed(let reason): try writer.write(reason.stored, depth: 2)
            }
        }
        writer.appendLengthPrefixed("versions")
        try writer.startArray(count: nodes.count)
        for index in nodes.indices { writer.write(Int64(nodes[index].classVersion)) }
        return try writer.finishBlob()
    }

    /// Each class name once, in order of first appearance, and each node's index into them.
    private func classTable() -> (names: [String], indexes: [Int]) {
        var names = ClassNames()
        var indexes: [Int] = []
        indexes.reserveCapacity(nodes.count)
        for index in nodes.indices {
            let name = nodes[index].className
            // Neighbours usually share a class: no search for them.
            if let last = indexes.last, UTF8Text.sameBytes(names.names[last], name) {
                indexes.append(last)
            } else {
                indexes.append(names.position(of: name))
            }
        }
        return (names.names, indexes)
    }

    /// For each node, how many bytes its path's text shares with the previous node's, cut
    /// back to a character boundary (0 for the first).
    private func sharedPathBytes() -> [Int] {
        var shared: [Int] = []
        shared.reserveCapacity(nodes.count)
        for index in nodes.indices {
            guard index > 0 else {
                shared.append(0)
                continue
            }
            shared.append(
                UTF8Text.withBytes(of: nodes[index - 1].path.description) { previous in
                    UTF8Text.withBytes(of: nodes[index].path.description) { text in
                        // Paths share most of their text: compare a word at a time first.
                        var count = 0
                        let common = min(previous.count, text.count)
                        while count + 8 <= common
                            && previous.loadUnaligned(fromByteOffset: count, as: UInt64.self)
                                == text.loadUnaligned(fromByteOffset: count, as: UInt64.self)
                        {
                            count += 8
                        }
                        while count < common && previous[count] == text[count] { count += 1 }
                        // A byte 0b10xxxxxx continues a character: the tail starts before it.
                        while count > 0 && count < text.count && text[count] & 0xC0 == 0x80 { count -= 1 }
                        return count
                    }
                })
        }
        return shared
    }

    /// The report a blob of ``storedBlob()`` holds (in either layout), or `nil` when it does
    /// not hold one.
    init?(storedBlob blob: [UInt8]) {
        guard let root = try? StateValue.decode(blob: blob),
            case .string(let archiveText)? = root["archive"], let archive = try? ArchiveName(archiveText),
            case .date(let date)? = root["date"], case .string(let outcomeName)? = root["outcome"],
            case .array(let versions)? = root["versions"], case .array(let outcomes)? = root["outcomes"],
            case .array(let reasons)? = root["reasons"],
            let paths = Self.storedPaths(root), let classes = Self.storedClasses(root),
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
            guard let path = RestorationPath(canonicalText: paths[index]), case .int(let version) = versions[index],
                case .int(let code) = outcomes[index]
            else { return nil }
            guard let nodeOutcome = NodeOutcome(storedCode: code, reason: Reason(stored: reasons[index])) else {
                return nil
            }
            nodes.append(
                Node(path: path, className: classes[index], classVersion: Int(truncatingIfNeeded: version), outcome: nodeOutcome))
        }
        self.init(archive: archive, generation: generation, date: date, outcome: outcome, nodes: nodes)
    }

    /// The nodes' path texts: `pathShared` and `pathTails`, or the earlier layout's `paths`.
    private static func storedPaths(_ root: [String: StateValue]) -> [String]? {
        if case .array(let paths)? = root["paths"] {
            return strings(paths)
        }
        guard case .array(let shared)? = root["pathShared"], case .array(let tails)? = root["pathTails"],
            shared.count == tails.count
        else { return nil }
        var texts: [String] = []
        texts.reserveCapacity(tails.count)
        var previous: [UInt8] = []
        for index in tails.indices {
            guard case .int(let count) = shared[index], count >= 0, count <= previous.count,
                case .string(let tail) = tails[index]
            else { return nil }
            let bytes = Array(previous[..<Int(count)]) + Array(tail.utf8)
            // Shared bytes that end inside a character make no text.
            guard let text = bytes.withUnsafeBufferPointer({ UTF8Text.string(validating: $0) }) else { return nil }
            texts.append(text)
            previous = bytes
        }
        return texts
    }

    /// The nodes' class names: `classNames` and `classIndexes`, or the earlier layout's `classes`.
    private static func storedClasses(_ root: [String: StateValue]) -> [String]? {
        if case .array(let classes)? = root["classes"] {
            return strings(classes)
        }
        guard case .array(let names)? = root["classNames"], case .array(let indexes)? = root["classIndexes"],
            let table = strings(names)
        else { return nil }
        var classes: [String] = []
        classes.reserveCapacity(indexes.count)
        for index in indexes {
            guard case .int(let position) = index, position >= 0, position < table.count else { return nil }
            classes.append(table[Int(position)])
        }
        return classes
    }

    /// The texts of an array of strings, or `nil` when any value is not a string.
    private static func strings(_ values: [StateValue]) -> [String]? {
        var texts: [String] = []
        texts.reserveCapacity(values.count)
        for value in values {
            guard case .string(let text) = value else { return nil }
            texts.append(text)
        }
        return texts
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
            if let text { fields["text"] = .string(UTF8Text.prose(text, upTo: ArchiveStore.maximumReasonLength)) }
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

/// A report's class names, each once, in order of first appearance. Names are told apart by
/// their bytes, as the store keeps them: `String` finds two Unicode forms of one name equal,
/// and the second node's name came back in the first's.
///
/// The first ``searchedInOrder`` names are searched in order, and a dictionary takes over
/// beyond them. An archive holds a few classes, and the dictionary's first use in a process
/// cost a scan of every protocol conformance the process has, for its key's `Hashable`
/// (about 390,000 instructions on Linux, at every app's first restoration: BENCHMARKS.md,
/// "Cold launches").
private struct ClassNames {
    private(set) var names: [String] = []
    /// Every name's position, once there are more than ``searchedInOrder``.
    private var positions: [StoredText: Int] = [:]

    /// How many names are searched in order, a comparison of bytes each.
    static let searchedInOrder = 16

    /// The position of `name`, added at the end if it is new.
    mutating func position(of name: String) -> Int {
        if names.count <= Self.searchedInOrder {
            if let position = names.firstIndex(where: { UTF8Text.sameBytes($0, name) }) { return position }
        } else if let position = positions[StoredText(name)] {
            return position
        }
        names.append(name)
        if names.count > Self.searchedInOrder {
            if positions.isEmpty {
                for position in names.indices { positions[StoredText(names[position])] = position }
            } else {
                positions[StoredText(name)] = names.count - 1
            }
        }
        return names.count - 1
    }
}

/// Text compared and hashed by its UTF-8 bytes, as the store keeps it (as ``ArchiveName``
/// is): `String` finds two Unicode forms of one text equal.
private struct StoredText: Hashable {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (lhs: StoredText, rhs: StoredText) -> Bool { UTF8Text.sameBytes(lhs.text, rhs.text) }

    func hash(into hasher: inout Hasher) {
        UTF8Text.withBytes(of: text) { hasher.combine(bytes: $0) }
    }
}
