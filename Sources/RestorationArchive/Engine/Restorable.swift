/// An object whose state is preserved when the app goes to the background and restored at
/// the next launch: a screen, a view model, a window, a panel.
///
/// Conform the types of the objects the user would miss after a relaunch. An object is
/// preserved only when it has a ``restorationIdentifier`` (R1); its position in the tree of
/// ``restorationChildren`` gives its ``RestorationPath``, and its state goes into a keyed
/// coder of its own (R3):
///
/// ```swift
/// final class MenuItemDetail: Restorable {
///     static let restorationClassName = "MenuItemDetail"
///     let restorationIdentifier: String? = "MenuItemDetail"
///     var item: MenuItem
///
///     init(item: MenuItem) { self.item = item }
///
///     func encodeRestorableState(with coder: StateEncoder) throws {
///         try coder.encode(item, forKey: "item")
///     }
///     func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
///         item = try coder.decode(MenuItem.self, forKey: "item")
///     }
/// }
/// ```
///
/// The engine calls these members on the caller's thread or actor, one object at a time.
/// For `@MainActor` types, declare the conformance isolated (`extension Screen: @MainActor
/// Restorable`) and call ``RestorationEngine`` from the main actor.
public protocol Restorable: AnyObject {
    /// The stable name this type's objects are archived under: the name a restoration class
    /// is registered for, and the name compared when an object is found for a node (R7).
    ///
    /// Never derive it from the Swift type's name: a renamed type would no longer restore.
    /// When a type is renamed, keep its old name as an alias in ``RestorationRegistry``.
    static var restorationClassName: String { get }

    /// The version of this type's encoding, stored with every node (R12). Raise it when the
    /// encoded keys or their meaning change, and migrate older state in
    /// ``migrateRestorableState(_:from:)``. `0` by default.
    static var restorationClassVersion: Int { get }

    /// Rewrites state archived by an older version of this type (R12) into the current
    /// version's form, before it is decoded. `state` holds the node's top-level values by key.
    ///
    /// By default the state is left as it is, so ``decodeRestorableState(with:context:)``
    /// reads older state directly. Throw to refuse state that cannot be migrated; the node is
    /// then reported as failed.
    ///
    /// - Parameters:
    ///   - state: the archived values, to rewrite in place.
    ///   - version: the ``restorationClassVersion`` that archived them, lower than the current one.
    static func migrateRestorableState(_ state: inout [String: StateValue], from version: Int) throws

    /// The object's identifier among its siblings, or `nil` to keep it and everything below
    /// it out of the archive (R1), as a login screen would.
    var restorationIdentifier: String? { get }

    /// The objects below this one (a tab bar's tabs, a navigation stack's screens, a presented
    /// screen). Children with an identifier are preserved with it, and restored before it is
    /// told that restoration finished (R4). Empty by default.
    var restorationChildren: [any Restorable] { get }

    /// Whether ``restorationChildren`` is an ordered stack, such as a navigation stack.
    ///
    /// In an ordered container, children may share an identifier (the same screen pushed
    /// twice): the second one's path ends in `identifier#2`, the third's in `identifier#3`
    /// (or the next number that no child has as its own identifier), and the archived order
    /// restores them in place (R2). In an unordered container (the default), two children
    /// with one identifier are an error. `false` by default.
    var restorationChildrenAreOrdered: Bool { get }

    /// Writes the object's state into its own coder (R3). Throwing leaves this object and its
    /// subtree out of the save, and the preservation report says why. Writes nothing by default.
    func encodeRestorableState(with coder: StateEncoder) throws

    /// Reads the object's state back. Called after the object's parent has decoded its own
    /// state, and before the object's children decode theirs (R8); ``RestorationContext/children``
    /// already holds the children being restored (R4). Throwing marks the node failed in the
    /// restore report, with the error's description (which the store keeps: leave user values
    /// out of it). Reads nothing by default.
    func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws

    /// Called once every restored object has decoded its state (UIKit's
    /// `applicationFinishedRestoringState`), parents before children. Does nothing by default.
    func restorationDidFinish()
}

extension Restorable {
    public static var restorationClassVersion: Int { 0 }
    public static func migrateRestorableState(_ state: inout [String: StateValue], from version: Int) throws {}
    public var restorationChildren: [any Restorable] { [] }
    public var restorationChildrenAreOrdered: Bool { false }
    public func encodeRestorableState(with coder: StateEncoder) throws {}
    public func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {}
    public func restorationDidFinish() {}
}
