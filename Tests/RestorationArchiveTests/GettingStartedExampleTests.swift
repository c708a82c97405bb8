import Examples
import Foundation
import Logging
import RestorationArchive
import Testing
import TestSupport

/// The code of the documentation's Getting Started article (`GettingStarted.md`), each block
/// word for word, compiled and run against temporary stores.
///
/// `everyBlockOfTheArticleIsHereWordForWord` reads the article and fails unless each of its
/// Swift blocks appears in this file, line for line (indentation aside): an edit to the article
/// that is not made here too fails it, and a change to the public API that breaks the article
/// breaks this file's build. A line that must differ (a temporary store instead of the app's
/// default location) ends with `// as written:` and the article's line.
@Suite("Getting Started")
struct GettingStartedExampleTests {
    // The article's `MenuItemDetail` and `NavigationStack` (nested here, so they stand in for
    // the `Examples` types of the same names); `MenuItem`, `MenuList` and `OrderApp` are the
    // `Examples` target's, as the article says (this module has a `MenuItem` of its own).
    typealias MenuItem = Examples.MenuItem

    final class MenuItemDetail: Restorable {
        static let restorationClassName = "MenuItemDetail"
        static let restorationClassVersion = 2
        let restorationIdentifier: String? = "MenuItemDetail"
        var item: MenuItem          // a Codable struct
        var quantity = 1

        init(item: MenuItem) { self.item = item }

        func encodeRestorableState(with coder: StateEncoder) throws {
            try coder.encode(item, forKey: "menuItem")
            try coder.encode(quantity, forKey: "quantity")
        }

