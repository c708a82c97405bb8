import Logging
import RestorationArchive
import Testing
import TestSupport

/// How restoration finds objects and decodes them: DESIGN §3 R6, R7, R8 and R12.
@Suite("Engine lookup rules")
struct EngineLookupRuleTests {
    /// Saves a root `Root` holding one `Probe` at `Root/Screen` with the value "saved".
    private func saveScreen(_ store: ArchiveStore, _ screen: Probe = Probe("Screen", value: "saved")) throws {
        try makeEngine(store).preserve([Probe("Root", value: "root", [screen])])
    }

    private func outcome(_ result: RestorationResult, _ path: String) throws -> RestoreReport.NodeOutcome? {
        let path = try RestorationPath.text(path)
        return result.report.nodes.first { $0.path == path }?.outcome
    }

    // MARK: R6 lookup order

    @Test func R6_restorationClassComesFirst() throws {
        try withTemporaryStore { store in
            try saveScreen(store)
            var asked: [String] = []
            var registry = RestorationRegistry()
            try registry.register(Probe.self) { request in
                asked.append("class \(request.path)")
                return request.path.depth == 2 ? Probe("Screen") : nil
            }
            registry.fallback = { request in
                asked.append("fallback \(request.path)")
                return nil
            }
            let existing = Probe("Screen")
            let result = try makeEngine(store, registry: registry).restore([Probe("Root", [existing])])
            // The root declined: nothing else is asked for it, and the screen below it has no
            // parent to go to, so it is not created at all.
            #expect(asked == ["class Root"])
            #expect(try outcome(result, "Root") == .skipped(.declined))
            #expect(try outcome(result, "Root/Screen") == .skipped(.parentNotRestored))
            #expect(existing.decodeCount == 0)
        }
    }

    @Test func R6_declinedRestorationClassStopsLookup() throws {
        try withTemporaryStore { store in
            try saveScreen(store)
            var fallbackAsked = false
            var registry = RestorationRegistry()
            try registry.register(Probe.self) { request in request.path.depth == 1 ? Probe("Root") : nil }
            registry.fallback = { _ in
                fallbackAsked = true
                return Probe("Screen")
            }
            let existing = Probe("Screen")
            let result = try makeEngine(store, registry: registry).restore([Probe("Root", [existing])])
            #expect(try outcome(result, "Root") == .restored)
            #expect(try outcome(result, "Root/Screen") == .skipped(.declined))
            #expect(!fallbackAsked, "no fallback after a restoration class declined")
            #expect(existing.decodeCount == 0, "no existing object after a restoration class declined")
        }
    }

    @Test func R6_fallbackIsAskedBeforeExistingObjects() throws {
        try withTemporaryStore { store in
            try saveScreen(store)
            var registry = RestorationRegistry()
            let made = Probe("Screen")
            registry.fallback = { request in request.className == "Probe" && request.path.depth == 2 ? made : nil }
            let existing = Probe("Screen")
            let root = Probe("Root", [existing])
            let result = try makeEngine(store, registry: registry).restore([root])
            #expect(result.report.notRestored.isEmpty)
            #expect(made.value == "saved" && existing.decodeCount == 0)
            #expect(root.restoredChildren.first === made)
        }
    }

    /// A fallback that throws fails its node, with the error's description: no existing
    /// object is tried for it, and the nodes below it have no parent to go to.
    @Test func R6_aFallbackThatThrowsFailsItsNode() throws {
        try withTemporaryStore { store in
            try saveScreen(store, Probe("Screen", value: "saved", [Probe("Detail", value: "detail")]))
            struct PageGone: Error, CustomStringConvertible { var description: String { "the page is gone" } }
            var registry = RestorationRegistry()
            registry.fallback = { request in
                if request.path.depth == 2 { throw PageGone() }
                return nil
            }
            let detail = Probe("Detail")
            let existing = Probe("Screen", [detail])
            let root = Probe("Root", [existing])
            let result = try makeEngine(store, registry: registry).restore([root])
            #expect(try outcome(result, "Root") == .restored)
            #expect(try outcome(result, "Root/Screen") == .failed(.decodeFailed("the page is gone")))
            #expect(try outcome(result, "Root/Screen/Detail") == .skipped(.parentNotRestored))
            #expect(existing.decodeCount == 0 && detail.decodeCount == 0)
            #expect(root.restoredChildren.isEmpty)
        }
    }

