/// An error that stops a whole preservation or restoration.
///
/// Problems with single objects never throw: they leave the object out of the save or the
/// restoration, and the ``PreservationResult`` or ``RestoreReport`` says why.
public enum RestorationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Two objects of one save have the same restoration path (R2). Give one of them another
    /// identifier, or make their container ordered (``Restorable/restorationChildrenAreOrdered``).
    case duplicatePath(RestorationPath, firstClass: String, secondClass: String)
    /// A class name or alias is registered twice in a ``RestorationRegistry``.
    case conflictingRegistration(String)
    /// A configuration value is out of range.
    case invalidConfiguration(String)
    /// The store failed: see the underlying error.
    case store(ArchiveStoreError)

    /// Whether the store cannot be used as it is (``ArchiveStoreError/isUnusableStore`` of the
    /// store's error): erase it (``ArchiveStore/erase(at:busyTimeout:logger:)``) and go on
    /// with the empty store, as at opening.
    public var isUnusableStore: Bool {
        if case .store(let error) = self { error.isUnusableStore } else { false }
    }

    public var description: String {
        switch self {
        case .duplicatePath(let path, let first, let second):
            "Two objects have the restoration path '\(path)': one of class \(first) and one of class \(second). "
                + "Give them different restoration identifiers, or put them in an ordered container."
        case .conflictingRegistration(let name):
            "The class name '\(name)' is registered twice."
        case .invalidConfiguration(let reason):
            "Invalid configuration: \(reason)."
        case .store(let error):
            error.description
        }
    }
}
