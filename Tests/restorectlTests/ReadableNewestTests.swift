import RestorationArchive
import Testing

@testable import restorectl

/// `Diagnostics.readableNewest(_:_:)`, which `events` and `report` read a damaged journal
/// and damaged restore reports through: the items newer than the newest damaged one.
@Suite("restorectl: the newest items that can be read")
struct ReadableNewestTests {
    /// Items `0` (the oldest) to `count - 1`, item `damaged` damaged (none when `nil`): the
    /// items read, the damage named, and how many reads it took.
    private func readableNewest(count: Int, damaged: Int?) throws -> (items: [Int], named: Int, reads: Int) {
        var reads = 0
        var unreadable: [ArchiveStoreError] = []
        let items = try Diagnostics.readableNewest(&unreadable) { (limit) throws(ArchiveStoreError) -> [Int] in
            reads += 1
            // The newest `limit` items, oldest first, as the store's reads give them.
            let first = limit.map { max(0, count - $0) } ?? 0
            if let damaged, damaged >= first { throw .damagedHistory("a journal entry has an unknown event") }
            return Array(first..<count)
        }
        return (items, unreadable.count, reads)
    }

    /// Whatever the number of items and the place of the damaged one, every item after it is
    /// read, and none before: a search that stopped with two limits still to tell apart (the
    /// newest 4 read, the newest 6 not) gave 4 items where 5 could be read. The reads stay
    /// few: a doubling, then a halving.
    @Test func everyItemAfterTheDamagedOneIsRead() throws {
        for count in 1...40 {
            let halvings = Int.bitWidth - count.leadingZeroBitCount
            for damaged in 0..<count {
                let found = try readableNewest(count: count, damaged: damaged)
                #expect(found.items == Array(damaged + 1..<count), "\(count) items, item \(damaged) damaged")
                #expect(found.named == 1)
                #expect(found.reads <= 2 + 2 * halvings, "\(count) items, item \(damaged) damaged: \(found.reads) reads")
            }
        }
    }

    /// Without damage, one read of every item, and nothing named.
    @Test func withoutDamageEveryItemIsReadAtOnce() throws {
        for count in [0, 1, 7, 40] {
            let found = try readableNewest(count: count, damaged: nil)
            #expect(found.items == Array(0..<count) && found.named == 0 && found.reads == 1)
        }
    }
}
