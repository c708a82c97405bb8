#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import RestorationArchive

/// The first screen of the menu tab: the categories, and how far the list was scrolled.
public final class CategoryList: Restorable {
    public static let restorationClassName = "CategoryList"
    public let restorationIdentifier: String? = "Categories"
    public var scrollOffset = 0.0

    public init() {}

    public func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(scrollOffset, forKey: "scrollOffset")
    }

    public func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        scrollOffset = try coder.decodeDouble(forKey: "scrollOffset")
    }
}

/// The dishes of one category; recreated by its restoration class.
public final class MenuList: Restorable {
    public static let restorationClassName = "MenuList"
    public let restorationIdentifier: String? = "Menu"
    public var category: MenuItem.Category

    public init(category: MenuItem.Category) { self.category = category }

    public func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(category, forKey: "category")
    }

    public func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        category = try coder.decode(MenuItem.Category.self, forKey: "category")
    }
}

/// One dish, kept as a Codable value (seed 002's `MenuItemDetailViewController`).
///
/// Version 1 kept only the dish's name and price; version 2 keeps the whole `MenuItem` and
/// migrates version-1 state (R12).
public final class MenuItemDetail: Restorable {
    public static let restorationClassName = "MenuItemDetail"
    public static let restorationClassVersion = 2
    public let restorationIdentifier: String? = "MenuItemDetail"
    public var item: MenuItem
    public var quantity = 1

    public init(item: MenuItem) { self.item = item }

    public static func migrateRestorableState(_ state: inout [String: StateValue], from version: Int) throws {
        guard version == 1 else { return }
        guard case .string(let name)? = state.removeValue(forKey: "itemName") else {
            throw StateCodingError.keyNotFound(key: "itemName")
        }
        guard case .double(let price)? = state.removeValue(forKey: "price") else {
            throw StateCodingError.keyNotFound(key: "price")
        }
        let category = MenuItem.menu.first { $0.name == name }?.category ?? .coffee
        state["menuItem"] = .container([
            "name": .string(name), "price": .double(price), "category": .string(category.rawValue), "options": .array([]),
        ])
    }

    public func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(item, forKey: "menuItem")
        try coder.encode(quantity, forKey: "quantity")
    }

    public func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        item = try coder.decode(MenuItem.self, forKey: "menuItem")
        quantity = coder.contains("quantity") ? try coder.decodeInteger(forKey: "quantity") : 1
    }
}

/// The order tab: the order being put together, as a Codable value.
public final class OrderScreen: Restorable {
    public static let restorationClassName = "OrderScreen"
    public let restorationIdentifier: String? = "Order"
    public var order = Order()

    public init() {}

    public func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(order, forKey: "order")
    }

    public func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        order = try coder.decode(Order.self, forKey: "order")
    }
}

/// A web page (seed 000): one class, many instances, each identified by its category
/// (`MILK_webview`, `COFFEE_webview`, …) so that one page's state never lands in another.
public final class WebPage: Restorable {
    public static let restorationClassName = "WebPage"
    public let restorationIdentifier: String?
    public var url: URL
    public var scrollFraction: Float = 0
    /// How this page is presented over its parent, when it is presented.
    public var presentationStyle: PresentationStyle?
    /// A page presented over this one.
    public var presented: WebPage?
    /// A restored page loads its content asynchronously; restoration is extended until it
    /// has (R10): a crash before then counts as a crash during restoration.
    public private(set) var loading: RestorationExtension?

    public init(identifier: String, url: URL, presentationStyle: PresentationStyle? = nil) {
        self.restorationIdentifier = identifier
        self.url = url
        self.presentationStyle = presentationStyle
    }

    /// The page of a category, identified as `<CATEGORY>_webview`.
    public convenience init(category: MenuItem.Category) {
        self.init(
            identifier: "\(category.rawValue.uppercased())_webview",
            url: URL(string: "https://example.com/menu/\(category.rawValue)")!)
    }

    public var restorationChildren: [any Restorable] { presented.map { [$0] } ?? [] }

    public func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(url, forKey: "url")
        try coder.encode(scrollFraction, forKey: "scrollFraction")
        try coder.encode(presentationStyle, forKey: "presentationStyle")
    }

    public func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        url = try coder.decode(URL.self, forKey: "url")
        scrollFraction = try coder.decodeFloat(forKey: "scrollFraction")
        presentationStyle = try coder.decodeIfPresent(PresentationStyle.self, forKey: "presentationStyle")
        presented = context.children.first as? WebPage
        loading = context.extendRestoration()
    }

    /// The restored page's content has loaded: ends this page's extension of restoration.
    public func finishLoading() {
        loading?.complete()
        loading = nil
    }

    /// A page closed before its content loaded: there is nothing left to wait for.
    deinit {
        loading?.complete()
    }
}

/// Seed 001's profile form: whose profile it is, the text being edited, and in which field.
public final class ProfileForm: Restorable {
    public static let restorationClassName = "ProfileForm"
    public let restorationIdentifier: String? = "Profile"
    public var userID: String
    public var editedText = ""
    public var activeField = ProfileField.none

    public init(userID: String) { self.userID = userID }

    public func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(userID, forKey: "UserID")
        try coder.encode(editedText, forKey: "EditedText")
        try coder.encode(Int32(activeField.rawValue), forKey: "EditField")
    }

    public func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        // Another user's half-typed text must never show up in this user's form.
        guard try coder.decode(String.self, forKey: "UserID") == userID else { return }
        editedText = try coder.decode(String.self, forKey: "EditedText")
        activeField = ProfileField(rawValue: Int(try coder.decode(Int32.self, forKey: "EditField"))) ?? .none
    }
}

/// The sign-in screen: it has no restoration identifier, so neither it nor anything under it
/// is preserved (R1), not even its password field, which has one.
public final class LoginScreen: Restorable {
    public static let restorationClassName = "LoginScreen"
    public let restorationIdentifier: String? = nil
    public let password = PasswordField()

    public init() {}

    public var restorationChildren: [any Restorable] { [password] }
}

/// The password field of ``LoginScreen``.
public final class PasswordField: Restorable {
    public static let restorationClassName = "PasswordField"
    public let restorationIdentifier: String? = "Password"
    public var text = ""

    public init() {}

    public func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(text, forKey: "text")
    }
}
