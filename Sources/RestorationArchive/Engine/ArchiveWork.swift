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
        let thread = pthread_self()
        return worksUnderWay.withLock { works in
            works.first { $0.isOn(archive, of: file, thread: thread) }?.work
        }
    }

    /// Marks `work` as under way on `archive` of `file` on the calling thread, and returns
    /// the work it was marked with before (the outer call's, when one is nested in another),
    /// for ``end(on:of:puttingBack:)`` to put back.
    static func begin(_ work: ArchiveWork, on archive: ArchiveName, of file: StoreFileIdentity) -> ArchiveWork? {
        let thread = pthread_self()
        return worksUnderWay.withLock { works in
            if let index = works.firstIndex(where: { $0.isOn(archive, of: file, thread: thread) }) {
                defer { works[index].work = work }
                return works[index].work
            }
            works.append(WorkUnderWay(file: file, archive: archive, thread: thread, work: work))
            return nil
        }
    }

    /// Ends the calling thread's work on `archive` of `file`, putting back the work `outer`
    /// that ``begin(_:on:of:)`` returned.
    static func end(on archive: ArchiveName, of file: StoreFileIdentity, puttingBack outer: ArchiveWork?) {
        let thread = pthread_self()
        worksUnderWay.withLock { works in
            guard let index = works.firstIndex(where: { $0.isOn(archive, of: file, thread: thread) }) else { return }
            if let outer { works[index].work = outer } else { works.remove(at: index) }
        }
    }
}

/// One entry of ``worksUnderWay``.
private struct WorkUnderWay {
    let file: StoreFileIdentity
    let archive: ArchiveName
    let thread: pthread_t
    var work: ArchiveWork

    func isOn(_ archive: ArchiveName, of file: StoreFileIdentity, thread: pthread_t) -> Bool {
        pthread_equal(self.thread, thread) != 0 && self.archive == archive && self.file == file
    }
}

/// The archives this process's engines are restoring or preserving, by store file, archive
/// and thread: one entry per call under way (usually none or one), in a list searched in
/// order. By store file rather than by engine, so that a save asked for in the middle of a
/// restoration through a second engine, or through a second `ArchiveStore` open on the file,
/// is refused as the first engine's own is. By thread, since a call nested in another runs on
/// that call's thread: an engine saving on another thread meanwhile is not in its middle.
private let worksUnderWay = Locked<[WorkUnderWay]>([])