        func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
            item = try coder.decode(MenuItem.self, forKey: "menuItem")
            quantity = coder.contains("quantity") ? try coder.decodeInteger(forKey: "quantity") : 1
        }
    }

    final class NavigationStack: Restorable {
        static let restorationClassName = "NavigationStack"
        let restorationIdentifier: String?
        var screens: [any Restorable]

        init(identifier: String, screens: [any Restorable]) {
            restorationIdentifier = identifier
            self.screens = screens
        }

        var restorationChildren: [any Restorable] { screens }
        var restorationChildrenAreOrdered: Bool { true }

        func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
            screens = context.children
        }
    }

    final class WebPage: Restorable {
        static let restorationClassName = "WebPage"
        let restorationIdentifier: String?
        var url: URL
        private var loading: RestorationExtension?

        init(identifier: String, url: URL) {
            restorationIdentifier = identifier
            self.url = url
        }

        func encodeRestorableState(with coder: StateEncoder) throws {
            try coder.encode(url, forKey: "url")
        }

        func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
            url = try coder.decode(URL.self, forKey: "url")
            loading = context.extendRestoration()   // restoration waits for the page to load
        }

        func pageDidLoad() {
            loading?.complete()                     // restoration ends with its last extension
            loading = nil
        }

        deinit {
            loading?.complete()                     // closed before it loaded: nothing to wait for
        }
    }

    // MARK: - The article's statements, each block in a function of its own

    /// "Register restoration classes".
    static func articleRegistry() throws -> RestorationRegistry {
        var registry = RestorationRegistry()
        try registry.register(MenuList.self) { request in
            MenuList(category: try request.coder.decode(MenuItem.Category.self, forKey: "category"))
        }
        try registry.register(MenuItemDetail.self, aliases: ["MenuItemDetailViewController"]) { request in
            MenuItemDetail(item: try request.coder.decode(MenuItem.self, forKey: "menuItem"))
        }
        return registry
    }

    /// "Restore at launch, preserve in the background": one launch of the order app.
    static func launch(
        at path: String, registry: RestorationRegistry, logger: Logger
    ) throws -> (store: ArchiveStore, engine: RestorationEngine, app: OrderApp, restoration: RestorationResult) {
        let store = try ArchiveStore(path: path)  // as written: let store = try ArchiveStore(appIdentifier: "com.example.orders")
        let engine = try RestorationEngine(
            store: store, app: AppIdentity(version: "11.0", build: "1024", idiom: "phone"),
            registry: registry, logger: logger)

        let app = OrderApp()                          // the normal start-up
        let restoration = try engine.restore(app.roots)
        for node in restoration.report.notRestored {
            logger.notice("\(node.path) not restored: \(node.outcome)")
        }

        // When the app goes to the background:
        try engine.preserve(app.roots)
        return (store, engine, app, restoration)
    }

    /// "Gates".
    static func installGates(on engine: RestorationEngine) {
        engine.saveGate = { values in
            values["MyAppVersion"] = .double(11.0)
            return .save
        }
        engine.restoreGate = { header, app in
            guard case .double(let version)? = header.appValues["MyAppVersion"], version >= 11 else {
                return .refuse(reason: "saved before version 11")
            }
            return .standard(for: header, app: app)
        }
    }

    /// "Report the app's lifecycle": a launch recorded from its start to the background.
    static func recordedLaunch(
        store: ArchiveStore, engine: RestorationEngine, app: OrderApp, logger: Logger
    ) throws -> RestorationResult {
        try store.record(.willFinishLaunching)
        let restoration = try engine.restore(app.roots)
        try store.record(.didFinishLaunching)
        try store.record(.didBecomeActive)

        // Later, going to the background:
        try store.record(.willResignActive)
        try engine.preserve(app.roots)
        try store.record(.didEnterBackground)

        // At the next launch, before restoring:
        if let previous = try store.previousLaunch(), previous.ending == .inForeground {
            logger.notice("The last launch died on screen")
        }
        return restoration
    }

    /// "Survive a crash during restoration": the store's crash policy.
    static func storeFallingBackToKnownGood(at path: String) throws -> ArchiveStore {
        let store = try ArchiveStore(
            path: path,  // as written: appIdentifier: "com.example.orders",
            configuration: .init(crashPolicy: .fallBackToKnownGood))
        return store
    }

    /// "Scenes, windows and an explicit quit": a window restored, preserved and closed for
    /// good, then the user quits the app.
    static func windowSession(
        sessionID: String, windowRoots: [any Restorable], engine: RestorationEngine, store: ArchiveStore
    ) throws -> RestorationResult {
        let window = try ArchiveName("window-\(sessionID)")
        let restoration = try engine.restore(windowRoots, from: window)
        try engine.preserve(windowRoots, in: window)

        try store.discard(window, reason: "the window was closed")   // one scene
        try store.discardAll(reason: "the user quit the app")         // every scene
        return restoration
    }

    /// "Start afresh when the store cannot be used".
    static func openOrStartAfresh(at temporaryPath: String) throws -> ArchiveStore {
        let path = temporaryPath  // as written: let path = try ArchiveStore.defaultPath(appIdentifier: "com.example.orders")
        let store: ArchiveStore
        do throws(ArchiveStoreError) {
            store = try ArchiveStore(path: path)
        } catch where error.isUnusableStore {
            try ArchiveStore.erase(at: path)  // never another program's database at a wrong path
            store = try ArchiveStore(path: path)
        }
        return store
    }

    // MARK: - The article's code at work

    @Test func screensComeBackAsTheArticleRestoresThem() throws {
        try withTemporaryStorePath { path in
            let sink = LogSink()
            let logger = Logger(label: "orders") { _ in sink }
            let registry = try Self.articleRegistry()
            let first = try Self.launch(at: path, registry: registry, logger: logger)
            #expect(first.restoration.report.outcome == .nothingToRestore)

            // The user opens a dish and asks for two; the app goes to the background.
            let latte = MenuItem.menu[0]
            let detail = MenuItemDetail(item: latte)
            detail.quantity = 2
            first.app.menuNavigation.screens += [MenuList(category: .coffee), detail]
            try first.engine.preserve(first.app.roots)

            let second = try Self.launch(at: path, registry: registry, logger: logger)
            #expect(second.restoration.report.outcome == .restored)
            #expect(second.restoration.report.notRestored.isEmpty)
            let screens = second.app.menuNavigation.screens
            #expect(screens.count == 3)
            #expect((screens.dropFirst().first as? MenuList)?.category == .coffee)
            let restored = try #require(screens.last as? MenuItemDetail)
            #expect(restored !== detail)
            #expect(restored.item == latte && restored.quantity == 2)
            #expect(!sink.messages.contains { $0.contains("not restored") })
        }
    }

    @Test func aDishSavedByVersionOneIsMigrated() throws {
        // Version 1 of the dish screen kept the dish's name and price.
        final class VersionOneDetail: Restorable {
            static let restorationClassName = "MenuItemDetail"
            static let restorationClassVersion = 1
            let restorationIdentifier: String? = "MenuItemDetail"

            func encodeRestorableState(with coder: StateEncoder) throws {
                try coder.encode("Espresso", forKey: "itemName")
                try coder.encode(2.8, forKey: "price")
            }
        }
        try withTemporaryStorePath { path in
            do {
                let store = try ArchiveStore(path: path)
                let engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: RestorationRegistry())
                let app = OrderApp()
                app.menuNavigation.screens.append(VersionOneDetail())
                try engine.preserve(app.roots)
            }
            let launch = try Self.launch(at: path, registry: try Self.articleRegistry(), logger: Logger(label: "orders"))
            #expect(launch.restoration.report.notRestored.isEmpty)
            let detail = try #require(launch.app.menuNavigation.screens.last as? MenuItemDetail)
            #expect(detail.item == MenuItem(name: "Espresso", price: 2.8, category: .coffee))
            #expect(detail.quantity == 1)
        }
    }

    @Test func theGatesRefuseStateSavedWithoutTheAppsValue() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let registry = try Self.articleRegistry()
            func engine(withGates: Bool) throws -> RestorationEngine {
                let engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: registry)
                if withGates { Self.installGates(on: engine) }
                return engine
            }
            try engine(withGates: false).preserve(OrderApp().roots)
            let refused = try engine(withGates: true).restore(OrderApp().roots)
            #expect(refused.report.outcome == .refused(reason: "saved before version 11"))

            try engine(withGates: true).preserve(OrderApp().roots)
            #expect(try store.snapshot(of: .main)?.header.appValues["MyAppVersion"] == .double(11.0))
            #expect(try engine(withGates: true).restore(OrderApp().roots).report.outcome == .restored)
        }
    }

    @Test func theJournalTellsALaunchThatDiedOnScreen() throws {
        try withTemporaryStorePath { path in
            let sink = LogSink()
            let logger = Logger(label: "orders") { _ in sink }
            let registry = try Self.articleRegistry()
            func launch() throws -> RestorationResult {
                let store = try ArchiveStore(path: path)
                let engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: registry)
                return try Self.recordedLaunch(store: store, engine: engine, app: OrderApp(), logger: logger)
            }
            #expect(try launch().report.outcome == .nothingToRestore)
            #expect(try launch().report.outcome == .restored)  // the last one went to the background
            #expect(!sink.messages.contains("The last launch died on screen"))

            // A launch that ends while the app is on screen: its store is released there, which
            // the journal reads as a process killed there would leave it (LifecycleProcessTests
            // kill real processes).
            do {
                let store = try ArchiveStore(path: path)
                try store.record(.willFinishLaunching)
                try store.record(.didBecomeActive)
            }
            _ = try launch()
            #expect(sink.messages.contains("The last launch died on screen"))
        }
    }

    @Test func theCrashPolicyIsTheStoresConfiguration() throws {
        try withTemporaryStorePath { path in
            let store = try Self.storeFallingBackToKnownGood(at: path)
            #expect(store.configuration.crashPolicy == .fallBackToKnownGood)
        }
    }

    @Test func aPageKeepsRestorationOpenUntilItLoads() throws {
        try withTemporaryStorePath { path in
            let url = try #require(URL(string: "https://example.com/menu/milk"))
            let store = try ArchiveStore(path: path)
            let engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: RestorationRegistry())
            try engine.preserve([WebPage(identifier: "MILK_webview", url: url)])

            let page = try WebPage(identifier: "MILK_webview", url: #require(URL(string: "about:blank")))
            let restoration = try engine.restore([page])
            #expect(page.url == url)
            #expect(!restoration.isComplete)
            #expect(try store.crashMarkers().count == 1)
            page.pageDidLoad()
            #expect(restoration.isComplete)
            #expect(try store.crashMarkers().isEmpty)
        }
    }

    @Test func aWindowHasItsOwnArchiveUntilItIsClosed() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let registry = try Self.articleRegistry()
            let window = try ArchiveName("window-A1")
            try RestorationEngine(store: store, app: OrderApp.identity, registry: registry).preserve(
                [NavigationStack(identifier: "Window", screens: [MenuItemDetail(item: MenuItem.menu[2])])], in: window)
            try RestorationEngine(store: store, app: OrderApp.identity, registry: registry).preserve(OrderApp().roots)

            let stack = NavigationStack(identifier: "Window", screens: [])
            let engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: registry)
            let restoration = try Self.windowSession(sessionID: "A1", windowRoots: [stack], engine: engine, store: store)
            #expect(restoration.report.archive == window && restoration.report.outcome == .restored)
            #expect((stack.screens.first as? MenuItemDetail)?.item == MenuItem.menu[2])
            for archive in [window, ArchiveName.main] {
                guard case .discarded(let reason, _)? = try store.summary(of: archive)?.state else {
                    Issue.record("\(archive) was not discarded")
                    continue
                }
                #expect(reason == (archive == window ? "the window was closed" : "the user quit the app"))
            }
        }
    }

    @Test func anUnusableStoreIsErasedAndOpenedAfresh() throws {
        try withTemporaryStorePath { path in
            try ArchiveStore(path: path).save(
                [ArchivedNode(path: try .text("Root"), className: "Root", state: [1])], header: SampleArchives.header)
            // Damage that SQLite itself reports: the file cut to half of its first page.
            let handle = try #require(FileHandle(forUpdatingAtPath: path))
            try handle.truncate(atOffset: 2048)
            try handle.close()
            #expect(throws: ArchiveStoreError.self) { try ArchiveStore(path: path).archiveNames() }

            let store = try Self.openOrStartAfresh(at: path)
            #expect(try store.archiveNames().isEmpty)
            #expect(try Self.openOrStartAfresh(at: path).archiveNames().isEmpty)  // a usable store is kept
        }
    }

    // MARK: - The article and this file agree

    @Test func everyBlockOfTheArticleIsHereWordForWord() throws {
        let blocks = try DocumentationBlocks(
            of: "Sources/RestorationArchive/Documentation.docc/GettingStarted.md", in: #filePath)
        #expect(blocks.count == 11)
        for problem in blocks.notWordForWord() { Issue.record("Getting Started's \(problem)") }
    }
}

extension GettingStartedExampleTests.MenuItemDetail {
    static func migrateRestorableState(_ state: inout [String: StateValue], from version: Int) throws {
        guard version == 1 else { return }
        guard case .string(let name)? = state.removeValue(forKey: "itemName") else {
            throw StateCodingError.keyNotFound(key: "itemName")
        }
        guard case .double(let price)? = state.removeValue(forKey: "price") else {
            throw StateCodingError.keyNotFound(key: "price")
        }
        state["menuItem"] = .container([
            "name": .string(name), "price": .double(price), "category": .string("coffee"), "options": .array([]),
        ])
    }
}
