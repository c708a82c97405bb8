/// What an object sees while it decodes its state: its place in the restored tree, the
/// children being restored under it, and the other restored objects by path (R4).
public struct RestorationContext {
    /// The object's restoration path.
    public let path: RestorationPath
    /// The header of the generation being restored (app version, app-level values, …).
    public var header: ArchiveHeader { shared.header }
    /// The class version the object's state was archived with (before any migration).
    public let archivedClassVersion: Int
    /// The children being restored under this object, in their archived order. They exist
    /// already and decode their own state right after this object (R8). A child whose own
    /// decoding then fails is marked failed in the report and left out of the result, but
    /// stays in this list: check ``RestorationResult/object(at:)`` when that matters.
    public let children: [any Restorable]
    /// What every context of this restoration shares: one reference, where a copy of the
    /// header and the progress in each context cost a dozen retains and releases per node.
    private let shared: Shared

    init(path: RestorationPath, archivedClassVersion: Int, children: [any Restorable], shared: Shared) {
        self.path = path
        self.archivedClassVersion = archivedClassVersion
        self.children = children
        self.shared = shared
    }

    /// Extends restoration for asynchronous work this object starts (loading an image, a
    /// query), as UIKit's `extendStateRestoration()` does (R10). Restoration stays in
    /// progress, and the generation's crash marker in the store, until every extension is
    /// completed: if the app dies first, that counts as a crash during restoration (and a
    /// generation saved meanwhile is the one the crash policy judges: it holds the state
    /// still being restored). Keep the extension until the work ends: one released without
    /// being completed never ends the restoration (the error is logged). Extend while the
    /// object decodes, or while an earlier extension is still pending: once restoration has
    /// completed, an extension holds nothing back (the error is logged).
    ///
    /// ```swift
    /// let pending = context.extendRestoration()
    /// Task {
    ///     await loadThumbnail()
    ///     pending.complete()
    /// }
    /// ```
    public func extendRestoration() -> RestorationExtension {
        shared.progress.extend(by: path)
    }

    /// The object being restored at `path`, for a reference read with
    /// ``StateDecoder/decodeReference(forKey:)``; `nil` when no object is restored there,
    /// and once every node has been decoded and told restoration finished (then ask
    /// ``RestorationResult/object(at:)``).
    public func object(at path: RestorationPath) -> (any Restorable)? {
        shared.objects[path.description]
    }
}

extension RestorationContext {
    /// One restoration as every context of it sees it: the header, the objects restored so
    /// far by path, and the progress that extensions hold open.
    final class Shared {
        let header: ArchiveHeader
        let progress: RestorationProgress
        /// The objects restored so far, by their path's text (``RestorationObjects``).
        var objects: [String: any Restorable] = [:]

        init(header: ArchiveHeader, progress: RestorationProgress) {
            self.header = header
            self.progress = progress
        }
    }
}
