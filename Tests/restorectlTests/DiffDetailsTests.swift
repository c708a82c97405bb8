import Foundation
import RestorationArchive
import Testing
import TestSupport
@testable import restorectl

/// Which keys `restorectl diff` names for a changed node.
@Suite("restorectl: what diff names")
struct DiffDetailsTests {
    /// Keys are compared as they were written: a NaN kept is not a change (NaN is unequal to
    /// itself), and `0.0` becoming `-0.0` is one (the two are `==`).
    @Test func keysAreComparedAsWritten() throws {
        try withTemporaryStore { store in
            func node(_ values: [String: StateValue]) throws -> ArchivedNode {
                ArchivedNode(path: try RestorationPath("Root"), className: "Screen", state: try StateValue.encode(values))
            }
            let first = try store.save(
                [try node(["kept": .double(.nan), "zero": .double(0), "same": .int(1)])], header: SampleArchives.header)
            let second = try store.save(
                [try node(["kept": .double(.nan), "zero": .double(-0.0), "same": .int(1)])], header: SampleArchives.header)
            let changes = DiffCommand.changes(
                from: try #require(try store.snapshot(generation: first.generation)),
                to: try #require(try store.snapshot(generation: second.generation)))
            #expect(changes.map(\.change) == ["changed"])
            #expect(changes.first?.details == ["keys changed: zero"])
        }
    }
}
