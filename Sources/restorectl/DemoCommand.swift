import ArgumentParser
import Foundation
import RestorationArchive

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Save a sample archive of an example app into a store, to see what restorectl shows.",
        discussion: """
            Writes the preserved state of a small ordering app (a tab bar, a menu navigation \
            stack, web pages and a profile form being edited): a full save, then an incremental \
            save after the user edits a field. Prints the commands that inspect the result.
            """
    )

    @Option(name: .long, help: "The store to write; by default the per-user state directory of the app 'restorectl-demo'.")
    var db: String?

    func run() throws {
        let path: String
        do {
            path = try db ?? ArchiveStore.defaultPath(appIdentifier: "restorectl-demo")
        } catch {
            Diagnostics.fail(error, exitCode: 2)
        }
        do {
            let store = try ArchiveStore(path: path)
            print("Store: \(TerminalText.escaped(path))")
            let header = SaveHeader(
                appVersion: "11.0", appBuild: "1024", idiom: "phone",
                appValues: ["MyAppVersion": .string("11.0")])

            let nodes = try DemoApp.preservedNodes(draft: "Extra shot, no sugar")
            let full = try store.save(nodes, header: header)
            print("The app moves to the background: full save of \(full.nodeCount) nodes → generation \(full.generation).")

            let edited = try DemoApp.preservedNodes(draft: "Extra shot, no sugar, oat milk")
            let changed = edited.filter { !nodes.contains($0) }
            let incremental = try store.saveChanges(changed, basedOn: full.generation, header: header)
            print(
                "The user edits the order note; backgrounded again: incremental save of "
                    + "\(incremental.nodesWritten) changed node → generation \(incremental.generation).")
            print("")
            print("Inspect it:")
            print("  swift run restorectl info \(shellQuoted(path))")
            print("  swift run restorectl info \(shellQuoted(path)) --format json")
            print("  swift run restorectl show \(shellQuoted(path)) Tabs/OrderNavigation/Order")
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
    }

    private func shellQuoted(_ text: String) -> String {
        let safe = text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "/._-~+".unicodeScalars.contains(scalar))
        }
        if safe { return text }
        return "'" + TerminalText.escaped(text).replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// The example app's preserved tree, from the seed articles: seed 002's order app (tabs, a
/// menu navigation stack, a Codable menu item and order), seed 000's web pages with
/// per-category identifiers and a presented page, and seed 001's profile form with the text
/// being edited. The login screen has no restoration identifier, so it is absent.
///
/// The restoration engine (issue 4) will walk live objects to produce these nodes; until then
/// the demo builds them directly with the keyed coder.
enum DemoApp {
    struct MenuItem: Codable {
        enum Category: String, Codable { case coffee, tea, bakery }
        var name: String
        var price: Double
        var category: Category
        var options: [String]
    }

    struct Order: Codable {
        var id: UUID
        var items: [MenuItem]
        var note: String
    }

    static func preservedNodes(draft: String) throws -> [ArchivedNode] {
        func node(
            _ path: [String], _ className: String, order: Int = 0, _ encode: (StateEncoder) throws -> Void = { _ in }
        ) throws -> ArchivedNode {
            let coder = StateEncoder()
            try encode(coder)
            return ArchivedNode(
                path: try RestorationPath(path), className: className, classVersion: 1, order: order,
                state: try coder.encodedBlob())
        }
        let latte = MenuItem(name: "Caffè Latte", price: 4.5, category: .coffee, options: ["oat milk", "extra shot"])
        let menuNavigation = try RestorationPath("Tabs", "MenuNavigation")
        let pages = try RestorationPath("Tabs", "Pages")
        return [
            try node(["Tabs"], "TabBarController") { try $0.encode(0, forKey: "selectedIndex") },
            try node(["Tabs", "MenuNavigation"], "NavigationController", order: 0) {
                try $0.encodeReferences(
                    to: [
                        try menuNavigation.appending("Categories"), try menuNavigation.appending("Menu"),
                        try menuNavigation.appending("MenuItemDetail"),
                    ], forKey: "stack")
            },
            try node(["Tabs", "MenuNavigation", "Categories"], "CategoryList", order: 0) {
                try $0.encode(120.5, forKey: "scrollOffset")
            },
            try node(["Tabs", "MenuNavigation", "Menu"], "MenuList", order: 1) {
                try $0.encode(MenuItem.Category.coffee, forKey: "category")
            },
            try node(["Tabs", "MenuNavigation", "MenuItemDetail"], "MenuItemDetail", order: 2) {
                try $0.encode(latte, forKey: "menuItem")
            },
            try node(["Tabs", "OrderNavigation"], "NavigationController", order: 1),
            try node(["Tabs", "OrderNavigation", "Order"], "OrderViewController") {
                try $0.encode(
                    Order(id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, items: [latte], note: draft),
                    forKey: "order")
            },
            try node(["Tabs", "Pages"], "PageList", order: 2) {
                try $0.encodeReference(to: try pages.appending("MILK_webview"), forKey: "selectedPage")
            },
            try node(["Tabs", "Pages", "MILK_webview"], "WebPage", order: 0) {
                try $0.encode(URL(string: "https://example.com/menu/milk")!, forKey: "url")
                try $0.encode(Float(0.25), forKey: "scrollFraction")
            },
            try node(["Tabs", "Pages", "COFFEE_webview"], "WebPage", order: 1) {
                try $0.encode(URL(string: "https://example.com/menu/coffee")!, forKey: "url")
            },
            try node(["Tabs", "Pages", "YOGURT_webview"], "WebPage", order: 2) {
                try $0.encode(URL(string: "https://example.com/menu/yogurt")!, forKey: "url")
            },
            try node(["Tabs", "Pages", "MILK_webview", "Presented"], "WebPage") {
                try $0.encode(URL(string: "https://example.com/menu/milk/nutrition")!, forKey: "url")
                try $0.encode("pageSheet", forKey: "presentationStyle")
            },
            try node(["Tabs", "Profile"], "ProfileForm", order: 3) {
                try $0.encode(UInt64(42), forKey: "userID")
                try $0.encode("nickname", forKey: "activeField")
            },
            try node(["Tabs", "Profile", "Nickname"], "TextField") {
                try $0.encode("Sam", forKey: "text")
                try $0.encodeNested(forKey: "selection") { selection in
                    try selection.encode(3, forKey: "location")
                    try selection.encode(0, forKey: "length")
                }
            },
        ]
    }
}