    /// A restoration class that throws fails its node, with the error's description
    /// (`register(_:aliases:restore:)`'s documentation): it does not decline it, no fallback
    /// or existing object is tried for it, and the nodes below it have no parent to go to.
    @Test func R6_aRestorationClassThatThrowsFailsItsNode() throws {
        try withTemporaryStore { store in
            try saveScreen(store, Probe("Screen", value: "saved", [Probe("Detail", value: "detail")]))
            struct PageGone: Error, CustomStringConvertible { var description: String { "the page is gone" } }
            var registry = RestorationRegistry()
            try registry.register(Probe.self) { request in
                if request.path.depth == 2 { throw PageGone() }
                return request.path.depth == 1 ? Probe("Root") : nil
            }
            var fallbackAsked = 0
            registry.fallback = { _ in
                fallbackAsked += 1
                return nil
            }
            let detail = Probe("Detail")
            let existing = Probe("Screen", [detail])
            let result = try makeEngine(store, registry: registry).restore([Probe("Root", [existing])])
            #expect(try outcome(result, "Root") == .restored)
            #expect(try outcome(result, "Root/Screen") == .failed(.decodeFailed("the page is gone")))
            #expect(try outcome(result, "Root/Screen/Detail") == .skipped(.parentNotRestored))
            #expect(fallbackAsked == 0 && existing.decodeCount == 0 && detail.decodeCount == 0)
            #expect(result.objects.count == 1)
        }
    }

    @Test func R6_existingObjectIsFoundByPathWhenNothingElseProvidesIt() throws {
        try withTemporaryStore { store in
            try saveScreen(store)
            let existing = Probe("Screen")
            let root = Probe("Root", [existing])
            let result = try makeEngine(store).restore([root])
            #expect(result.report.notRestored.isEmpty)
            #expect(root.value == "root" && existing.value == "saved")
            #expect(result.object(at: try .text("Root/Screen")) === existing)

            // Without an object at that path, nothing provides it.
            let bare = try makeEngine(store).restore([Probe("Root")])
            #expect(try outcome(bare, "Root/Screen") == .skipped(.noRestorationClass))
        }
    }

    @Test func R6_typeWithRestorationClassIsNeverFoundImplicitly() throws {
        try withTemporaryStore { store in
            try saveScreen(store)
            // SpecialProbe objects are only ever made by their restoration class; one that
            // happens to sit at the archived path is not taken for the archived Probe.
            var registry = RestorationRegistry()
            try registry.register(Probe.self)
            try registry.register(SpecialProbe.self) { _ in SpecialProbe("Screen") }
            let existing = SpecialProbe("Screen")
            let result = try makeEngine(store, registry: registry).restore([Probe("Root", [existing])])
            #expect(try outcome(result, "Root/Screen") == .skipped(.noRestorationClass))
            #expect(existing.decodeCount == 0)
        }
    }

    // MARK: R7 class mismatch

    @Test func R7_objectOfAnotherClassDoesNotDecodeTheState() throws {
        try withTemporaryStore { store in
            try saveScreen(store)
            let impostor = OtherProbe("Screen", value: "untouched")
            let result = try makeEngine(store).restore([Probe("Root", [impostor])])
            #expect(try outcome(result, "Root/Screen") == .skipped(.classMismatch(found: "OtherProbe")))
            #expect(impostor.decodeCount == 0 && impostor.value == "untouched")
            #expect(result.object(at: try .text("Root/Screen")) == nil)
        }
    }

