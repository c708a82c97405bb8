import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

@Suite("Restoration paths and archive names")
struct RestorationPathTests {
    @Test(arguments: [
        ["Tabs", "MenuNavigation", "MenuItemDetail"],
        ["a/b", "100%", "nul\0inside"],
        ["%2F", "%25", "%00"],
        ["ünï", "🍵", "\u{202E}bidi", "\u{1B}[2J"],
        [" ", "."],
        // Identifiers that begin with a combining mark, a variation selector or a joiner: with
        // the "/" before them, each is one character.
        ["a%", "\u{301}b", "\u{FE0F}", "\u{200D}x", "c"],
    ])
    func weirdIdentifiersRoundTripThroughTheTextForm(identifiers: [String]) throws {
        let path = try RestorationPath(identifiers)
        #expect(path.identifiers == identifiers)
        #expect(try RestorationPath(parsing: path.description) == path)
        #expect(try RestorationPath(parsing: path.description).identifiers == identifiers)
        #expect(!path.description.contains("\0"))
        #expect(path.description.utf8.split(separator: 0x2F, omittingEmptySubsequences: false).count == identifiers.count)
        #expect(path.identifier == identifiers.last)
        #expect(path.parent?.identifiers == (identifiers.count > 1 ? Array(identifiers.dropLast()) : nil))
    }

    /// `identifiers` and `init(parsing:)` split the text form on "/" as characters, and a "/"
    /// followed by a combining mark is one character with it: the two identifiers around it
    /// read as one. A stored path with an escape is read back through that parse, so a save of
    /// `a%` with a child `\u{301}b` was accepted, and its generation then read as damaged
    /// ("a node has an unreadable path") at every launch, never restored.
    @Test func aPathWhoseIdentifierStartsWithACombiningMarkIsStoredAndReadBack() throws {
        try withTemporaryStore { store in
            let root = try RestorationPath("a%")
            let child = try root.appending("\u{301}b")
            #expect(child.identifiers == ["a%", "\u{301}b"])
            #expect(try RestorationPath(parsing: "a%25/\u{301}b") == child)
            #expect(RestorationPath(canonicalText: child.description) == child)
            let nodes = [
                ArchivedNode(path: root, className: "Root", state: try StateEncoder().encodedBlob()),
                ArchivedNode(path: child, className: "Child", state: try StateEncoder().encodedBlob()),
            ]
            try store.save(nodes, header: SampleArchives.header)
            let snapshot = try #require(try store.snapshot())
            #expect(snapshot.nodes == nodes && snapshot.damagedPaths.isEmpty)
            #expect(try store.check().isEmpty)
        }
    }

    @Test func escapesAreExactlyThree() throws {
        #expect(try RestorationPath("a/b", "c%d", "e\0f").description == "a%2Fb/c%25d/e%00f")
        // Lower case is accepted when parsing; the text form is always upper case.
        #expect(try RestorationPath(parsing: "a%2fb").identifiers == ["a/b"])
        #expect(throws: ArchiveStoreError.self) { try RestorationPath(parsing: "a%41") }
        #expect(throws: ArchiveStoreError.self) { try RestorationPath(parsing: "a%2") }
        #expect(throws: ArchiveStoreError.self) { try RestorationPath(parsing: "a%") }
    }

    @Test func emptyTooLongAndTooDeepAreRefused() throws {
        #expect(throws: ArchiveStoreError.self) { try RestorationPath([]) }
        #expect(throws: ArchiveStoreError.self) { try RestorationPath("a", "") }
        #expect(throws: ArchiveStoreError.self) { try RestorationPath(parsing: "") }
        #expect(throws: ArchiveStoreError.self) { try RestorationPath(parsing: "a//b") }
        #expect(throws: ArchiveStoreError.self) { try RestorationPath(parsing: "/a") }
        #expect(throws: ArchiveStoreError.self) { try RestorationPath(String(repeating: "x", count: 1025)) }
        _ = try RestorationPath(String(repeating: "x", count: 1024))
        let deepest = Array(repeating: "d", count: RestorationPath.maximumDepth)
        let path = try RestorationPath(deepest)
        #expect(throws: ArchiveStoreError.self) { try path.appending("one-more") }
    }

