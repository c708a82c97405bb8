#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import RestorationArchive

/// The example app of the seed articles, as plain Swift objects: seed 002's order app (a tab
/// bar; a menu navigation stack `Categories` → `Menu` → `MenuItemDetail`; an order tab),
/// seed 000's web pages and presented page, seed 001's profile form, and a login screen that
/// is never preserved.
///
/// ```swift
/// let app = OrderApp()                       // the app's normal start-up
/// let engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry())
/// let restoration = try engine.restore(app.roots)
/// ```
public final class OrderApp {
    /// The version the example app runs as.
    public static let identity = AppIdentity(version: "11.0", build: "1024", idiom: "phone")

    public let tabs: TabBarController
    public let menuNavigation: NavigationStack
    public let orderNavigation: NavigationStack
    public let order: OrderScreen
    public let pages: PageList
    public let profile: ProfileForm

    /// What the app builds at every launch, before restoration: the tabs, each tab's first
    /// screen, the profile form of the signed-in user.
    public init(userID: String = "user-42") {
        menuNavigation = NavigationStack(identifier: "MenuNavigation", root: CategoryList())
        order = OrderScreen()
        orderNavigation = NavigationStack(identifier: "OrderNavigation", root: order)
        pages = PageList()
        profile = ProfileForm(userID: userID)
        tabs = TabBarController(tabs: [menuNavigation, orderNavigation, pages, profile])
    }

    /// The objects restoration starts from.
    public var roots: [any Restorable] { [tabs] }

    /// The app's restoration classes: screens the start-up does not make are recreated from
    /// their archived state; the rest are found where the start-up put them.
    ///
    /// - Parameter lookingUp: called as each archived node is looked up, before its object is
    ///   created or found (the demo uses it to die in the middle of a restoration).
    public static func registry(lookingUp: ((RestorationPath) -> Void)? = nil) throws(RestorationError)
        -> RestorationRegistry
    {
        var registry = RestorationRegistry()
        try registry.register(MenuList.self) { request in
            lookingUp?(request.path)
            return MenuList(category: try request.coder.decode(MenuItem.Category.self, forKey: "category"))
        }
        try registry.register(MenuItemDetail.self, aliases: ["MenuItemDetailViewController"]) { request in
            lookingUp?(request.path)
            return MenuItemDetail(item: try request.coder.decode(MenuItem.self, forKey: "menuItem"))
        }
        try registry.register(WebPage.self) { request in
            lookingUp?(request.path)
            return WebPage(identifier: request.path.identifier, url: try request.coder.decode(URL.self, forKey: "url"))
        }
        if let lookingUp {
            // Every other node is found where the start-up put it; this only watches.
            registry.fallback = { request in
                lookingUp(request.path)
                return nil
            }
        }
        return registry
    }

    /// Every restored web page finishes loading its content, which completes restoration
    /// (R10). An app that is killed before that has crashed during restoration.
    public func finishLoadingPages() {
        var pending: [WebPage] = pages.pages
        while let page = pending.popLast() {
            page.finishLoading()
            if let presented = page.presented { pending.append(presented) }
        }
    }

    /// A session of use: the user browses to a latte, orders it, reads two category pages
    /// (one with a page presented over it), starts editing their profile, and is asked to sign
    /// in again.
    public func simulateSession() {
        let latte = MenuItem.menu[0]
        let categories = menuNavigation.screens.first as? CategoryList ?? CategoryList()
        categories.scrollOffset = 120.5
        menuNavigation.screens = [categories, MenuList(category: .coffee), MenuItemDetail(item: latte)]
        order.order = Order(
            id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID(),
            lines: [Order.Line(item: latte, quantity: 2)], note: "Extra shot, no sugar")
        let milk = WebPage(category: .milk)
        milk.scrollFraction = 0.25
        milk.presented = WebPage(
            identifier: "Presented", url: URL(string: "https://example.com/menu/milk/nutrition")!,
            presentationStyle: .pageSheet)
        pages.pages = [milk, WebPage(category: .coffee)]
        pages.selectedPage = milk.restorationIdentifier
        profile.editedText = "Sam"
        profile.activeField = .firstName
        tabs.selectedIndex = 1
        let login = LoginScreen()
        login.password.text = "not a real password"
        tabs.login = login
    }
}
