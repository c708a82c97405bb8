#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What an engine is doing with an archive: from the start of
/// ``RestorationEngine/restore(_:from:)`` or ``RestorationEngine/preserve(_:in:)`` to its
/// return. A preservation of the archive asked for in the middle, by a gate or by one of the
/// objects, is refused.
enum ArchiveWork {
    /// Restoring it: from the start of ``RestorationEngine/restore(_:from:)`` to its return.
    case restoring
    /// Preserving it: from the start of ``RestorationEngine/preserve(_:in:)``, before the save
    /// gate, to its return.
    case preserving

    /// Why a preservation asked for meanwhile saves nothing.
    var refusal: String {
        switch self {
        case .restoring:
            "the archive is being restored, and objects not restored yet would be saved in their initial state"
        case .preserving:
            "the archive is being saved already, and the save under way writes the tree"
        }
    }

    /// The work under way on `archive` of the store file `file`, on the calling thread,
    /// whichever engine (and whichever `ArchiveStore` open on the file) does it.
    static func underWay(on archive: ArchiveName, of file: StoreFileIdentity) -> ArchiveWork? {
        let key = WorkKey(file: file, archive: archive, thread: pthread_self())
        return worksUnderWay.withLock { $0[key] }
    }

    /// Marks `work` as under way on `archive` of `file` on the calling thread, and returns
    /// the work it was marked with before (the outer call's, when one is nested in another),
    /// for ``end(on:of:puttingBack:)`` to put back.
    static func begin(_ work: ArchiveWork, on archive: ArchiveName, of file: StoreFileIdentity) -> ArchiveWork? {
        let key = WorkKey(file: file, archive: archive, thread: pthread_self())
        return worksUnderWay.withLock { $0.updateValue(work, forKey: key) }
    }

    /// Ends the calling thread's work on `archive` of `file`, putting back the work `outer`
    /// that ``begin(_:on:of:)`` returned.
    static func end(on archive: ArchiveName, of file: StoreFileIdentity, puttingBack outer: ArchiveWork?) {
        let key = WorkKey(file: file, archive: archive, thread: pthread_self())
        worksUnderWay.withLock { $0[key] = outer }
    }
}

/// What ``worksUnderWay`` is keyed by.
private struct WorkKey: Equatable {
    let file: StoreFileIdentity
    let archive: ArchiveName
    let thread: pthread_t

    static func == (lhs: WorkKey, rhs: WorkKey) -> Bool {
        pthread_equal(lhs.thread, rhs.thread) != 0 && lhs.archive == rhs.archive && lhs.file == rhs.file
    }
}

/// The archives this process's engines are restoring or preserving, by store file, archive
/// and thread: one entry per call under way (usually none or one). By store file rather than
/// by engine, so that a save asked for in the middle of a restoration through a second
/// engine, or through a second `ArchiveStore` open on the file, is refused as the first
/// engine's own is. By thread, since a call nested in another runs on that call's thread: an
/// engine saving on another thread meanwhile is not in its middle.
private let worksUnderWay = Locked(KeyedList<WorkKey, ArchiveWork>())
