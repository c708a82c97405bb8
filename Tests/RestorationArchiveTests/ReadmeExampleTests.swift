import Testing
import TestSupport
import RestorationArchive

/// The usage example of README.md, against a temporary store instead of the default location.
/// Keep the two in step: a change to the public API that breaks the README breaks this test.
@Suite("README")
struct ReadmeExampleTests {
    @Test func usageExampleWorksAsWritten() throws {
        try withTemporaryStorePath { path in
            // README: let store = try ArchiveStore(appIdentifier: "com.example.orders")
            let store = try ArchiveStore(path: path)

            // Restore from the newest saved generation, if there is one.
            #expect(try store.snapshot(of: .main) == nil)

            // Going to the background: save the preserved objects as the next generation.
            let header = SaveHeader(appVersion: "11.0", appBuild: "1024", appValues: ["MyAppVersion": .string("11.0")])
            let tabs = try RestorationPath("Tabs")
            let detail = try RestorationPath("Tabs", "MenuNavigation", "MenuItemDetail")
            let saved = try store.save([
                ArchivedNode(path: tabs, className: "TabBarController", state: [0]),
                ArchivedNode(path: try RestorationPath("Tabs", "MenuNavigation"), className: "NavigationController", state: []),
                ArchivedNode(path: detail, className: "MenuItemDetail", classVersion: 2, state: [1, 2, 3]),
            ], header: header)

            // Next time only one screen changed: write just that node.
            try store.saveChanges(
                [ArchivedNode(path: detail, className: "MenuItemDetail", classVersion: 2, state: [4])],
                basedOn: saved.generation, header: header)
            let snapshot = try #require(try store.snapshot(of: .main))
            #expect(snapshot.nodes.map(\.path.description) == ["Tabs", "Tabs/MenuNavigation", "Tabs/MenuNavigation/MenuItemDetail"])
            #expect(snapshot.nodes.last?.state == [4])

            // The user quit the app explicitly: its UI state is thrown away.
            try store.discard(.main, reason: "the user quit the app")
            #expect(try store.snapshot(of: .main) == nil)
        }
    }
}
