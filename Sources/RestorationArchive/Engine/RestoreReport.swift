#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What one restoration did, node by node: a value an app can log, and that the store keeps
/// (``ArchiveStore/restoreReports(of:limit:)``, `restorectl report`).
///
/// Reports name paths, class names and keys, never stored values. The store keeps each
/// reason in a report (the outcome's, a node's) to its first
/// ``ArchiveStore/maximumReasonLength`` bytes.
public struct RestoreReport: Hashable, Sendable, Codable {
    /// How the restoration as a whole went.
    public enum Outcome: Hashable, Sendable, Codable {
        /// The generation was restored; see ``RestoreReport/nodes`` for each node.
        case restored
        /// The archive has no generation to restore (first launch, or discarded).
        case nothingToRestore
        /// The restore gate refused the generation, or it may no longer be restored.
        case refused(reason: String)
        /// The generation could not be read (a damaged store, for instance).
        case failed(reason: String)
    }

    /// Why a node was not restored.
    public enum Reason: Hashable, Sendable, Codable, CustomStringConvertible {
        /// Neither a restoration class, the app's fallback nor an existing object provided it.
        case noRestorationClass
        /// Its restoration class returned `nil`.
        case declined
        /// The object found or created for it is of another class (R7).
        case classMismatch(found: String)
        /// It was archived by a newer version of its class than the running code knows (R12).
        case versionTooNew(supported: Int)
        /// Its state could not be decoded or migrated. For the coder's errors the message names
        /// the key; for an error the app threw, it is that error's description, which the store
        /// keeps, so such errors should not carry user values.
        case decodeFailed(String)
        /// Its parent was not restored, so it has nowhere to go.
        case parentNotRestored
        /// Its stored state does not match its checksum (the store was damaged), or its sealed
        /// state does not open under the store's key (it was changed, moved, replayed or given
        /// another class).
        case checksumMismatch
        /// Its state is larger than the engine's per-node budget.
        case overBudget(bytes: Int, budget: Int)

        public var description: String {
            switch self {
            case .noRestorationClass: "no restoration class, fallback or existing object provided it"
            case .declined: "its restoration class declined"
            case .classMismatch(let found): "the object found is a \(found)"
            case .versionTooNew(let supported): "its class version is newer than \(supported), the newest this app knows"
            case .decodeFailed(let message): "decoding failed: \(message)"
            case .parentNotRestored: "its parent was not restored"
            case .checksumMismatch: "its state does not match its checksum or seal"
            case .overBudget(let bytes, let budget): "its state is \(bytes) bytes, over the budget of \(budget)"
            }
        }
    }

    /// What happened to one node.
    public enum NodeOutcome: Hashable, Sendable, Codable {
        /// The object was found or created and decoded its state.
        case restored
        /// The node was passed over, for a reason that is not damage.
        case skipped(Reason)
        /// The node's state was damaged or could not be decoded.
        case failed(Reason)
    }

    /// One archived node and its outcome.
    public struct Node: Hashable, Sendable, Codable {
        /// The node's restoration path.
        public var path: RestorationPath
        /// The restoration class name it was archived under.
        public var className: String
        /// The class version its state was encoded by.
        public var classVersion: Int
        /// What happened to it.
        public var outcome: NodeOutcome
    }

    /// The archive restored from.
    public var archive: ArchiveName
    /// The generation restored from; `nil` when there was none.
    public var generation: Generation?
    /// When the restoration started, to the millisecond (as the store keeps every time, such
    /// as ``JournalEntry/date``).
    public var date: Date
    /// How it went.
    public var outcome: Outcome
    /// Every archived node, in path order (parents first); empty unless ``outcome`` is
    /// ``Outcome/restored``.
    public var nodes: [Node]

    /// The nodes restored.
    public var restoredCount: Int { nodes.count { $0.outcome == .restored } }
    /// The nodes skipped or failed.
    public var notRestored: [Node] { nodes.filter { $0.outcome != .restored } }
}

/// What one preservation did.
public struct PreservationResult: Hashable, Sendable {
    /// Why an object was left out of the save.
    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// Its encoded state is over the per-node budget, or would take the archive over its budget.
        case overBudget(bytes: Int, budget: Int)
        /// Its ``Restorable/encodeRestorableState(with:)`` threw; the message names the key.
        case encodeFailed(String)
        /// Its identifier or class name cannot be stored (empty, too long, too deep), or it is
        /// among its own ancestors (its ``Restorable/restorationChildren`` lead back to it).
        case invalid(String)
        /// Its encoded state would not decode under the engine's
        /// ``RestorationEngine/Configuration/decodingLimits`` (set stricter than the coder's
        /// own), so its restoration would fail; the message names the limit.
        case exceedsDecodingLimits(String)

        public var description: String {
            switch self {
            case .overBudget(let bytes, let budget): "its state is \(bytes) bytes, over the budget of \(budget)"
            case .encodeFailed(let message): "encoding failed: \(message)"
            case .invalid(let message): message
            case .exceedsDecodingLimits(let message): "its state would not decode under the engine's decoding limits: \(message)"
            }
        }
    }

    /// An object left out of the save, with everything below it.
    public struct LeftOut: Hashable, Sendable {
        /// Its path; for an unusable identifier, the path of its parent (or `nil` at the top).
        public var path: RestorationPath?
        /// Its restoration class name.
        public var className: String
        /// Why it was left out.
        public var reason: Reason
    }

    /// The save, or `nil` when nothing was saved: the save gate vetoed it, or the archive was
    /// being restored or saved already (see ``RestorationEngine/preserve(_:in:)``).
    public var save: SaveResult?
    /// Why nothing was saved: the save gate's reason when it vetoed the save, or the engine's
    /// when it was asked to save an archive in the middle of restoring or saving it.
    public var vetoReason: String?
    /// Objects preserved in the new generation.
    public var nodeCount: Int
    /// Objects written because they are new or changed (all of them in a full save).
    public var nodesWritten: Int
    /// Objects whose state was byte-for-byte the same as in the previous generation, so
    /// they were not written again.
    public var nodesUnchanged: Int
    /// Objects of the previous generation that are gone.
    public var nodesRemoved: Int
    /// Objects left out of the save, each with its subtree, and why.
    public var leftOut: [LeftOut]

    /// A preservation that saved nothing, for `reason`.
    static func nothingSaved(because reason: String) -> PreservationResult {
        PreservationResult(
            save: nil, vetoReason: reason, nodeCount: 0, nodesWritten: 0, nodesUnchanged: 0, nodesRemoved: 0, leftOut: [])
    }
}
