import Logging
import RestorationArchive
import Testing
import TestSupport

/// The code of README.md, against temporary stores instead of the default location, word for
/// word (`everyBlockOfTheREADMEIsHereWordForWord` checks it; see `DocumentationBlocks`): a
/// change to the public API that breaks the README breaks this file's build.
@Suite("README")
struct ReadmeExampleTests {
    // A screen the user would miss after a relaunch. Its state goes into a coder of its own.
    final class MenuItemDetail: Restorable {
        static let restorationClassName = "MenuItemDetail"   // stable: never the Swift type's name
        let restorationIdentifier: String? = "MenuItemDetail"  // nil: never preserved (a login screen)
        let itemName: String
        var quantity = 1

        init(itemName: String) { self.itemName = itemName }

        func encodeRestorableState(with coder: StateEncoder) throws {
            try coder.encode(itemName, forKey: "itemName")
            try coder.encode(quantity, forKey: "quantity")
        }

        func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
            quantity = try coder.decodeInteger(forKey: "quantity")
        }
    }

    // A navigation stack: an ordered container whose screens come back from the archive.
    final class MenuNavigation: Restorable {
        static let restorationClassName = "MenuNavigation"
        let restorationIdentifier: String? = "MenuNavigation"
        var screens: [any Restorable] = []
        var restorationChildren: [any Restorable] { screens }
        var restorationChildrenAreOrdered: Bool { true }

        func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
            screens = context.children  // already created, in their saved order
        }
    }

    /// One launch of the README's app: everything between "At launch" and "Going to the background".
    private func launch(_ path: String) throws -> (ArchiveStore, RestorationEngine, MenuNavigation, RestorationResult) {
        // At launch: open the app's store (created owner-only on first use), and say how to
        // recreate the screens the app's start-up does not make.
        let store = try ArchiveStore(path: path)  // as written: let store = try ArchiveStore(appIdentifier: "com.example.orders")
        var registry = RestorationRegistry()
        try registry.register(MenuItemDetail.self) { request in
            MenuItemDetail(itemName: try request.coder.decode(String.self, forKey: "itemName"))
        }
        let engine = try RestorationEngine(
            store: store, app: AppIdentity(version: "11.0", build: "1024"), registry: registry)

        // The app's normal start-up builds its root objects; restoration fills in the rest. Lifecycle
        // events go to the store's journal as they happen, so the next launch knows how this one ended.
        try store.record(.willFinishLaunching)
        let navigation = MenuNavigation()
        let restoration = try engine.restore([navigation])
        print(restoration.report.restoredCount, "objects restored")   // the report says why for the others
        try store.record(.didFinishLaunching)
        return (store, engine, navigation, restoration)
    }

    @Test func usageExampleWorksAsWritten() throws {
        try withTemporaryStorePath { path in
            do {
                let (store, engine, navigation, restoration) = try launch(path)
                #expect(restoration.report.outcome == .nothingToRestore)

                // Going to the background: save what is on screen (only changed objects are written).
                navigation.screens.append(MenuItemDetail(itemName: "Caffè Latte"))
                try engine.preserve([navigation])
                try store.record(.didEnterBackground)
            }
            do {
                // The next launch gets the screen back, knowing the previous one ended in the background.
                let (store, engine, navigation, restoration) = try launch(path)
                #expect(try store.previousLaunch()?.ending == .inBackground)
                #expect(restoration.report.restoredCount == 2)
                let detail = try #require(navigation.screens.first as? MenuItemDetail)
                #expect(detail.itemName == "Caffè Latte" && detail.quantity == 1)
                detail.quantity = 2
                try engine.preserve([navigation])
            }
            let (store, _, navigation, _) = try launch(path)
            #expect((navigation.screens.first as? MenuItemDetail)?.quantity == 2)

            // The user quit the app explicitly: its UI state is thrown away, every scene's.
            try store.discardAll(reason: "the user quit the app")
            #expect(try launch(path).3.report.outcome == .nothingToRestore)
        }
    }

    @Test func storeAcceptsALogger() throws {
        try withTemporaryStorePath { path in
            let sink = LogSink()
            let store = try ArchiveStore(path: path, logger: Logger(label: "store") { _ in sink })
            try store.save([ArchivedNode(path: try .text("Root"), className: "Root", state: [7, 7, 7])], header: SampleArchives.header)
            try store.discard(.main, reason: "the user quit the app")
            #expect(sink.messages.contains { $0.contains("Migrated the archive store") })
            #expect(sink.messages.contains { $0.contains("Discarded archive 'main': 1 nodes deleted") })
        }
    }

    #if Encryption
    @Test func encryptionExampleSealsEveryState() throws {
        try withTemporaryStorePath { path in
            let keyFromTheKeychain = StateEncryptionKey.generate().bytes
            var configuration = ArchiveStore.Configuration()
            configuration.encryptionKey = try StateEncryptionKey(bytes: keyFromTheKeychain)  // 32 bytes
            let store = try ArchiveStore(path: path, configuration: configuration)  // as written: let store = try ArchiveStore(appIdentifier: "com.example.orders", configuration: configuration)
            let node = ArchivedNode(path: try .text("Root"), className: "Root", state: [7, 7, 7])
            try store.save([node], header: SampleArchives.header)
            #expect(try store.snapshot(of: .main)?.nodes == [node])
            #expect(throws: ArchiveStoreError.encryptionKeyRequired(.main, try .text("Root"))) {
                try ArchiveStore(path: path, mode: .readOnly).snapshot(of: .main)
            }
        }
    }
    #endif

    // The README's Swift blocks are this file's code, and the erase at opening is Getting
    // Started's (GettingStartedExampleTests). Block 3 is a line of an app's Package.swift.
    @Test func everyBlockOfTheREADMEIsHereWordForWord() throws {
        let blocks = try DocumentationBlocks(of: "README.md", in: #filePath, "GettingStartedExampleTests.swift")
        #expect(blocks.count == 4)
        #expect(blocks.blocks.dropFirst(2).first == [#".package(url: "…/RestorationArchive", from: "…", traits: ["Encryption"])"#])
        for problem in blocks.notWordForWord(skipping: [3]) { Issue.record("README's \(problem)") }
    }
}
