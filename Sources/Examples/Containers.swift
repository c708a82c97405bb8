public import RestorationArchive

/// The app's tab bar: its tabs, the selected one, and a login screen that is never preserved.
public final class TabBarController: Restorable {
    public static let restorationClassName = "TabBarController"
    public let restorationIdentifier: String? = "Tabs"
    public var tabs: [any Restorable]
    public var selectedIndex = 0
    /// Shown over the tabs until the user signs in; it has no restoration identifier (R1).
    public var login: LoginScreen?

    public init(tabs: [any Restorable]) { self.tabs = tabs }

    public var restorationChildren: [any Restorable] { tabs + (login.map { [$0] } ?? []) }

    public func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(selectedIndex, forKey: "selectedIndex")
    }

    public func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        // Saved by a build with more tabs: stay within the tabs this build has.
        selectedIndex = min(max(0, try coder.decodeInteger(forKey: "selectedIndex")), tabs.count - 1)
    }
}

/// A navigation stack: an ordered container whose screens are rebuilt from the archive (R4).
public final class NavigationStack: Restorable {
    public static let restorationClassName = "NavigationStack"
    public let restorationIdentifier: String?
    public var screens: [any Restorable]
    public private(set) var finishedRestoring = false

    public init(identifier: String, root: (any Restorable)? = nil) {
        self.restorationIdentifier = identifier
        self.screens = root.map { [$0] } ?? []
    }

    public var restorationChildren: [any Restorable] { screens }
    public var restorationChildrenAreOrdered: Bool { true }

    public func push(_ screen: any Restorable) { screens.append(screen) }

    public func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        // The restored screens, in their archived order; a screen that was not restored is
        // simply absent, as UIKit does.
        screens = context.children
    }

    public func restorationDidFinish() { finishedRestoring = true }
}

/// A list of web pages, unordered, with the one on screen.
public final class PageList: Restorable {
    public static let restorationClassName = "PageList"
    public let restorationIdentifier: String? = "Pages"
    public var pages: [WebPage] = []
    public var selectedPage: String?

    public init() {}

    public var restorationChildren: [any Restorable] { pages }

    public func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(selectedPage, forKey: "selectedPage")
    }

    public func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        pages = context.children.compactMap { $0 as? WebPage }
        selectedPage = try coder.decodeIfPresent(String.self, forKey: "selectedPage")
    }
}