    /// Stored paths are read with a one-pass fast route when they need no unescaping; it must
    /// accept exactly what parsing and re-printing accept, with the same identifiers.
    @Test func storedPathsReadTheSameByEitherRoute() throws {
        let long = String(repeating: "x", count: RestorationPath.maximumIdentifierLength)
        let texts = [
            "Tabs", "Tabs/Menu/Detail", "a", "é/ü/日本", "Tabs/MILK_webview", "with space/x",
            "", "/", "a/", "/a", "a//b", "a\u{0}b", "a%2Fb", "a%2fb", "a%25", "a%00b", "a%zz", "%",
            "a%25/\u{301}b", "\u{301}/\u{301}", "a/\u{301}%2F",
            long, long + "x", "a/" + long, "a/" + long + "y",
            Array(repeating: "p", count: RestorationPath.maximumDepth).joined(separator: "/"),
            Array(repeating: "p", count: RestorationPath.maximumDepth + 1).joined(separator: "/"),
        ]
        for text in texts {
            let general = (try? RestorationPath(parsing: text)).flatMap { $0.description == text ? $0 : nil }
            let stored = RestorationPath(canonicalText: text)
            #expect(stored == general, "\(text.prefix(40))")
            #expect(stored?.identifiers == general?.identifiers, "\(text.prefix(40))")
            #expect(stored?.parentDescription.map(String.init) == general?.parent?.description, "\(text.prefix(40))")
        }
    }

    @Test func parentsAndOrdering() throws {
        let detail = try RestorationPath("Tabs", "Nav/1", "Detail")
        #expect(detail.parent == (try RestorationPath("Tabs", "Nav/1")))
        #expect(detail.parent?.parent == (try RestorationPath("Tabs")))
        #expect(detail.parent?.parent?.parent == nil)
        #expect(detail.identifier == "Detail")
        #expect(detail.depth == 3)
        #expect(detail.isDescendant(of: try RestorationPath("Tabs")))
        #expect(!detail.isDescendant(of: try RestorationPath("Tab")))
        // Byte order of the text form: a parent sorts before everything below it (a subtree is
        // not contiguous: "-" sorts before "/").
        let paths = [try RestorationPath("A", "B", "C"), try RestorationPath("A", "B-x"), try RestorationPath("A", "B"), try RestorationPath("A")]
        let sorted = paths.sorted()
        #expect(sorted.map(\.description) == ["A", "A/B", "A/B-x", "A/B/C"])
        for (index, path) in sorted.enumerated() {
            for parent in sequence(first: path, next: \.parent).dropFirst() {
                #expect(sorted.firstIndex(of: parent).map { $0 < index } == true)
            }
        }
    }

