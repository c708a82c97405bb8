#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One dish of seed 002's order app; screens keep it through `Codable`.
public struct MenuItem: Codable, Hashable, Sendable {
    public enum Category: String, Codable, Hashable, Sendable, CaseIterable {
        case coffee, tea, milk, bakery
    }

    public var name: String
    public var price: Double
    public var category: Category
    public var options: [String]

    public init(name: String, price: Double, category: Category, options: [String] = []) {
        self.name = name
        self.price = price
        self.category = category
        self.options = options
    }

    /// The menu of the example app.
    public static let menu: [MenuItem] = [
        MenuItem(name: "Caffè Latte", price: 4.5, category: .coffee, options: ["oat milk", "extra shot"]),
        MenuItem(name: "Espresso", price: 2.8, category: .coffee),
        MenuItem(name: "Sencha", price: 3.2, category: .tea),
        MenuItem(name: "Croissant", price: 2.9, category: .bakery),
    ]
}

/// The order being put together (seed 002's `Order`).
public struct Order: Codable, Hashable, Sendable {
    public struct Line: Codable, Hashable, Sendable {
        public var item: MenuItem
        public var quantity: Int
    }

    public var id: UUID
    public var lines: [Line]
    public var note: String

    public init(id: UUID = UUID(), lines: [Line] = [], note: String = "") {
        self.id = id
        self.lines = lines
        self.note = note
    }
}

/// How a page is presented over another (seed 000's `modalPresentationStyle`).
public enum PresentationStyle: String, Codable, Hashable, Sendable {
    case fullScreen, pageSheet, formSheet
}

/// Which field of the profile form was being edited (seed 001's `EditField`).
public enum ProfileField: Int, Codable, Hashable, Sendable {
    case none = 0, firstName = 1, lastName = 2
}
