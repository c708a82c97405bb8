import RestorationArchive
import Testing
import TestSupport

/// A screen isolated to the main actor, as UI types are.
@MainActor
final class MainActorScreen {
    var title = ""
}

// An isolated conformance: the engine calls it only from the main actor.
extension MainActorScreen: @MainActor Restorable {
    static let restorationClassName = "MainActorScreen"
    var restorationIdentifier: String? { "Main" }

    func encodeRestorableState(with coder: StateEncoder) throws {
        try coder.encode(title, forKey: "title")
    }

    func decodeRestorableState(with coder: StateDecoder, context: RestorationContext) throws {
        title = try coder.decode(String.self, forKey: "title")
    }
}

@Suite("Main-actor objects")
struct MainActorConformanceTests {
    @MainActor
    @Test func mainActorTypesRoundTripThroughAnIsolatedConformance() throws {
        try withTemporaryStore { store in
            let screen = MainActorScreen()
            screen.title = "Orders"
            try makeEngine(store).preserve([screen])
            let fresh = MainActorScreen()
            let result = try makeEngine(store).restore([fresh])
            #expect(result.report.restoredCount == 1)
            #expect(fresh.title == "Orders")
        }
    }
}
