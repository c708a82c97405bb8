import Examples
import Foundation
import RestorationArchive
import Testing
import TestSupport

/// The example app of the seed articles, preserved and restored through a real store.
@Suite("Example app")
struct ExampleAppTests {
    @Test func exampleAppRoundTripsWithEveryNodeRestored() throws {
        try withTemporaryStore { store in
            let before = OrderApp()
            before.simulateSession()
            let saving = try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry())
            let saved = try saving.preserve(before.roots)
            #expect(saved.leftOut.isEmpty)
            #expect(saved.save?.kind == .full)

            // The next launch: a new process builds the app afresh and restores into it.
            let after = OrderApp()
            let engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry())
            let restoration = try engine.restore(after.roots)
            let report = restoration.report
            #expect(report.outcome == .restored)
            #expect(report.notRestored.isEmpty, "\(report.notRestored)")
            #expect(report.restoredCount == saved.nodeCount)
            #expect(report.nodes.map(\.path.description) == [
                "Tabs",
                "Tabs/MenuNavigation",
                "Tabs/MenuNavigation/Categories",
                "Tabs/MenuNavigation/Menu",
                "Tabs/MenuNavigation/MenuItemDetail",
                "Tabs/OrderNavigation",
                "Tabs/OrderNavigation/Order",
                "Tabs/Pages",
                "Tabs/Pages/COFFEE_webview",
                "Tabs/Pages/MILK_webview",
                "Tabs/Pages/MILK_webview/Presented",
                "Tabs/Profile",
            ])

            // The restored app shows what the user left.
            #expect(after.tabs.selectedIndex == 1)
            #expect(after.menuNavigation.screens.count == 3)
            #expect(after.menuNavigation.finishedRestoring)
            let detail = try #require(after.menuNavigation.screens.last as? MenuItemDetail)
            #expect(detail.item == Examples.MenuItem.menu[0])
            #expect((after.menuNavigation.screens[1] as? MenuList)?.category == .coffee)
            #expect((after.menuNavigation.screens[0] as? CategoryList)?.scrollOffset == 120.5)
            #expect(after.order.order == before.order.order)
            #expect(after.pages.selectedPage == "MILK_webview")
            let milk = try #require(after.pages.pages.first { $0.restorationIdentifier == "MILK_webview" })
            #expect(milk.url == URL(string: "https://example.com/menu/milk"))
            #expect(milk.scrollFraction == 0.25)
            #expect(milk.presented?.presentationStyle == .pageSheet)
            #expect(after.profile.editedText == "Sam")
            #expect(after.profile.activeField == .firstName)
            #expect(after.tabs.login == nil)

            // Restoration goes on while the restored web pages load (R10): the crash marker
            // stays until the last one has, and only then is the report kept.
            #expect(!restoration.isComplete)
            #expect(try store.hasCrashMarker())
            #expect(try store.restoreReports().isEmpty)
            after.finishLoadingPages()
            #expect(restoration.isComplete)
            #expect(try !store.hasCrashMarker())
            #expect(try store.restoreReports().first == report)
        }
    }

    /// A dish screen saved by the app's version 1 (its dish's name and price only) is migrated
    /// by `MenuItemDetail.migrateRestorableState`, the example the Getting Started article
    /// shows: the dish comes back whole, its category found on the menu. Version-1 state
    /// without its price fails that node alone, and the report names the key missing (the
    /// migration named `itemName` for either key).
    @Test func aDishScreenSavedByVersion1IsMigrated() throws {
        try withTemporaryStore { store in
            let app = OrderApp()
            app.simulateSession()
            try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry()).preserve(app.roots)
            let saved = try #require(try store.snapshot())
            let detail = try #require(saved.nodes.first { $0.className == MenuItemDetail.restorationClassName })
            let header = SaveHeader(
                appVersion: saved.header.appVersion, appBuild: saved.header.appBuild, platform: saved.header.platform,
                idiom: saved.header.idiom, appValues: saved.header.appValues)
            func saveVersion1(_ values: [String: StateValue]) throws {
                var old = detail
                old.classVersion = 1
                old.state = try StateValue.encode(values)
                let newest = try #require(try store.header()).generation
                try store.saveChanges([old], basedOn: newest, header: header)
            }

            try saveVersion1(["itemName": .string("Sencha"), "price": .double(3.2), "quantity": .int(2)])
            let after = OrderApp()
            let restoration = try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry())
                .restore(after.roots)
            #expect(restoration.report.notRestored.isEmpty, "\(restoration.report.notRestored)")
            let migrated = try #require(after.menuNavigation.screens.last as? MenuItemDetail)
            #expect(migrated.item == Examples.MenuItem(name: "Sencha", price: 3.2, category: .tea))
            #expect(migrated.quantity == 2)
            after.finishLoadingPages()

            try saveVersion1(["itemName": .string("Sencha")])
            let again = OrderApp()
            let report = try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry())
                .restore(again.roots).report
            #expect(
                report.notRestored.map(\.outcome) == [
                    .failed(.decodeFailed("migrating from class version 1: \(StateCodingError.keyNotFound(key: "price"))"))
                ])
            #expect(report.notRestored.first?.path == detail.path && report.restoredCount == saved.nodes.count - 1)
            again.finishLoadingPages()
        }
    }

    /// What a restore read is what the next preserve compares against: a restored app that
    /// changed one thing writes one node.
    @Test func aRestoredAppSavesOnlyWhatChangedSince() throws {
        try withTemporaryStore { store in
            let before = OrderApp()
            before.simulateSession()
            let saved = try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry())
                .preserve(before.roots)

            let after = OrderApp()
            let engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry())
            let restoration = try engine.restore(after.roots)
            after.finishLoadingPages()
            #expect(restoration.isComplete)
            try preserveUnchangedThenOneChange(after, with: engine, nodeCount: saved.nodeCount)
        }
    }

    /// Preserves `app` as it is, then after one change: the first save writes nothing, the
    /// second one node, both incrementally. Returns the second save.
    @discardableResult
    private func preserveUnchangedThenOneChange(_ app: OrderApp, with engine: RestorationEngine, nodeCount: Int) throws
        -> PreservationResult
    {
        let unchanged = try engine.preserve(app.roots)
        #expect(unchanged.save?.kind == .incremental)
        #expect(unchanged.nodesWritten == 0)
        #expect(unchanged.nodesUnchanged == nodeCount)

        app.order.order.note = "Oat milk"
        let changed = try engine.preserve(app.roots)
        #expect(changed.save?.kind == .incremental)
        #expect(changed.nodesWritten == 1)
        #expect(changed.nodesUnchanged == nodeCount - 1)
        return changed
    }

    @Test func unchangedAppSavesNothingButANewHeader() throws {
        try withTemporaryStore { store in
            let app = OrderApp()
            app.simulateSession()
            let engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry())
            let first = try engine.preserve(app.roots)
            let third = try preserveUnchangedThenOneChange(app, with: engine, nodeCount: first.nodeCount)
            #expect(third.save?.generation == 3)
        }
    }
}
