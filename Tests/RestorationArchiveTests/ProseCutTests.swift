import Testing
import TestSupport
@testable import RestorationArchive

@Suite("Reasons kept cut")
struct ProseCutTests {
    /// Random texts of ASCII, letters of two bytes and three, combining marks (alone, they join
    /// the character before), flags, joined emoji and control characters, cut to random
    /// lengths: a text that fits is kept whole; one that does not keeps its longest prefix of
    /// whole characters (as the text itself divides them) that fits with "…" after it.
    @Test func aCutKeepsTheLongestPrefixOfWholeCharactersThatFits() {
        var random = SeededGenerator(seed: 61)
        let pieces = ["a", "Z", " ", "é", "e\u{301}", "한", "🇰🇷", "👩\u{200D}👩\u{200D}👧", "\u{301}", "\r\n", "\u{0}", "\u{1B}"]
        for trial in 0..<3_000 {
            let text = (0..<Int.random(in: 0...40, using: &random))
                .map { _ in pieces[Int.random(in: 0..<pieces.count, using: &random)] }.joined()
            let limit = Int.random(in: 3...100, using: &random)
            let cut = UTF8Text.prose(text, upTo: limit)
            guard text.utf8.count > limit else {
                #expect(cut == text, "trial \(trial)")
                continue
            }
            let ellipsis = "\u{2026}"
            #expect(cut.utf8.count <= limit, "trial \(trial)")
            #expect(cut.utf8.reversed().starts(with: ellipsis.utf8.reversed()), "trial \(trial)")
            let kept = Array(cut.utf8.dropLast(ellipsis.utf8.count))
            #expect(text.utf8.starts(with: kept), "trial \(trial)")
            let boundaries = text.indices.map { text.utf8.distance(from: text.startIndex, to: $0) }
            guard let position = boundaries.firstIndex(of: kept.count) else {
                Issue.record("trial \(trial): the cut is not between two of the text's characters")
                continue
            }
            let next = text[text.indices[text.indices.index(text.indices.startIndex, offsetBy: position)]]
            #expect(kept.count + String(next).utf8.count + ellipsis.utf8.count > limit, "trial \(trial): the next character fitted")
        }
    }
}
