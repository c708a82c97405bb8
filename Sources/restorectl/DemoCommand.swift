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
/// menu navigation stack, an order), seed 000's web pages with per-category identifiers, and
/// seed 001's profile form. The login screen has no restoration identifier, so it is absent.
///
/// Until the keyed coder exists (issue 3), each node's state is plain UTF-8 `key=value` lines.
enum DemoApp {
    static func preservedNodes(draft: String) throws -> [ArchivedNode] {
        func node(_ path: [String], _ className: String, order: Int = 0, _ state: [(String, String)]) throws -> ArchivedNode {
            let text = state.map { "\($0.0)=\($0.1)" }.joined(separator: "\n")
            return ArchivedNode(
                path: try RestorationPath(path), className: className, classVersion: 1, order: order,
                state: Array(text.utf8))
        }
        return [
            try node(["Tabs"], "TabBarController", [("selectedTab", "0")]),
            try node(["Tabs", "MenuNavigation"], "NavigationController", order: 0, []),
            try node(["Tabs", "MenuNavigation", "Categories"], "CategoryList", order: 0, [("scrollOffset", "120.5")]),
            try node(["Tabs", "MenuNavigation", "Menu"], "MenuList", order: 1, [("category", "Coffee")]),
            try node(
                ["Tabs", "MenuNavigation", "MenuItemDetail"], "MenuItemDetail", order: 2,
                [("item", "Caffè Latte"), ("price", "4.5")]),
            try node(["Tabs", "OrderNavigation"], "NavigationController", order: 1, []),
            try node(["Tabs", "OrderNavigation", "Order"], "OrderViewController", [("items", "1"), ("note", draft)]),
            try node(["Tabs", "Pages"], "PageList", order: 2, [("selected", "MILK")]),
            try node(["Tabs", "Pages", "MILK_webview"], "WebPage", order: 0, [("url", "https://example.com/milk")]),
            try node(["Tabs", "Pages", "COFFEE_webview"], "WebPage", order: 1, [("url", "https://example.com/coffee")]),
            try node(["Tabs", "Pages", "YOGURT_webview"], "WebPage", order: 2, [("url", "https://example.com/yogurt")]),
            try node(
                ["Tabs", "Pages", "MILK_webview", "Presented"], "WebPage",
                [("url", "https://example.com/milk/nutrition"), ("presentation", "pageSheet")]),
            try node(["Tabs", "Profile"], "ProfileForm", order: 3, [("userID", "42"), ("activeField", "nickname")]),
            try node(["Tabs", "Profile", "Nickname"], "TextField", [("text", "Sam")]),
        ]
    }
}
