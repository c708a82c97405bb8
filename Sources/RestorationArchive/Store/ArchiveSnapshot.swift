#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One complete generation of an archive, read in a single transaction: never a mix of two saves.
public struct ArchiveSnapshot: Hashable, Sendable {
    /// The generation's header.
    public var header: ArchiveHeader
    /// Every node, sorted by path, so every parent comes before the nodes below it.
    public var nodes: [ArchivedNode]
    /// The nodes whose content does not match their checksum
    /// (``ArchiveStoreError/damagedNode(_:_:_:)``), or whose state does not open under the key
    /// (``ArchiveStoreError/sealRejected(_:_:_:)``), each with that error. Only a snapshot read
    /// for inspection (``ArchiveStore/inspectionSnapshot(of:generation:)``) keeps such nodes,
    /// with what the store holds, which is not what was saved; a snapshot to restore from has
    /// none.
    public var nodeDamage: [RestorationPath: ArchiveStoreError] = [:]
    /// The paths of ``nodeDamage``, as a set built at each access: to ask about one node, look
    /// its path up in ``nodeDamage``.
    public var damagedPaths: Set<RestorationPath> { Set(nodeDamage.keys) }
}

/// What a save did.
public struct SaveResult: Hashable, Sendable {
    /// The generation the save produced.
    public var generation: Generation
    /// Whether it was written in full or incrementally.
    public var kind: SaveKind
    /// Nodes written (added or changed).
    public var nodesWritten: Int
    /// Nodes removed, including the subtrees below removed nodes.
    public var nodesRemoved: Int
    /// Nodes in the new generation.
    public var nodeCount: Int
    /// Generations pruned because they fell out of the retention window.
    public var prunedGenerations: [Generation]
}

/// A retained generation, as listed by ``ArchiveStore/generations(of:)``.
public struct GenerationSummary: Hashable, Sendable {
    /// The generation's number.
    public var generation: Generation
    /// When the save that produced it committed.
    public var savedAt: Date
    /// Whether that save was written in full or incrementally.
    public var saveKind: SaveKind
    /// Nodes in the generation.
    public var nodeCount: Int
    /// Bytes of encoded state across its nodes.
    public var totalBytes: Int
    /// ``ArchiveState/valid`` or ``ArchiveState/invalidated(reason:at:)``.
    public var state: ArchiveState
    /// Restorations of this generation begun since one last completed: what
    /// ``CrashPolicy/retry(attempts:)`` counts. A generation saved during a restoration
    /// takes on that restoration's attempts, and its crash marker. Above zero with no crash
    /// marker present, the restorations that began died and were dealt with.
    public var restoreAttempts: Int
    /// Whether a restoration of this generation ever completed: a generation
    /// ``CrashPolicy/fallBackToKnownGood`` may fall back to.
    public var restoredCleanly: Bool
}

/// An archive at a glance: what `restorectl info` shows.
public struct ArchiveSummary: Hashable, Sendable {
    /// The archive.
    public var name: ArchiveName
    /// When its first save created it.
    public var createdAt: Date
    /// The newest generation ever saved (0 before the first save); it may have been
    /// discarded since.
    public var latestGeneration: Generation
    /// The archive's state: discarded, or the state of its newest retained generation.
    public var state: ArchiveState
    /// The newest retained generation's header; `nil` when none is retained (never saved,
    /// or discarded).
    public var header: ArchiveHeader?
    /// The retained generations, newest first, but those in ``damagedGenerations``.
    public var generations: [GenerationSummary]
    /// Retained generations older than the newest whose header cannot be read, each with what
    /// is wrong with it (the words of the ``ArchiveStoreError/damagedArchive(_:_:_:)`` that
    /// reading it throws). No restoration picks one, and the archive's saves prune them in
    /// time. Damage to the newest generation's header is thrown instead: the archive's state
    /// and header are that generation's. A row whose number damage turned into a real that
    /// SQLite converts to a listed generation's number is not listed here; ``ArchiveStore/check()``
    /// names it.
    public var damagedGenerations: [Generation: String]
}

/// What a discard did.
public struct DiscardResult: Hashable, Sendable {
    /// Nodes deleted, across all retained generations.
    public var nodesDeleted: Int
    /// Whether the write-ahead log was checkpointed and truncated, so that no copy of the
    /// discarded state remains in the `-wal` file. `false` when another connection was
    /// reading at that moment, or the checkpoint failed (a full disk: the store's logger says
    /// why); the next discard or close of the store truncates it.
    public var writeAheadLogTruncated: Bool
    /// Whether the store was written again without its free pages, to give their space back
    /// to the file system: a discard that leaves at least half of the store's pages free, and
    /// at least ``ArchiveStore/compactedFreeBytes`` of them, compacts it (an archive of many
    /// screens discarded, or every archive at an explicit quit). SQLite reuses free pages
    /// but never shrinks the file by itself. The file shrinks as the log is truncated: when
    /// ``writeAheadLogTruncated`` is `false`, at the store's next truncating checkpoint or
    /// close. `false` too when the compaction failed (the store's logger says why); the
    /// discard stands. For ``ArchiveStore/discardAll(reason:)``, each archive's result says
    /// it of the whole store.
    public var storeCompacted: Bool
}
