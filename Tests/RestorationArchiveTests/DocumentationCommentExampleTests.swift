import Examples
import Foundation
import Logging
import RestorationArchive
import Testing
import TestSupport

/// The code examples of the library's documentation comments (`///`), each block word for
/// word, compiled and run against temporary stores.
///
/// `everyBlockOfTheCommentsIsHereWordForWord` reads the sources and fails unless each Swift
/// block of their comments appears in this file, line for line (indentation aside), as
/// ``GettingStartedExampleTests`` holds the article. The examples name the app's own values
/// and functions (`tabs`, `preservedNodes()`, `loadThumbnail()`); each test here defines them
/// before the block, then checks that the block did what its comment says. A line that must
/// differ (a temporary store instead of the app's default location, an expression shown with
/// its value in a comment) ends with `// as written:` and the comment's line.
@Suite("Documentation comments' examples")
struct DocumentationCommentExampleTests {
    @Test func everyBlockOfTheCommentsIsHereWordForWord() throws {
        let blocks = try DocumentationBlocks(ofCommentsIn: "Sources", in: #filePath, "GettingStartedExampleTests.swift")
        #expect(blocks.count == 12)
        for problem in blocks.notWordForWord() { Issue.record("The documentation comments' \(problem)") }
    }

    /// `ArchiveStore`: read the newest generation, then save the next one.
    @Test func anArchiveStoreRestoresWhatItSaved() throws {
        try withTemporaryStorePath { path in
            var restored: [ArchivedNode] = []
            func restore(from nodes: [ArchivedNode]) { restored = nodes }
            func preservedNodes() throws -> [ArchivedNode] { try SampleArchives.tree(count: 3) }
            for _ in 1...2 {
                let store = try ArchiveStore(path: path)  // as written: let store = try ArchiveStore(appIdentifier: "com.example.orders")
                if let snapshot = try store.snapshot(of: .main) {
                    restore(from: snapshot.nodes)
                }
                let header = SaveHeader(appVersion: "11.0", appBuild: "1024")
                try store.save(preservedNodes(), header: header, in: .main)
            }
            // The first launch had nothing to restore; the second restored what the first saved.
            #expect(Set(restored.map(\.path)) == Set(try preservedNodes().map(\.path)))
            #expect(restored.count == 3)
        }
    }

    /// `ArchiveStore.erase(at:busyTimeout:logger:)`: a file that is not a store is erased, and
    /// the store opened afresh. The example is Getting Started's, word for word, and
    /// ``GettingStartedExampleTests`` holds it, in a function of its own: in this test's
    /// closure, among `#expect`s, Swift 6.3.1 crashed compiling it ("Found ownership error?!",
    /// on the typed `do`'s `catch where`; swiftlang/swift#89577). The same code in a closure
    /// without them compiles.
    @Test func anUnusableStoreIsErasedAndOpenedAfresh() throws {
        try withTemporaryStorePath { temporaryPath in
            #expect(FileManager.default.createFile(atPath: temporaryPath, contents: Data(repeating: 0x41, count: 8192)))
            let store = try GettingStartedExampleTests.openOrStartAfresh(at: temporaryPath)
            #expect(try store.archiveNames().isEmpty)
            #expect(try store.check().isEmpty)
        }
    }

    /// `ResultCode`: a save that met another connection's write lock for longer than the busy
    /// timeout is caught by its code.
    @Test func aBusyStoreIsCaughtByItsResultCode() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path, configuration: .init(busyTimeout: .milliseconds(50)))
            let (nodes, header) = (try SampleArchives.tree(count: 2), SampleArchives.header)
            var postponed = 0
            func saveAgainLater() { postponed += 1 }
            let held = try withSQLiteHolder(of: path, having: "BEGIN IMMEDIATE") {
                do {
                    try store.save(nodes, header: header)
                } catch ArchiveStoreError.database(let error) where error.resultCode == .busy {
                    saveAgainLater()  // another connection held the write lock past the busy timeout
                }
            }
            #expect(held, "the lock was never held")
            #expect(postponed == 1)
            #expect(try store.snapshot() == nil, "nothing was saved")
        }
    }

    /// An order, as the coders' examples encode and decode it.
    struct Order: Codable, Hashable {
        var items: [String]
    }

    /// `StateEncoder`, then `StateDecoder` on the node that holds its blob.
    @Test func whatTheEncoderWritesTheDecoderReads() throws {
        let order = Order(items: ["latte", "scone"])
        let coder = StateEncoder()
        try coder.encode(2, forKey: "selectedTab")
        try coder.encode(order, forKey: "order")           // any Codable value
        try coder.encodeNested(forKey: "scroll") { scroll in
            try scroll.encode(120.5, forKey: "offset")
        }
        let blob = try coder.encodedBlob()

        let node = ArchivedNode(path: try RestorationPath("Tabs"), className: "Tabs", state: blob)
        do {
            let coder = try StateDecoder(blob: node.state)
            let tab = try coder.decode(Int.self, forKey: "selectedTab")
            let order = try coder.decode(Order.self, forKey: "order")      // any Codable value
            let editing = try coder.decodeBool(forKey: "isEditing")         // false when absent
            #expect(tab == 2)
            #expect(order == Order(items: ["latte", "scone"]))
            #expect(editing == false)
            #expect(try coder.decodeNested(forKey: "scroll").decode(Double.self, forKey: "offset") == 120.5)
        }
    }

    /// `RestorationPath`: a path's parent, and its text form parsed back.
    @Test func aPathsParentAndItsTextForm() throws {
        let detail = try RestorationPath("Tabs", "MenuNavigation", "MenuItemDetail")
        #expect(detail.parent?.description == "Tabs/MenuNavigation")  // as written: detail.parent?.description   // "Tabs/MenuNavigation"
        #expect(try RestorationPath(parsing: "Tabs/MenuNavigation") == detail.parent)  // as written: try RestorationPath(parsing: "Tabs/MenuNavigation") == detail.parent   // true
    }

    // MARK: - The engine's examples

    /// The screens of `Restorable`'s, `RestorationRegistry`'s and `RestorationEngine`'s examples.
    enum Menu {
        typealias MenuItem = Examples.MenuItem

        final class MenuItemDetail: Restorable {
            static let restorationClassName = "MenuItemDetail"
            let restorationIdentifier: String? = "MenuItemDetail"
            var item: MenuItem

            init(item: MenuItem) { self.item = item }

            func encodeRestorableState(with coder: StateEncoder) throws {
                try coder.encode(item, forKey: "item")
            }
            func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
                item = try coder.decode(MenuItem.self, forKey: "item")
            }
        }

        final class OrderScreen: Restorable {
            static let restorationClassName = "OrderScreen"
            let restorationIdentifier: String? = "Order"
        }

        final class WebPage: Restorable {
            static let restorationClassName = "WebPage"
            let restorationIdentifier: String?
            init(identifier: String) { restorationIdentifier = identifier }
        }

        /// A tab bar made by the app's start-up: its tabs come back from the archive.
        final class Tabs: Restorable {
            static let restorationClassName = "Tabs"
            let restorationIdentifier: String? = "Tabs"
            var tabs: [any Restorable]
            init(_ tabs: [any Restorable]) { self.tabs = tabs }
            var restorationChildren: [any Restorable] { tabs }
            func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
                tabs = context.children
            }
        }
    }

    /// `Restorable` and `RestorationRegistry`: the detail screen is recreated by its
    /// restoration class, and a web page, which no class handles, by the fallback.
    @Test func theRegistryRecreatesTheScreensItKnows() throws {
        typealias MenuItemDetail = Menu.MenuItemDetail
        typealias MenuItem = Menu.MenuItem
        typealias OrderScreen = Menu.OrderScreen
        typealias WebPage = Menu.WebPage
        var registry = RestorationRegistry()
        try registry.register(MenuItemDetail.self) { request in
            MenuItemDetail(item: try request.coder.decode(MenuItem.self, forKey: "item"))
        }
        try registry.register(OrderScreen.self, aliases: ["OrderViewController"])
        registry.fallback = { request in
            request.className == "WebPage" ? WebPage(identifier: request.path.identifier) : nil
        }

        try withTemporaryStore { store in
            let latte = MenuItem.menu[0]
            let saved = Menu.Tabs([MenuItemDetail(item: latte), WebPage(identifier: "MILK_webview")])
            try RestorationEngine(store: store, app: Self.app, registry: registry).preserve([saved])

            let tabs = Menu.Tabs([])
            let restoration = try RestorationEngine(store: store, app: Self.app, registry: registry).restore([tabs])
            #expect(restoration.report.restoredCount == 3)
            #expect(tabs.tabs.compactMap { ($0 as? MenuItemDetail)?.item } == [latte])
            #expect(tabs.tabs.compactMap { ($0 as? WebPage)?.restorationIdentifier } == ["MILK_webview"])
        }
    }

    static let app = AppIdentity(version: "11.0", build: "1024")

    /// `RestorationEngine`: the first launch restores nothing and saves; the second restores
    /// the tab bar and its detail screen.
    @Test func anEngineRestoresWhatItPreserved() throws {
        typealias MenuItemDetail = Menu.MenuItemDetail
        typealias MenuItem = Menu.MenuItem
        try withTemporaryStorePath { path in
            let sink = LogSink()
            let logger = Logger(label: "orders") { _ in sink }
            for launch in 1...2 {
                let tabs = Menu.Tabs(launch == 1 ? [MenuItemDetail(item: MenuItem.menu[0])] : [])
                let store = try ArchiveStore(path: path)  // as written: let store = try ArchiveStore(appIdentifier: "com.example.orders")
                var registry = RestorationRegistry()
                try registry.register(MenuItemDetail.self) { request in
                    MenuItemDetail(item: try request.coder.decode(MenuItem.self, forKey: "item"))
                }
                let engine = try RestorationEngine(
                    store: store, app: AppIdentity(version: "11.0", build: "1024"), registry: registry)

                // At launch, once the app's normal start-up has built its root objects:
                let restoration = try engine.restore([tabs])
                logger.info("\(restoration.report.restoredCount) screens restored")

                if launch == 2 { #expect((tabs.tabs.first as? MenuItemDetail)?.item == MenuItem.menu[0]) }
                // Going to the background:
                try engine.preserve([tabs])
            }
            #expect(sink.messages == ["0 screens restored", "2 screens restored"])
        }
    }

    /// `RestoreDecision.standard(for:app:)`: the app's own gate refuses state saved by an
    /// earlier version, and otherwise defers to the standard gate.
    @Test func theAppsGateRefusesStateOfAnEarlierVersion() throws {
        try withTemporaryStore { store in
            for (saved, expected) in [(10.0, RestoreReport.Outcome.refused(reason: "saved by a version before 11")), (11.0, .restored)] {
                let saving = try RestorationEngine(store: store, app: Self.app, registry: RestorationRegistry())
                saving.saveGate = { values in
                    values["MyAppVersion"] = .double(saved)
                    return .save
                }
                try saving.preserve([Menu.Tabs([])])
                let engine = try RestorationEngine(store: store, app: Self.app, registry: RestorationRegistry())
                engine.restoreGate = { header, app in
                    guard case .double(let version) = header.appValues["MyAppVersion"], version >= 11 else {
                        return .refuse(reason: "saved by a version before 11")
                    }
                    return .standard(for: header, app: app)
                }
                #expect(try engine.restore([Menu.Tabs([])]).report.outcome == expected, "saved by \(saved)")
            }
        }
    }

    /// `RestorationContext.extendRestoration()`: the crash marker stays until the thumbnail
    /// has loaded and the extension is completed. The screen is a main-actor type, as the
    /// example's are (its `Task` captures the screen), restored on the main actor; the test
    /// waits off it, for the screen's `Task` to run there.
    @Test func anExtendedRestorationEndsWhenItsWorkDoes() async throws {
        try await withTemporaryStorePathAsync { path in
            let store = try ArchiveStore(path: path)
            let loaded = try await MainActor.run {
                try RestorationEngine(store: store, app: Self.app, registry: RestorationRegistry()).preserve([Thumbnail()])
                let thumbnail = Thumbnail()
                let restoration = try RestorationEngine(store: store, app: Self.app, registry: RestorationRegistry())
                    .restore([thumbnail])
                #expect(restoration.report.restoredCount == 1)
                return thumbnail.loaded.continuation
            }
            #expect(try store.hasCrashMarker(), "restoration is in progress while the thumbnail loads")
            loaded.yield()
            let deadline = ContinuousClock.now + .seconds(60)
            while try store.hasCrashMarker(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
            #expect(try !store.hasCrashMarker(), "the completed extension ended the restoration")
        }
    }

    /// `OrderApp` (the `Examples` target): its start-up, its engine and its restoration.
    @Test func theOrderAppRestoresItsTabs() throws {
        try withTemporaryStore { store in
            let before = OrderApp()
            before.tabs.selectedIndex = 2
            try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry()).preserve(before.roots)

            let app = OrderApp()                       // the app's normal start-up
            let engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: OrderApp.registry())
            let restoration = try engine.restore(app.roots)
            #expect(restoration.report.outcome == .restored)
            #expect(app.tabs.selectedIndex == 2)
        }
    }
}

/// A screen whose restoration waits for its thumbnail, as `extendRestoration()`'s example
/// does: `loadThumbnail()` returns once the test lets it.
@MainActor
final class Thumbnail {
    let restorationIdentifier: String? = "Thumbnail"
    let loaded = AsyncStream<Void>.makeStream()

    func loadThumbnail() async {
        for await _ in loaded.stream { return }
    }
}

extension Thumbnail: @MainActor Restorable {
    static let restorationClassName = "Thumbnail"

    func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        let pending = context.extendRestoration()
        Task {
            await loadThumbnail()
            pending.complete()
        }
    }
}