    /// A path keeps only its text form: everything asked of it must answer as its identifiers
    /// would, whatever they hold (slashes, escapes, NUL, non-ASCII).
    @Test func theTextFormAnswersAsTheIdentifiersWould() throws {
        var generator = SeededGenerator(seed: 0x9A7B)
        let pieces = ["a", "Tabs", "/", "%", "%2F", "\0", "é", "日本", "-", "0"]
        func identifier() -> String {
            (0..<Int.random(in: 1...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
        }
        for _ in 0..<500 {
            let identifiers = (0..<Int.random(in: 1...6, using: &generator)).map { _ in identifier() }
            let path = try RestorationPath(identifiers)
            #expect(path.identifiers == identifiers)
            #expect(path.identifier == identifiers.last)
            #expect(path.depth == identifiers.count)
            #expect(path.parent == (identifiers.count > 1 ? try RestorationPath(Array(identifiers.dropLast())) : nil))
            #expect(path.parent?.depth == (identifiers.count > 1 ? identifiers.count - 1 : nil))
            #expect(try RestorationPath(parsing: path.description).depth == identifiers.count)
            #expect(RestorationPath(canonicalText: path.description)?.depth == identifiers.count)
            var built = try RestorationPath(identifiers[0])
            for next in identifiers.dropFirst() { built = try built.appending(next) }
            #expect(built == path && built.depth == path.depth)
            #expect(Array(built.description.utf8) == Array(path.description.utf8))
            for count in 1...identifiers.count {
                #expect(path.isDescendant(of: try RestorationPath(Array(identifiers.prefix(count)))))
                // The same identifiers in decomposed characters: the same ancestor, as paths compare.
                let decomposed = identifiers.prefix(count).map { $0.split(separator: "\u{E9}", omittingEmptySubsequences: false).joined(separator: "e\u{301}") }
                #expect(path.isDescendant(of: try RestorationPath(decomposed)))
                // The same identifiers but the last one longer, or one more: never an ancestor.
                var longer = Array(identifiers.prefix(count))
                longer[count - 1] += "x"
                #expect(!path.isDescendant(of: try RestorationPath(longer)))
                #expect(!path.isDescendant(of: try RestorationPath(identifiers + ["x"])))
            }
        }
    }

    /// Below a path is below every Unicode form of it, as paths compare (`==`), and as a
    /// save's removal of a path retires what is below any form of it: by their bytes alone, a
    /// node saved under decomposed characters was not below the composed form of its parent,
    /// though that form was equal to its parent.
    @Test func belowAPathIsBelowEveryFormOfIt() throws {
        let composed = try RestorationPath("caf\u{E9}")
        let decomposed = try RestorationPath("cafe\u{301}")
        #expect(composed == decomposed)
        for (ancestor, form) in [(composed, decomposed), (decomposed, composed)] {
            #expect(form.isDescendant(of: ancestor))
            #expect(try form.appending("menu").isDescendant(of: ancestor))
            #expect(try RestorationPath(["a/b", form.identifier, "c"]).isDescendant(of: RestorationPath(["a/b", ancestor.identifier])))
        }
        #expect(try RestorationPath("\u{212A}", "x").isDescendant(of: RestorationPath("K")))  // the Kelvin sign
        #expect(try !RestorationPath("cafe", "x").isDescendant(of: composed))
        #expect(try !RestorationPath("caf\u{E9}x", "y").isDescendant(of: decomposed))
        #expect(try !RestorationPath("cafe\u{301}\u{301}", "y").isDescendant(of: composed))
        #expect(try !RestorationPath("k", "x").isDescendant(of: RestorationPath("\u{212A}")))
        #expect(!composed.isDescendant(of: try composed.appending("menu")))
    }

    @Test func archiveNames() throws {
        #expect(ArchiveName.main.rawValue == "main")
        #expect(try ArchiveName("scene-E621E1F8").rawValue == "scene-E621E1F8")
        #expect(try ArchiveName("ünï 🍵").rawValue == "ünï 🍵")
        for bad in ["", "a\u{1B}b", "tab\t", "c1\u{9B}", String(repeating: "n", count: 257)] {
            #expect(throws: ArchiveStoreError.self) { try ArchiveName(bad) }
        }
        // Ordered by their UTF-8 bytes, as the store lists them: upper case before lower,
        // and a decomposed "é" (65 CC 81) before the composed one (C3 A9).
        let names = try ["scene-b", "Scene-z", "caf\u{E9}", "cafe\u{301}", "main"].map { try ArchiveName($0) }
        // Compared as bytes: `String`'s `==` finds the two forms of "café" equal.
        #expect(names.sorted().map { Array($0.rawValue.utf8) } == ["Scene-z", "cafe\u{301}", "caf\u{E9}", "main", "scene-b"].map { Array($0.utf8) })
    }

    /// An app keeps paths and archive names in its own `Codable` state as their text: through
    /// JSON and through the coder's `Codable` bridge they come back equal, escapes and all;
    /// text that is no path or name is refused as corrupt data, not taken.
    @Test func pathsAndArchiveNamesAreCodableAsTheirText() throws {
        struct Bookmark: Codable, Equatable {
            var path: RestorationPath
            var archive: ArchiveName
        }
        let bookmark = Bookmark(path: try RestorationPath(["Tabs", "a/b%", "caf\u{E9}\u{0}"]), archive: try ArchiveName("scene ü"))
        let json = try JSONEncoder().encode(bookmark)
        #expect(String(decoding: json, as: UTF8.self).contains(#""Tabs\/a%2Fb%25\/caf\#u{E9}%00""#))
        #expect(try JSONDecoder().decode(Bookmark.self, from: json) == bookmark)
        let encoder = StateEncoder()
        try encoder.encode(bookmark, forKey: "bookmark")
        #expect(try StateDecoder(blob: try encoder.encodedBlob()).decode(Bookmark.self, forKey: "bookmark") == bookmark)

        for (path, archive) in [("Tabs//x", "main"), ("Tabs/%41", "main"), ("Tabs", ""), ("Tabs", "a\u{1B}")] {
            let text = Data(#"{"path":"\#(path)","archive":"\#(archive)"}"#.utf8)
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(Bookmark.self, from: text) }
            let bad = StateEncoder()
            try bad.encodeNested(forKey: "bookmark") { nested in
                try nested.encode(path, forKey: "path")
                try nested.encode(archive, forKey: "archive")
            }
            let refused = #expect(throws: StateCodingError.self) {
                try StateDecoder(blob: try bad.encodedBlob()).decode(Bookmark.self, forKey: "bookmark")
            }
            let key = path == "Tabs" ? "bookmark.archive" : "bookmark.path"
            #expect(refused?.description.contains("'\(key)'") == true, "\(String(describing: refused))")
        }
    }
}
