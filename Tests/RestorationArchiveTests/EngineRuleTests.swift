import RestorationArchive
import Testing
import TestSupport

/// The behaviour rules of DESIGN §3 that the engine keeps; each test starts with its rule.
@Suite("Engine rules")
struct EngineRuleTests {
    // MARK: R1 opt-in

    /// An identifier whose Unicode form changed between two preservations (composed "é",
    /// then decomposed) is the same path to the engine, but not the same row to the store, which
    /// finds rows by their bytes: the engine sees the other bytes and saves in full, and the
    /// archive holds the new form once.
    @Test func R2_anIdentifierInAnotherUnicodeFormIsSavedInFull() throws {
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            let composed = "caf\u{E9}"
            let decomposed = "cafe\u{301}"
            let first = try engine.preserve([Probe("Root", value: "r", [Probe(composed, value: "a"), Probe("Other")])])
            #expect(first.save?.kind == .full)
            let second = try engine.preserve([Probe("Root", value: "r", [Probe(decomposed, value: "b"), Probe("Other")])])
            #expect(second.save?.kind == .full)
            let nodes = try #require(try store.snapshot()?.nodes)
            #expect(nodes.count == 3)
            let cafe = try #require(nodes.first { $0.path == (try? RestorationPath("Root", decomposed)) })
            #expect(Array(cafe.path.description.utf8) == Array("Root/\(decomposed)".utf8))
            #expect(try StateDecoder(blob: cafe.state).decode(String.self, forKey: "value") == "b")
            // Unchanged since, in the new form: the next save is incremental again.
            let third = try engine.preserve([Probe("Root", value: "r", [Probe(decomposed, value: "b"), Probe("Other", value: "o")])])
            #expect(third.save?.kind == .incremental)
        }
        // A new child under a parent whose identifier changed form, the parent itself
        // unchanged (so not written): an incremental save would find no parent by the child's
        // bytes, and the engine saves in full here too.
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            try engine.preserve([Probe("Root", value: "r", [Probe("caf\u{E9}", value: "a"), Probe("Other")])])
            let child = try engine.preserve([
                Probe("Root", value: "r", [Probe("cafe\u{301}", value: "a", [Probe("drinks", value: "d")]), Probe("Other")])
            ])
            #expect(child.save?.kind == .full)
            let paths = try #require(try store.snapshot()?.nodes.map { Array($0.path.description.utf8) })
            #expect(paths.contains(Array("Root/cafe\u{301}/drinks".utf8)))
            #expect(!paths.contains(Array("Root/caf\u{E9}".utf8)))
        }
    }

    /// Three characters are canonically equivalent to an ASCII one (the Kelvin sign to "K", the
    /// Greek question mark to ";", the Greek varia to "`"): an identifier that changed between
    /// them and ASCII is the same path, in bytes the store cannot tell are one. The engine sees
    /// it and saves in full, so the archive holds the new form once, whether the node changed
    /// or a new child came under it.
    @Test func R2_anIdentifierEquivalentToAnASCIIOneIsSavedInFull() throws {
        let kelvin = "\u{212A}itchen"
        #expect(kelvin == "Kitchen")
        for newChild in [false, true] {
            try withTemporaryStore { store in
                let engine = try makeEngine(store)
                try engine.preserve([Probe("Root", value: "r", [Probe(kelvin, value: "a"), Probe("Other")])])
                let children = newChild ? [Probe("sink", value: "s")] : []
                let second = try engine.preserve([
                    Probe("Root", value: "r", [Probe("Kitchen", value: newChild ? "a" : "b", children), Probe("Other")])
                ])
                #expect(second.save?.kind == .full)
                let paths = try #require(try store.snapshot()?.nodes.map { Array($0.path.description.utf8) })
                #expect(paths.contains(Array("Root/Kitchen".utf8)))
                #expect(!paths.contains(Array("Root/\(kelvin)".utf8)))
                #expect(paths.count == (newChild ? 4 : 3))
            }
        }
    }

    @Test func R1_objectWithoutIdentifierExcludesItsWholeSubtree() throws {
        try withTemporaryStore { store in
            // Seed 000's stack A–B–C: B has no identifier, so C is not preserved although it has one.
            let c = Probe("C", value: "c")
            let root = Probe("A", value: "a", [Probe(nil, value: "b", [c]), Probe("D", value: "d")])
            let result = try makeEngine(store).preserve([root])
            #expect(result.leftOut.isEmpty)
            let paths = try #require(try store.snapshot()).nodes.map(\.path.description)
            #expect(paths == ["A", "A/D"])
        }
    }

    // MARK: R2 unique paths

    @Test func R2_duplicatePathIsAnErrorNamingThePathAndBothClasses() throws {
        try withTemporaryStore { store in
            // Seed 000's bug: every page identified "webview", so milk showed yogurt's content.
            let root = Probe("Pages", [Probe("webview", value: "milk"), OtherProbe("webview", value: "yogurt")])
            #expect(throws: RestorationError.duplicatePath(try .text("Pages/webview"), firstClass: "Probe", secondClass: "OtherProbe")) {
                try makeEngine(store).preserve([root])
            }
            let error = RestorationError.duplicatePath(try .text("Pages/webview"), firstClass: "Probe", secondClass: "OtherProbe")
            #expect(error.description.hasPrefix(
                "Two objects have the restoration path 'Pages/webview': one of class Probe and one of class OtherProbe."))
            #expect(try store.header() == nil, "nothing is saved")
        }
    }

    /// Duplicates are found among a container's children however many there are, among roots,
    /// and between identifiers in two Unicode forms; the same identifier under two containers
    /// is two paths.
    @Test(arguments: [2, 8, 9, 40])
    func R2_duplicatesAreFoundAmongSiblings(count: Int) throws {
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            func children(_ last: Probe) -> [any Restorable] {
                (0..<count - 1).map { Probe("item\($0)") } + [last]
            }
            let repeated = Probe("Pages", children(OtherProbe("item\(count / 3)")))
            #expect(throws: RestorationError.duplicatePath(try .text("Pages/item\(count / 3)"), firstClass: "Probe", secondClass: "OtherProbe")) {
                try engine.preserve([repeated])
            }
            let reformed = Probe("Pages", [Probe("caf\u{E9}")] + children(OtherProbe("cafe\u{301}")))
            #expect(throws: RestorationError.duplicatePath(try RestorationPath("Pages", "cafe\u{301}"), firstClass: "Probe", secondClass: "OtherProbe")) {
                try engine.preserve([reformed])
            }
            let roots: [any Restorable] = (0..<count).map { Probe("root\($0)") } + [OtherProbe("root0")]
            #expect(throws: RestorationError.duplicatePath(try .text("root0"), firstClass: "Probe", secondClass: "OtherProbe")) {
                try engine.preserve(roots)
            }
            #expect(try store.header() == nil, "nothing is saved")
            // The same identifiers under two containers: no duplicate.
            let result = try engine.preserve([Probe("A", children(Probe("last"))), Probe("B", children(Probe("last")))])
            #expect(result.nodeCount == 2 * (count + 1))
        }
    }

    /// A later preservation checks its paths too: the walk checks them once it is done, and
    /// skips hashing them only when it saved exactly the paths the previous preservation
    /// checked and left no object with a path out. A duplicate among the objects left out
    /// counts, in the walk's order.
    @Test func R2_duplicatesAreFoundOnLaterPreservations() throws {
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            try engine.preserve([Probe("Pages", [Probe("a", value: "1"), Probe("b")])])
            let saved = try #require(try store.header()).generation

            // Another path where "b" was: the paths differ from the last ones.
            #expect(throws: RestorationError.duplicatePath(try .text("Pages/a"), firstClass: "Probe", secondClass: "OtherProbe")) {
                try engine.preserve([Probe("Pages", [Probe("a", value: "2"), OtherProbe("a")])])
            }
            // The same saved paths as last time, and a duplicate left out (its encoding fails),
            // after the object it duplicates and before it.
            let leftOut = OtherProbe("b")
            leftOut.extraKey = "restoration.reserved"
            #expect(throws: RestorationError.duplicatePath(try .text("Pages/b"), firstClass: "Probe", secondClass: "OtherProbe")) {
                try engine.preserve([Probe("Pages", [Probe("a", value: "3"), Probe("b"), leftOut])])
            }
            #expect(throws: RestorationError.duplicatePath(try .text("Pages/b"), firstClass: "OtherProbe", secondClass: "Probe")) {
                try engine.preserve([Probe("Pages", [Probe("a", value: "4"), leftOut, Probe("b")])])
            }
            #expect(try store.header()?.generation == saved, "nothing is saved")

            // The same paths, nothing left out: saved.
            let result = try engine.preserve([Probe("Pages", [Probe("a", value: "5"), Probe("b")])])
            #expect(result.nodesWritten == 1)
        }
    }

    /// A restored generation's paths are not taken as checked: a store written directly can
    /// hold one identifier in two Unicode forms (the store finds a path by its bytes), and the
    /// next preservation of both objects is R2's error, though its paths are the generation's.
    @Test func R2_aRestoredGenerationsPathsAreCheckedAtTheNextPreservation() throws {
        try withTemporaryStore { store in
            let kelvin = "\u{212A}itchen"
            func node(_ path: RestorationPath) -> ArchivedNode {
                ArchivedNode(path: path, className: "Probe", classVersion: 0, order: 0, state: [])
            }
            // The header the test engine's app restores (R5).
            let header = SaveHeader(appVersion: "11.0", appBuild: "1024", platform: "linux", idiom: "phone")
            let first = try store.save([node(try .text("Root")), node(try RestorationPath("Root", kelvin))], header: header)
            try store.saveChanges([node(try .text("Root/Kitchen"))], basedOn: first.generation, header: header)
            let stored = try #require(try store.snapshot()).nodes.map { Array($0.path.description.utf8) }
            #expect(stored == [Array("Root".utf8), Array("Root/Kitchen".utf8), Array("Root/\(kelvin)".utf8)])

            let engine = try makeEngine(store)
            let root = Probe("Root")
            let restored = try engine.restore([root])
            #expect(restored.report.outcome == .restored)
            root.children = [Probe("Kitchen"), OtherProbe(kelvin)]
            #expect(throws: RestorationError.duplicatePath(try RestorationPath("Root", kelvin), firstClass: "Probe", secondClass: "OtherProbe")) {
                try engine.preserve([root])
            }
        }
    }

    @Test func R2_orderedContainerTellsRepeatedIdentifiersApartByPosition() throws {
        try withTemporaryStore { store in
            let stack = Probe("Nav", ordered: true, [Probe("Menu", value: "coffee"), Probe("Menu", value: "tea"), Probe("Detail", value: "latte"), Probe("Menu", value: "milk")])
            try makeEngine(store).preserve([stack])
            let nodes = try #require(try store.snapshot()).nodes
            #expect(nodes.map(\.path.description) == ["Nav", "Nav/Detail", "Nav/Menu", "Nav/Menu#2", "Nav/Menu#3"])
            #expect(nodes.map(\.order) == [0, 2, 0, 1, 3])

            var registry = RestorationRegistry()
            try registry.register(Probe.self) { request in Probe(request.path.identifier) }
            let restored = try makeEngine(store, registry: registry).restore([])
            let nav = try #require(restored.object(at: try .text("Nav")) as? Probe)
            #expect(nav.restoredChildren.compactMap { ($0 as? Probe)?.value } == ["coffee", "tea", "latte", "milk"])
        }
    }

    /// In an unordered container, order does not matter (`ArchivedNode.order` is 0): children
    /// listed in another order at the next save (a container that lists them from a
    /// dictionary, whose order changes from process to process) are nodes unchanged, which an
    /// incremental save does not write again; and they are restored in path order.
    @Test func R2_anUnorderedContainersChildrenAreSavedWithoutAnOrder() throws {
        try withTemporaryStore { store in
            let (a, b, c) = (Probe("A", value: "a"), Probe("B", value: "b"), Probe("C", value: "c"))
            let engine = try makeEngine(store)
            try engine.preserve([Probe("Tabs", [c, a, b])])
            #expect(try #require(try store.snapshot()).nodes.map(\.order) == [0, 0, 0, 0])
            let again = try engine.preserve([Probe("Tabs", [b, c, a])])
            #expect(again.nodesWritten == 0 && again.nodesUnchanged == 4)

            let tabs = Probe("Tabs", [Probe("C"), Probe("B"), Probe("A")])
            _ = try makeEngine(store).restore([tabs])
            #expect(tabs.restoredChildren.compactMap { ($0 as? Probe)?.value } == ["a", "b", "c"])
        }
    }

    /// A child whose own identifier is what a repeated one's rank would make (`Menu#2` beside
    /// two `Menu`s) keeps it, and the repeat takes the next free rank: two paths were one, and
    /// the whole save was refused as a duplicate (R2), in whichever order the children came.
    @Test(arguments: [["Menu", "Menu", "Menu#2"], ["Menu#2", "Menu", "Menu"], ["Menu", "Menu#2", "Menu", "Menu#3", "Menu"]])
    func R2_anIdentifierThatLooksLikeARankKeepsItsPath(identifiers: [String]) throws {
        try withTemporaryStore { store in
            func stack(_ values: [String]) -> Probe {
                Probe("Nav", ordered: true, zip(identifiers, values).map { Probe($0, value: $1) })
            }
            let values = identifiers.indices.map { "screen \($0)" }
            let result = try makeEngine(store).preserve([stack(values)])
            #expect(result.nodeCount == identifiers.count + 1)
            let paths = try #require(try store.snapshot()).nodes.map(\.path.identifier)
            #expect(Set(paths).count == paths.count)
            #expect(Set(identifiers).isSubset(of: Set(paths)), "each identifier's first child keeps it as is")

            let fresh = stack(identifiers.map { _ in "" })
            #expect(try makeEngine(store).restore([fresh]).report.notRestored.isEmpty)
            #expect(fresh.children.map { ($0 as? Probe)?.value } == values)
        }
    }

    // MARK: R3 own coder per object

    @Test func R3_eachObjectEncodesIntoItsOwnCoder() throws {
        try withTemporaryStore { store in
            let milk = Probe("MILK_webview", value: "https://example.com/milk")
            let yogurt = Probe("YOGURT_webview", value: "https://example.com/yogurt")
            try makeEngine(store).preserve([Probe("Pages", [milk, yogurt])])

            let fresh = [Probe("MILK_webview"), Probe("YOGURT_webview")]
            let result = try makeEngine(store).restore([Probe("Pages", fresh)])
            #expect(result.report.notRestored.isEmpty)
            #expect(fresh.map(\.value) == ["https://example.com/milk", "https://example.com/yogurt"])
        }
    }

    @Test func R3_reservedKeyIsRefusedAndOnlyThatObjectIsLeftOut() throws {
        try withTemporaryStore { store in
            let bad = Probe("Bad", value: "x", [Probe("BelowBad")])
            bad.extraKey = "restoration.children"
            let result = try makeEngine(store).preserve([Probe("Root", [bad, Probe("Good")])])
            #expect(result.leftOut.count == 1)
            let leftOut = try #require(result.leftOut.first)
            #expect(leftOut.path == (try .text("Root/Bad")))
            guard case .encodeFailed(let message) = leftOut.reason else {
                Issue.record("expected an encoding failure, got \(leftOut.reason)")
                return
            }
            #expect(message.contains("'restoration.children' is reserved"))
            #expect(try #require(try store.snapshot()).nodes.map(\.path.description) == ["Root", "Root/Good"])
        }
    }

    // MARK: R4 child references

    @Test func R4_childrenArePreservedRecursivelyAndRestoredBeforeTheContainerFinishes() throws {
        try withTemporaryStore { store in
            let original = Probe("Tabs", value: "tabs", [Probe("Menu", value: "menu", [Probe("Detail", value: "latte")])])
            try makeEngine(store).preserve([original])
            #expect(try #require(try store.snapshot()).nodes.map(\.path.description) == ["Tabs", "Tabs/Menu", "Tabs/Menu/Detail"])

            // Only the tab bar exists at launch; its descendants are recreated.
            var registry = RestorationRegistry()
            registry.fallback = { request in request.path.depth > 1 ? Probe(request.path.identifier) : nil }
            let tabs = Probe("Tabs")
            let result = try makeEngine(store, registry: registry).restore([tabs])
            #expect(result.report.restoredCount == 3)
            let menu = try #require(tabs.restoredChildren.first as? Probe)
            #expect(menu.restorationIdentifier == "Menu")
            // By the time a container hears that restoration finished, its children have their state.
            #expect(tabs.childValuesAtFinish == ["menu"])
            #expect(menu.childValuesAtFinish == ["latte"])
            #expect(result.object(at: try .text("Tabs/Menu/Detail")) === menu.restoredChildren.first)
        }
    }

    /// An object whose encoding asks for a save of the archive being saved (a view model that
    /// saves on every change, changed as it encodes) gets nothing saved: the preservation under
    /// way saves the tree, in one generation. The engine used to save the archive again from
    /// inside the walk, a generation more, which pruned a retained one; an object asking at
    /// every encode recursed until the stack ran out. The save gate is asked once, and a save
    /// of another archive goes ahead.
    @Test func R4_aSaveAskedForWhileTheArchiveIsBeingSavedSavesNothing() throws {
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            var gateAsked = 0
            engine.saveGate = { _ in
                gateAsked += 1
                return .save
            }
            let asking = SavingProbe("A", value: "a")
            let root = Probe("Root", value: "r", [asking, Probe("B", value: "b")])
            let other = try ArchiveName("other")
            var saves: [PreservationResult?] = []
            // At most 20 deep, so that a failing engine fails the test instead of the process.
            var depth = 0
            asking.whenEncoded = {
                depth += 1
                guard depth <= 20 else { return }
                saves.append(try? engine.preserve([root]))
                saves.append(try? engine.preserve([Probe("Other", value: "o")], in: other))
            }
            let result = try engine.preserve([root])
            asking.whenEncoded = nil
            #expect(result.save?.generation == 1 && result.nodeCount == 3)
            let reason = "the archive is being saved already, and the save under way writes the tree"
            #expect(saves.map { $0?.vetoReason } == [reason, nil])
            #expect(saves.map { $0?.save?.generation } == [nil, 1])
            #expect(gateAsked == 2)
            #expect(try store.generations().map(\.generation) == [1])

            // The next save is not refused: the preservation is over.
            asking.value = "a2"
            #expect(try engine.preserve([root]).save?.generation == 2)
        }
    }

    /// Through another engine on the same store file too: it saved the tree in the middle of
    /// the first engine's save (a generation more, which the first then saved over).
    @Test func R4_aSaveAskedThroughAnotherEngineWhileTheArchiveIsBeingSavedSavesNothing() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            let engine = try makeEngine(store)
            let other = try makeEngine(try ArchiveStore(path: path))
            let asking = SavingProbe("A", value: "a")
            let root = Probe("Root", value: "r", [asking, Probe("B", value: "b")])
            var saves: [PreservationResult?] = []
            asking.whenEncoded = {
                // Once: the other engine's save, were it not refused, would encode this again.
                asking.whenEncoded = nil
                saves.append(try? other.preserve([root]))
            }
            #expect(try engine.preserve([root]).save?.generation == 1)
            asking.whenEncoded = nil
            #expect(saves.map { $0?.vetoReason } == ["the archive is being saved already, and the save under way writes the tree"])
            #expect(try store.generations().map(\.generation) == [1])
        }
    }

    // MARK: R5 gates

    @Test func R5_saveGateWritesAppValuesIntoTheHeader() throws {
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            engine.saveGate = { values in
                values["MyAppVersion"] = .double(11.0)
                return .save
            }
            try engine.preserve([Probe("Root")])
            let header = try #require(try store.header())
            #expect(header.appValues["MyAppVersion"] == .double(11.0))
            #expect(header.appVersion == "11.0" && header.appBuild == "1024" && header.idiom == "phone")
        }
    }

    @Test func R5_saveGateVetoKeepsThePreviousGeneration() throws {
        try withTemporaryStore { store in
            let engine = try makeEngine(store)
            let root = Probe("Root", value: "first")
            try engine.preserve([root])
            engine.saveGate = { _ in .veto(reason: "a payment sheet is open") }
            root.value = "second"
            let result = try engine.preserve([root])
            #expect(result.save == nil)
            #expect(result.vetoReason == "a payment sheet is open")
            #expect(try store.header()?.generation == 1)
        }
    }

    /// A restore gate that saves the archive it is asked about (to keep the app's fresh
    /// start, say) gets nothing saved: the tree it would save is not restored yet, and the
    /// next launch would restore that in place of what was saved.
    @Test func R5_aSaveAskedForByTheRestoreGateSavesNothing() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([Probe("Root", value: "saved", [Probe("A", value: "a")])])
            let engine = try makeEngine(store)
            let root = Probe("Root", value: "initial", [Probe("A", value: "initial")])
            var saves: [PreservationResult?] = []
            engine.restoreGate = { header, app in
                saves.append(try? engine.preserve([root]))
                return .standard(for: header, app: app)
            }
            let result = try engine.restore([root])
            // The gate holds the engine: the test lets go of it.
            engine.restoreGate = RestoreDecision.standard(for:app:)
            #expect(result.report.outcome == .restored && root.value == "saved")
            #expect(saves.map { $0?.save } == [nil])
            #expect(saves.first??.vetoReason?.hasPrefix("the archive is being restored") == true)
            #expect(try store.header()?.generation == 1)
        }
    }

    @Test func R5_restoreGateRefusalIsRecordedAndTouchesNoObject() throws {
        try withTemporaryStore { store in
            let saver = try makeEngine(store)
            saver.saveGate = { values in
                values["MyAppVersion"] = .double(10.0)
                return .save
            }
            try saver.preserve([Probe("Root", value: "saved")])

            let engine = try makeEngine(store)
            engine.restoreGate = { header, app in
                guard case .double(let version)? = header.appValues["MyAppVersion"], version >= 11 else {
                    return .refuse(reason: "saved before version 11")
                }
                return .standard(for: header, app: app)
            }
            let root = Probe("Root", value: "fresh")
            let result = try engine.restore([root])
            #expect(result.report.outcome == .refused(reason: "saved before version 11"))
            #expect(result.objects.isEmpty)
            #expect(root.decodeCount == 0 && root.value == "fresh")
            #expect(try store.restoreReports().map(\.outcome) == [.refused(reason: "saved before version 11")])
        }
    }

    @Test(arguments: [
        (AppIdentity(version: "12.0", build: "1024", platform: "linux", idiom: "phone"), "app version 11.0"),
        (AppIdentity(version: "11.0", build: "1024", platform: "macos", idiom: "phone"), "on linux"),
        (AppIdentity(version: "11.0", build: "1024", platform: "linux", idiom: "pad"), "idiom 'phone'"),
    ])
    func R5_defaultRestoreGateNeedsTheSameVersionPlatformAndIdiom(app: AppIdentity, reason: String) throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([Probe("Root", value: "saved")])
            let root = Probe("Root")
            let engine = try RestorationEngine(store: store, app: app, registry: RestorationRegistry())
            let result = try engine.restore([root])
            guard case .refused(let refusal) = result.report.outcome else {
                Issue.record("expected a refusal, got \(result.report.outcome)")
                return
            }
            #expect(refusal.contains(reason))
            #expect(root.decodeCount == 0)
            // The same build that saved restores (a different build number is fine).
            let same = AppIdentity(version: "11.0", build: "1025", platform: "linux", idiom: "phone")
            let restored = try RestorationEngine(store: store, app: same, registry: RestorationRegistry()).restore([root])
            #expect(restored.report.outcome == .restored)
        }
    }

    @Test func R5_defaultRestoreGateRefusesANewerStoreFormat() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([Probe("Root")])
            var header = try #require(try store.header())
            #expect(RestoreDecision.standard(for: header, app: SampleArchives.app) == .restore)
            header.storeFormat = ArchiveStore.storeFormat + 1
            guard case .refuse(let reason) = RestoreDecision.standard(for: header, app: SampleArchives.app) else {
                Issue.record("a newer store format must be refused")
                return
            }
            #expect(reason.contains("store format \(ArchiveStore.storeFormat + 1)"))
        }
    }
}
