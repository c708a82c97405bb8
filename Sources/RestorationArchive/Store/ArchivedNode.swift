/// One preserved object as the store keeps it: where it sits in the tree, which class can
/// recreate it, and its encoded state.
public struct ArchivedNode: Hashable, Sendable {
    /// The longest class name accepted, in UTF-8 bytes.
    public static let maximumClassNameLength = 256

    /// Where the object sits: identifiers from the root down to it.
    public var path: RestorationPath
    /// The stable name its restoration class is registered under (never a mangled Swift name).
    public var className: String
    /// The version of the class's encoding that produced ``state``.
    public var classVersion: Int
    /// Its position among its siblings (ordered containers such as navigation stacks).
    public var order: Int
    /// The encoded state, as the keyed coder wrote it. Opaque to the store, except that it
    /// may not start with byte 0xE1, which marks sealed states (the keyed coder's blobs start
    /// with their format version, 1); a save refuses such a node with
    /// ``ArchiveStoreError/invalidNode(_:_:)``.
    public var state: [UInt8]

    /// - Parameters:
    ///   - path: the object's restoration path.
    ///   - className: its restoration class's registered name.
    ///   - classVersion: the class's encoding version.
    ///   - order: its position among its siblings; 0 when order does not matter.
    ///   - state: its encoded state.
    public init(path: RestorationPath, className: String, classVersion: Int = 0, order: Int = 0, state: [UInt8]) {
        self.path = path
        self.className = className
        self.classVersion = classVersion
        self.order = order
        self.state = state
    }

    /// The parent object's path, `nil` for a root object.
    public var parentPath: RestorationPath? { path.parent }

    /// Whether everything but the path is equal: class name, version, order and state (every
    /// stored property but ``path``; a new one belongs here too). The states are compared as
    /// bytes, not with `[UInt8]`'s `==`, which goes a byte at a time (a preservation compares
    /// every node).
    func hasSameContent(as other: ArchivedNode) -> Bool {
        guard classVersion == other.classVersion, order == other.order, state.count == other.state.count,
            className == other.className
        else { return false }
        return state.withUnsafeBytes { mine in other.state.withUnsafeBytes { mine.hasSameBytes(as: $0) } }
    }

    func validate() throws(ArchiveStoreError) {
        if let problem = Self.problem(withClassName: className) { throw .invalidNode(path, problem) }
        if StateSeal.isSealed(state) {
            throw .invalidNode(path, "its state starts with byte 0xE1, which marks sealed states")
        }
    }

    /// What is wrong with a class name, or `nil` when it can be stored.
    static func problem(withClassName className: String) -> String? {
        guard !className.isEmpty, className.utf8.count <= maximumClassNameLength else {
            return "its class name must be 1 to \(maximumClassNameLength) bytes of UTF-8"
        }
        return nil
    }
}