    @Test func R7_registeredSubclassAndAliasAreAccepted() throws {
        try withTemporaryStore { store in
            try saveScreen(store)
            // A subclass of the registered archived class takes its state.
            var registry = RestorationRegistry()
            try registry.register(Probe.self)
            let subclass = SpecialProbe("Screen")
            let result = try makeEngine(store, registry: registry).restore([Probe("Root", [subclass])])
            #expect(try outcome(result, "Root/Screen") == .restored)
            #expect(subclass.value == "saved")

            // A type renamed since the save finds its old name through an alias.
            var renamed = RestorationRegistry()
            try renamed.register(OtherProbe.self, aliases: ["Probe"])
            let other = OtherProbe("Screen")
            let aliased = try makeEngine(store, registry: renamed).restore([OtherProbe("Root", [other])])
            #expect(aliased.report.notRestored.isEmpty)
            #expect(other.value == "saved")
        }
    }

    /// An alias makes the two names one class both ways: an object whose type still declares
    /// the old name takes state archived under the new one.
    @Test func R7_anObjectOfAnAliasedNameTakesStateArchivedUnderTheCurrentName() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([OtherProbe("Root", value: "root", [OtherProbe("Screen", value: "saved")])])
            var registry = RestorationRegistry()
            try registry.register(OtherProbe.self, aliases: ["Probe"])
            let screen = Probe("Screen")
            let result = try makeEngine(store, registry: registry).restore([Probe("Root", [screen])])
            #expect(result.report.notRestored.isEmpty)
            #expect(try outcome(result, "Root/Screen") == .restored)
            #expect(screen.value == "saved")
        }
    }

    /// Nodes of several classes in turn, one registered under an alias and one not registered
    /// at all: each node gets its own class's restoration class (the walk keeps the last
    /// registration it looked up, for runs of one class), or the fallback.
    @Test func R6_eachNodeGetsItsOwnClassesRegistrationWhenClassesAlternate() throws {
        try withTemporaryStore { store in
            let saved = Probe("Root", value: "root", [
                OtherProbe("A", value: "a", [Probe("A1", value: "a1"), Probe("A2", value: "a2")]),
                SpecialProbe("B", value: "b"), OtherProbe("C", value: "c"), Probe("D", value: "d"),
                SpecialProbe("E", value: "e"), SpecialProbe("F", value: "f"),
            ])
            try makeEngine(store).preserve([saved])
            var asked: [String] = []
            var registry = RestorationRegistry()
            try registry.register(Probe.self) { request in
                asked.append("Probe \(request.path)")
                return Probe(request.path.identifier)
            }
            // OtherProbe's nodes were archived as "OtherProbe"; a renamed type takes them.
            try registry.register(RenamedProbe.self, aliases: ["OtherProbe"]) { request in
                asked.append("Renamed \(request.path)")
                return RenamedProbe(request.path.identifier)
            }
            registry.fallback = { request in
                asked.append("fallback \(request.path) \(request.className)")
                return SpecialProbe(request.path.identifier)
            }
            let result = try makeEngine(store, registry: registry).restore([])
            #expect(result.report.notRestored.isEmpty)
            #expect(asked == [
                "Probe Root", "Renamed Root/A", "Probe Root/A/A1", "Probe Root/A/A2", "fallback Root/B SpecialProbe",
                "Renamed Root/C", "Probe Root/D", "fallback Root/E SpecialProbe", "fallback Root/F SpecialProbe",
            ])
            let types = try ["Root", "Root/A", "Root/A/A1", "Root/B", "Root/C", "Root/D", "Root/F"].map { path in
                result.object(at: try RestorationPath.text(path)).map { String(describing: type(of: $0)) }
            }
            #expect(types == ["Probe", "RenamedProbe", "Probe", "SpecialProbe", "RenamedProbe", "Probe", "SpecialProbe"])
            #expect((result.object(at: try RestorationPath.text("Root/C")) as? Probe)?.value == "c")
        }
    }

    @Test func R7_registryRefusesConflictingNames() throws {
        var registry = RestorationRegistry()
        try registry.register(Probe.self)
        #expect(throws: RestorationError.conflictingRegistration("Probe")) { try registry.register(Probe.self) }
        #expect(throws: RestorationError.conflictingRegistration("Probe")) {
            try registry.register(OtherProbe.self, aliases: ["Probe"])
        }
    }

    // MARK: R8 order

    @Test func R8_parentsDecodeBeforeChildrenAndEveryObjectFinishesAfterAllDecoded() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([Probe("A", [Probe("B", [Probe("C")]), Probe("D")])])
            let log = EventLog()
            let objects = [Probe("A", log: log, [Probe("B", log: log, [Probe("C", log: log)]), Probe("D", log: log)])]
            let result = try makeEngine(store).restore(objects)
            #expect(result.report.restoredCount == 4)
            #expect(log.events == [
                "decode A", "decode A/B", "decode A/B/C", "decode A/D",
                "finish A", "finish B", "finish C", "finish D",
            ])
        }
    }

    /// Each node finds its parent's object past paths that sort between the two ('-' and '.'
    /// come before '/', and "A/Bz" begins with "A/B"'s bytes), and the subtree of a node that
    /// got no object is skipped, siblings and cousins restored.
    @Test func R8_everyNodeFindsItsParentsObjectAndADeclinedNodesSubtreeIsSkipped() throws {
        try withTemporaryStore { store in
            let tree = [
                Probe("A", value: "a", [
                    Probe("B", value: "b", [Probe("C", value: "c")]), Probe("Bz", value: "bz", [Probe("C", value: "bzc")]),
                ]),
                Probe("A-x", value: "ax", [Probe("q", value: "axq", [Probe("r", value: "axqr")])]),
                Probe("A.y", value: "ay", [Probe("C", value: "ayc")]),
            ]
            try makeEngine(store).preserve(tree)
            var registry = RestorationRegistry()
            var made: [String: Probe] = [:]
            registry.fallback = { request in
                guard request.path.description != "A-x/q" else { return nil }
                let probe = Probe(request.path.identifiers.last)
                made[request.path.description] = probe
                return probe
            }
            let result = try makeEngine(store, registry: registry).restore([])
            #expect(result.report.nodes.map(\.path.description) == [
                "A", "A-x", "A-x/q", "A-x/q/r", "A.y", "A.y/C", "A/B", "A/B/C", "A/Bz", "A/Bz/C",
            ])
            #expect(try outcome(result, "A-x/q") == .skipped(.noRestorationClass))
            #expect(try outcome(result, "A-x/q/r") == .skipped(.parentNotRestored))
            #expect(result.report.restoredCount == 8)
            for (path, value) in ["A": "a", "A/B/C": "c", "A/Bz/C": "bzc", "A-x": "ax", "A.y/C": "ayc"] {
                #expect(made[path]?.value == value, "\(path)")
            }
            // Each object got its own children.
            func children(_ path: String) -> [String] {
                (made[path]?.restoredChildren ?? []).compactMap { ($0 as? Probe)?.value }
            }
            #expect(children("A") == ["b", "bz"])
            #expect(children("A/B") == ["c"])
            #expect(children("A/Bz") == ["bzc"])
            #expect(children("A.y") == ["ayc"])
        }
    }

    /// Paths that are not all ASCII: each node finds its parent too (by path, as strings).
    @Test func R8_nodesWhosePathsAreNotASCIIFindTheirParents() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([
                Probe("caf\u{E9}", value: "caf\u{E9}", [Probe("men\u{FC}", value: "men\u{FC}", [Probe("\u{1F375}", value: "tea")])]),
                Probe("cafe", value: "cafe", [Probe("menu", value: "menu")]),
            ])
            var registry = RestorationRegistry()
            var made: [String: Probe] = [:]
            registry.fallback = { request in
                let probe = Probe(request.path.identifiers.last)
                made[request.path.description] = probe
                return probe
            }
            let result = try makeEngine(store, registry: registry).restore([])
            #expect(result.report.restoredCount == 5)
            func children(_ path: String) -> [String] {
                (made[path]?.restoredChildren ?? []).compactMap { ($0 as? Probe)?.value }
            }
            #expect(children("caf\u{E9}") == ["men\u{FC}"])
            #expect(children("caf\u{E9}/men\u{FC}") == ["tea"])
            #expect(children("cafe") == ["menu"])
        }
    }

    /// An object that asks for a save as it is restored (a view model that saves on every
    /// change, say) gets nothing saved, from its decode or from `restorationDidFinish()`:
    /// its sibling, decoded after it, would be saved in its initial state, and that is what
    /// the next launch would restore. The save gate is not asked; a save of another archive
    /// goes ahead, and once `restore` has returned the archive saves again.
    @Test func R8_aSaveAskedForWhileTheArchiveIsBeingRestoredSavesNothing() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([Probe("Root", value: "r", [Probe("A", value: "a"), Probe("B", value: "b")])])
            let sink = LogSink()
            let engine = try RestorationEngine(
                store: store, app: SampleArchives.app,
                registry: RestorationRegistry(), logger: Logger(label: "test") { _ in sink })
            var gateAsked = 0
            engine.saveGate = { _ in
                gateAsked += 1
                return .save
            }
            let other = try ArchiveName("other")
            let asking = SavingProbe("A", value: "initial")
            let sibling = Probe("B", value: "initial")
            let root = Probe("Root", value: "initial", [asking, sibling])
            var saves: [PreservationResult?] = []
            asking.whenDecoded = {
                saves.append(try? engine.preserve([root]))
                saves.append(try? engine.preserve([root], in: other))
            }
            asking.whenFinished = { saves.append(try? engine.preserve([root])) }
            let result = try engine.restore([root])
            asking.whenDecoded = nil
            asking.whenFinished = nil
            #expect(result.report.restoredCount == 3)
            #expect([root.value, asking.value, sibling.value] == ["r", "a", "b"])
            let reason = "the archive is being restored, and objects not restored yet would be saved in their initial state"
            #expect(saves.map { $0?.vetoReason } == [reason, nil, reason])
            #expect(saves.map { $0?.save?.generation } == [nil, 1, nil])
            #expect(gateAsked == 1)
            #expect(sink.messages.filter { $0.contains("refused") } == Array(repeating: "Save of archive 'main' refused: \(reason)", count: 2))
            #expect(try store.header()?.generation == 1)

            let nextSibling = Probe("B")
            _ = try makeEngine(store).restore([Probe("Root", [Probe("A"), nextSibling])])
            #expect(nextSibling.value == "b")

            sibling.value = "changed"
            let after = try engine.preserve([root])
            #expect(after.save?.generation == 2 && after.save?.kind == .incremental && after.nodesWritten == 1)
        }
    }

    /// The refusal is the process's, not one engine's: a save asked for in the middle of a
    /// restoration through another engine on the same store file (an app that makes an engine
    /// for each save, or opened the store twice) saved the tree half restored, as the
    /// restoring engine's own save did before it refused.
    @Test func R8_aSaveAskedThroughAnotherEngineWhileTheArchiveIsBeingRestoredSavesNothing() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "r", [Probe("A", value: "a"), Probe("B", value: "b")])])
            let restoring = try makeEngine(store)
            let sameStore = try makeEngine(store)
            let sameFile = try makeEngine(try ArchiveStore(path: path))
            let asking = SavingProbe("A", value: "initial")
            let sibling = Probe("B", value: "initial")
            let root = Probe("Root", value: "initial", [asking, sibling])
            var saves: [PreservationResult?] = []
            asking.whenDecoded = {
                saves.append(try? sameStore.preserve([root]))
                saves.append(try? sameFile.preserve([root]))
            }
            #expect(try restoring.restore([root]).report.restoredCount == 3)
            asking.whenDecoded = nil
            let reason = "the archive is being restored, and objects not restored yet would be saved in their initial state"
            #expect(saves.map { $0?.vetoReason } == [reason, reason])
            #expect(try store.header()?.generation == 1)

            let nextSibling = Probe("B")
            _ = try makeEngine(store).restore([Probe("Root", [Probe("A"), nextSibling])])
            #expect(nextSibling.value == "b")
        }
    }

    /// A restoration nested in another, of the same archive (an object that restores it again
    /// from its decode: refused, the outer one being in progress), puts back the outer one's
    /// work as it returns: a save asked for after it, still in the middle of the outer
    /// restoration, is refused as one asked before it.
    @Test func R8_aRestorationNestedInAnotherLeavesTheOuterOneRefusingSaves() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([Probe("Root", value: "r", [Probe("A", value: "a"), Probe("B", value: "b")])])
            let engine = try makeEngine(store)
            let asking = SavingProbe("A", value: "initial")
            let sibling = Probe("B", value: "initial")
            let root = Probe("Root", value: "initial", [asking, sibling])
            var nested: RestorationResult?
            var saves: [PreservationResult?] = []
            asking.whenDecoded = {
                saves.append(try? engine.preserve([root]))
                nested = try makeEngine(store).restore([Probe("Root", [Probe("A"), Probe("B")])])
                saves.append(try? engine.preserve([root]))
            }
            #expect(try engine.restore([root]).report.restoredCount == 3)
            asking.whenDecoded = nil
            #expect(nested?.report.outcome == .refused(reason: "its restoration in this process is still in progress"))
            let reason = "the archive is being restored, and objects not restored yet would be saved in their initial state"
            #expect(saves.map { $0?.vetoReason } == [reason, reason])
            #expect(try store.header()?.generation == 1)
            #expect(try engine.preserve([root]).save?.generation == 2)
        }
    }

    /// The refusal is by store file: a save of an archive of the same name into another store
    /// file, asked for in the middle of a restoration on its thread, writes none of the tree
    /// being restored into this file, and goes ahead.
    @Test func R8_aSaveIntoAnotherStoreFileWhileAnArchiveOfItsNameIsBeingRestoredGoesAhead() throws {
        try withTemporaryStore { store in
            try withTemporaryStore { otherStore in
                try makeEngine(store).preserve([Probe("Root", value: "r", [Probe("A", value: "a")])])
                let asking = SavingProbe("A", value: "initial")
                let root = Probe("Root", value: "initial", [asking])
                var saved: PreservationResult?
                asking.whenDecoded = { saved = try makeEngine(otherStore).preserve([Probe("Root", value: "elsewhere")]) }
                #expect(try makeEngine(store).restore([root]).report.restoredCount == 2)
                asking.whenDecoded = nil
                #expect(saved?.vetoReason == nil)
                #expect(saved?.save?.generation == 1)
                #expect(try otherStore.header()?.generation == 1)
                #expect(try store.header()?.generation == 1)
            }
        }
    }

    /// What is refused is a save nested in the restoration, on its thread: an engine on
    /// another thread saving the same archive meanwhile saves (the app's own tree, not the
    /// one being restored), as it did before the refusal was the process's.
    @Test func R8_aSaveOnAnotherThreadWhileTheArchiveIsBeingRestoredGoesAhead() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try makeEngine(store).preserve([Probe("Root", value: "r", [Probe("A", value: "a")])])
            let asking = SavingProbe("A", value: "initial")
            let root = Probe("Root", value: "initial", [asking])
            var saved: Generation? = nil
            asking.whenDecoded = {
                saved = onAnotherThread {
                    try makeEngine(try ArchiveStore(path: path)).preserve([Probe("Root", value: "elsewhere")]).save?.generation
                } ?? nil
            }
            #expect(try makeEngine(store).restore([root]).report.restoredCount == 2)
            asking.whenDecoded = nil
            #expect(saved == 2)
            #expect(try store.header()?.generation == 2)
        }
    }

    // MARK: R12 class versions

    @Test func R12_nodeFromANewerClassVersionIsSkipped() throws {
        try withTemporaryStore { store in
            let newer = NoteV2()
            newer.name = "from the future"
            try makeEngine(store).preserve([newer])
            // The app was downgraded: its Note is version 1.
            var registry = RestorationRegistry()
            try registry.register(NoteV1.self) { _ in NoteV1(title: "") }
            let result = try makeEngine(store, registry: registry).restore([])
            #expect(result.report.nodes.map(\.outcome) == [.skipped(.versionTooNew(supported: 1))])
            #expect(result.objects.isEmpty)
        }
    }

    @Test func R12_nodeFromAnOlderClassVersionGoesThroughTheMigration() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([NoteV1(title: "groceries")])
            #expect(try store.snapshot()?.nodes.first?.classVersion == 1)
            var registry = RestorationRegistry()
            try registry.register(NoteV2.self) { request in
                let note = NoteV2()
                // The restoration class already sees the migrated state.
                #expect(request.coder.contains("name") && request.classVersion == 1)
                return note
            }
            let result = try makeEngine(store, registry: registry).restore([])
            #expect(result.report.notRestored.isEmpty)
            #expect((result.roots.first as? NoteV2)?.name == "groceries")
            // The existing-object path migrates too.
            let existing = NoteV2()
            _ = try makeEngine(store).restore([existing])
            #expect(existing.name == "groceries")
        }
    }

    /// A migration that throws (R12; `migrateRestorableState`'s documentation: the node is
    /// then reported as failed) fails its node alone: no restoration class is asked to make
    /// it, no existing object decodes it, and the rest of the archive is restored.
    @Test func R12_aMigrationThatThrowsFailsItsNodeAlone() throws {
        try withTemporaryStore { store in
            try makeEngine(store).preserve([NoteV1(title: "groceries"), Probe("Root", value: "root")])
            let failed = RestoreReport.NodeOutcome.failed(
                .decodeFailed("migrating from class version 1: nothing reads version 1 any more"))
            var asked = 0
            var registry = RestorationRegistry()
            try registry.register(NoteV3.self) { _ in
                asked += 1
                return NoteV3()
            }
            let root = Probe("Root")
            let created = try makeEngine(store, registry: registry).restore([root])
            #expect(try outcome(created, "Note") == failed)
            #expect(asked == 0, "the restoration class was asked to make a node whose state cannot be read")
            #expect(try outcome(created, "Root") == .restored && root.value == "root")
            #expect(created.report.outcome == .restored && created.isComplete)
            #expect(try store.restoreReports().first == created.report)
            // An existing object of the class: the same, and it never decodes.
            let existing = NoteV3()
            let found = try makeEngine(store).restore([existing, Probe("Root")])
            #expect(try outcome(found, "Note") == failed)
            #expect(!existing.decoded)
        }
    }

    /// State archived by the current version of its class is decoded as it is: the migration
    /// is asked only for an older version's (`migrateRestorableState(_:from:)`'s
    /// documentation), through a restoration class and for an existing object alike.
    @Test func R12_stateOfTheCurrentClassVersionIsNotMigrated() throws {
        try withTemporaryStore { store in
            let saved = OnlyOlderMigrated()
            saved.name = "groceries"
            try makeEngine(store).preserve([saved])
            var registry = RestorationRegistry()
            try registry.register(OnlyOlderMigrated.self) { _ in OnlyOlderMigrated() }
            let created = try makeEngine(store, registry: registry).restore([])
            #expect(created.report.notRestored.isEmpty, "\(created.report.nodes)")
            #expect((created.roots.first as? OnlyOlderMigrated)?.name == "groceries")
            let existing = OnlyOlderMigrated()
            let found = try makeEngine(store).restore([existing])
            #expect(found.report.notRestored.isEmpty, "\(found.report.nodes)")
            #expect(existing.name == "groceries")
        }
    }
}

/// Version 2 of `Note` (R12), whose migration refuses to be asked for state that is not of an
/// older version.
private final class OnlyOlderMigrated: Restorable {
    static let restorationClassName = "Note"
    static let restorationClassVersion = 2
    let restorationIdentifier: String? = "Note"
    var name = ""

    struct NotOlder: Error, CustomStringConvertible {
        let version: Int
        var description: String { "asked to migrate state of version \(version)" }
    }

    static func migrateRestorableState(_ state: inout [String: StateValue], from version: Int) throws {
        guard version < restorationClassVersion else { throw NotOlder(version: version) }
        state["name"] = state.removeValue(forKey: "title")
    }
    func encodeRestorableState(with coder: StateEncoder) throws { try coder.encode(name, forKey: "name") }
    func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        name = try coder.decode(String.self, forKey: "name")
    }
}
