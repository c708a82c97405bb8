import RestorationArchive
import Testing
import TestSupport
@testable import restorectl

/// `restorectl tree`'s text: each node indented under its parent.
@Suite("restorectl: the tree as text")
struct TreeTextTests {
    /// Sorted by their bytes, `Menu#2` and `Menu-x` come between `Menu` and `Menu/Detail` ("#"
    /// and "-" sort before "/"): indented in that order, `Detail` read as `Menu-x`'s child.
    @Test func eachNodeComesRightAfterItsParent() throws {
        try withTemporaryStore { store in
            let paths = ["Nav", "Nav/Menu", "Nav/Menu/Detail", "Nav/Menu#2", "Nav/Menu-x", "Nav/Menu-x/Photo"]
            try store.save(
                try paths.map { ArchivedNode(path: try RestorationPath(parsing: $0), className: "Screen", state: try StateValue.encode([:])) },
                header: SampleArchives.header)
            let lines = TreeCommand.text(try #require(try store.snapshot())).split(separator: "\n").dropFirst()
            #expect(
                lines.map { $0.prefix { $0 != "," } } == [
                    "  Nav  Screen v0", "    Menu  Screen v0", "      Detail  Screen v0", "    Menu#2  Screen v0",
                    "    Menu-x  Screen v0", "      Photo  Screen v0",
                ])
        }
    }
}
