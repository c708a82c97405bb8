/// What a restoration class or the app's fallback is asked to create: one archived node.
public struct RestorationRequest: Sendable {
    /// The node's restoration path.
    public let path: RestorationPath
    /// The class name the node was archived under (possibly an alias of a registered one).
    public let className: String
    /// The class version the node was archived with.
    public let classVersion: Int
    /// The node's state, already migrated to the current class version. The object created
    /// from it still gets ``Restorable/decodeRestorableState(with:context:)``.
    public let coder: StateDecoder
}

/// The restoration classes of an app: which type recreates the objects archived under each
/// class name, the old names of renamed types, and the app's fallback (R6).
///
/// ```swift
/// var registry = RestorationRegistry()
/// try registry.register(MenuItemDetail.self) { request in
///     MenuItemDetail(item: try request.coder.decode(MenuItem.self, forKey: "item"))
/// }
/// try registry.register(OrderScreen.self, aliases: ["OrderViewController"])
/// registry.fallback = { request in
///     request.className == "WebPage" ? WebPage(identifier: request.path.identifier) : nil
/// }
/// ```
///
/// At restoration, each node is looked up in this order: (1) the restoration class registered
/// for its class name creates the object, or declines by returning `nil`, and then nothing
/// else is tried; (2) otherwise ``fallback`` is asked; (3) otherwise an object that already
/// exists at that path (made by the app's normal start-up) is used, unless its type has a
/// restoration class: such objects are only ever created by it.
public struct RestorationRegistry {
    /// Creates an object for a node that no restoration class handles, or returns `nil`.
    /// Throwing fails the node (the restore report keeps the error's description: leave user
    /// values out of it), and no existing object is tried for it.
    public typealias Fallback = (RestorationRequest) throws -> (any Restorable)?

    /// A class, so that handing one out (once per restored node) is one reference, not a copy
    /// of its fields.
    final class Registration {
        let type: any Restorable.Type
        let restore: ((RestorationRequest) throws -> (any Restorable)?)?
        /// Whether an object is an instance of `type` or of one of its subclasses.
        let isInstance: (any Restorable) -> Bool

        init(
            type: any Restorable.Type, restore: ((RestorationRequest) throws -> (any Restorable)?)?,
            isInstance: @escaping (any Restorable) -> Bool
        ) {
            self.type = type
            self.restore = restore
            self.isInstance = isInstance
        }
    }

    private var registrations: [String: Registration] = [:]
    /// Old class names, each to the current name it stands for.
    private var aliases: [String: String] = [:]

    /// The app's fallback, asked for nodes whose class has no restoration class (R6 step 2).
    public var fallback: Fallback?

    /// An empty registry: every node is looked up through ``fallback`` and existing objects.
    public init() {}

    /// Registers `type`'s restoration class: `restore` creates an object for each node archived
    /// under `type.restorationClassName` or one of `aliases`, or declines by returning `nil`.
    ///
    /// - Parameters:
    ///   - type: the type; its ``Restorable/restorationClassName`` is the name registered.
    ///   - aliases: names the type was archived under before it was renamed.
    ///   - restore: creates the object from its path and state, or returns `nil` to decline
    ///     (the node is then not restored at all: no fallback, no existing object). Throwing
    ///     fails the node, with the error's description in the restore report.
    /// - Throws: ``RestorationError/conflictingRegistration(_:)`` when the name or an alias is
    ///   registered already.
    public mutating func register<T: Restorable>(
        _ type: T.Type, aliases: [String] = [], restore: @escaping (RestorationRequest) throws -> T?
    ) throws(RestorationError) {
        try add(type, aliases: aliases, restore: { try restore($0) })
    }

    /// Registers a type that has no restoration class, so that objects of its subclasses
    /// match it (R7) and nodes archived under its old names find it.
    ///
    /// - Throws: ``RestorationError/conflictingRegistration(_:)`` when the name or an alias is
    ///   registered already.
    public mutating func register<T: Restorable>(_ type: T.Type, aliases: [String] = []) throws(RestorationError) {
        try add(type, aliases: aliases, restore: nil)
    }

    private mutating func add<T: Restorable>(
        _ type: T.Type, aliases newAliases: [String], restore: ((RestorationRequest) throws -> (any Restorable)?)?
    ) throws(RestorationError) {
        let name = T.restorationClassName
        for taken in [name] + newAliases where registrations[taken] != nil || aliases[taken] != nil {
            throw .conflictingRegistration(taken)
        }
        guard Set(newAliases).count == newAliases.count, !newAliases.contains(name) else {
            throw .conflictingRegistration(name)
        }
        registrations[name] = Registration(type: type, restore: restore, isInstance: { $0 is T })
        for alias in newAliases { aliases[alias] = name }
    }

    // MARK: Lookup

    /// The current name for an archived class name: itself, or what it is an alias of.
    func currentName(of className: String) -> String {
        // Most apps rename nothing: no hash of the name then.
        aliases.isEmpty ? className : aliases[className] ?? className
    }

    /// The registration for an archived class name, following aliases.
    func registration(for className: String) -> Registration? {
        registrations[currentName(of: className)]
    }

    /// Whether `object` may take the state archived under `className` (R7): it is of that
    /// class, of an alias of it, or an instance of the registered type or a subclass.
    func object(_ object: any Restorable, matches className: String) -> Bool {
        let archived = currentName(of: className)
        if currentName(of: type(of: object).restorationClassName) == archived { return true }
        return registrations[archived]?.isInstance(object) ?? false
    }

    /// Whether objects of this type are only ever created by a restoration class.
    func hasRestorationClass(_ object: any Restorable) -> Bool {
        registration(for: type(of: object).restorationClassName)?.restore != nil
    }
}
