import Foundation
import TestSupport

/// The Swift blocks of one of the package's Markdown documents, or of the documentation
/// comments of its sources, checked against the test files that compile and run them: the
/// code a reader copies is code the tests build.
///
/// A block is in a file word for word when its lines are, in order, indentation aside. The
/// block may be cut at its blank lines, each piece a run of consecutive lines of the file, so
/// that a test can run a block's paragraphs in steps and check what each did. A line of a
/// file that must differ from the document (a temporary store instead of the app's default
/// location) ends with `// as written:` and the document's line.
struct DocumentationBlocks {
    /// The lines of each ```` ```swift ```` block, trimmed.
    let blocks: [[String]]
    /// Where each block is, for messages: its number in a document, or "in" and its source file.
    private let origins: [String]
    /// Each test file's lines, trimmed, each `// as written:` line read as the document's.
    private let sources: [[String]]
    /// The test files' names, for messages.
    private let names: [String]

    /// - Parameters:
    ///   - document: the Markdown document's path from the package's root.
    ///   - testFile: the test file that holds its blocks (`#filePath`).
    ///   - otherFiles: names of test files beside it that hold some of them.
    init(of document: String, in testFile: String, _ otherFiles: String...) throws {
        let blocks = Self.swiftBlocks(in: try packageFileText(document, testFile: testFile))
        try self.init(blocks: blocks, origins: blocks.indices.map { "\($0 + 1)" }, testFile: testFile, otherFiles)
    }

    /// The Swift blocks of the documentation comments (`///`) of the package's Swift files in
    /// `folder` (`Sources`) and below, in the order of their paths.
    init(ofCommentsIn folder: String, in testFile: String, _ otherFiles: String...) throws {
        let root = try packageRoot(testFile: testFile).appendingPathComponent(folder)
        let paths = (FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".swift") }.sorted()
        var blocks: [[String]] = []
        var origins: [String] = []
        for path in paths {
            // Each run of `///` lines as Markdown, a blank line between two runs.
            let comments = try fileText(root.appendingPathComponent(path).path).lines.map { line in
                let trimmed = line.trimmed
                guard trimmed.hasPrefix("///") else { return "" }
                return String(trimmed.dropFirst(3))
            }
            let found = Self.swiftBlocks(in: comments.joined(separator: "\n"))
            blocks += found
            origins += found.map { _ in "in \(path)" }
        }
        try self.init(blocks: blocks, origins: origins, testFile: testFile, otherFiles)
    }

    private init(blocks: [[String]], origins: [String], testFile: String, _ otherFiles: [String]) throws {
        self.blocks = blocks
        self.origins = origins
        let folder = URL(fileURLWithPath: testFile).deletingLastPathComponent()
        let files = [testFile] + otherFiles.map { folder.appendingPathComponent($0).path }
        names = files.map { URL(fileURLWithPath: $0).lastPathComponent }
        sources = try files.map { file in
            try fileText(file).lines.map { line in
                guard let marker = line.range(of: "// as written: ") else { return line.trimmed }
                return line[marker.upperBound...].trimmed
            }
        }
    }

    var count: Int { blocks.count }

    /// One message for each block, but those numbered in `skipped` (from 1), that no test
    /// file holds word for word, with where the file that comes closest departs from it.
    func notWordForWord(skipping skipped: Set<Int> = []) -> [String] {
        zip(1..., zip(origins, blocks)).compactMap { number, located in
            let (origin, block) = located
            guard !skipped.contains(number) else { return nil }
            var closest: (text: String, matched: Int)?
            for (name, source) in zip(names, sources) {
                guard let difference = difference(of: block, from: source, named: name) else { return nil }
                if difference.matched > closest?.matched ?? -1 { closest = difference }
            }
            return "Swift block \(origin) (\"\(block.first ?? "")\") is not in the tests as written: \(closest?.text ?? "")"
        }
    }

    /// `nil` when each piece of `block` (its runs of lines between blank ones) is a run of
    /// consecutive lines of `source`, in the block's order; otherwise the first line `source`
    /// has differently, and how many of the block's lines come before it.
    private func difference(
        of block: [String], from source: [String], named name: String
    ) -> (text: String, matched: Int)? {
        let pieces = block.split(separator: "", omittingEmptySubsequences: true)
        var cursor = source.startIndex
        var matchedBefore = 0
        for piece in pieces {
            var closest = (start: cursor, matched: 0)
            var found: Int?
            for start in cursor..<source.endIndex {
                let matched = zip(piece, source[start...]).prefix { $0 == $1 }.count
                if matched == piece.count {
                    found = start
                    break
                }
                if matched > closest.matched { closest = (start, matched) }
            }
            guard let found else {
                let expected = piece[piece.startIndex + closest.matched]
                let at = closest.start + closest.matched
                let matched = matchedBefore + closest.matched
                guard closest.matched > 0, at < source.count else {
                    return ("\"\(expected)\" is not in \(name) (after the block's lines before it)", matched)
                }
                return ("\"\(expected)\" reads \"\(source[at])\" in \(name)", matched)
            }
            cursor = found + piece.count
            matchedBefore += piece.count
        }
        return nil
    }

    private static func swiftBlocks(in markdown: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in markdown.lines {
            if current == nil {
                if line.trimmed == "```swift" { current = [] }
            } else if line.trimmed == "```" {
                blocks.append(current ?? [])
                current = nil
            } else {
                current?.append(line.trimmed)
            }
        }
        return blocks
    }
}

extension StringProtocol {
    fileprivate var lines: [SubSequence] { split(separator: "\n", omittingEmptySubsequences: false) }
    fileprivate var trimmed: String { String(self).trimmingCharacters(in: .whitespaces) }
}
