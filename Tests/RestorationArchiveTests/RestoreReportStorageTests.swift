import Foundation
import Testing
import TestSupport
@testable import RestorationArchive

@Suite("Restore report storage")
struct RestoreReportStorageTests {
    @Test func everyOutcomeAndReasonRoundTripsThroughTheStore() throws {
        try withTemporaryStore { store in
            try store.save([ArchivedNode(path: try RestorationPath("Root"), className: "Root", state: [])], header: SampleArchives.header)
            let reasons: [RestoreReport.Reason] = [
                .noRestorationClass, .declined, .classMismatch(found: "Other"), .versionTooNew(supported: 3),
                .decodeFailed("No value for key 'x'."), .parentNotRestored, .checksumMismatch,
                .overBudget(bytes: 5000, budget: 4096),
            ]
            var nodes = [RestoreReport.Node(path: try RestorationPath("Root"), className: "Root", classVersion: 1, outcome: .restored)]
            for (index, reason) in reasons.enumerated() {
                nodes.append(.init(
                    path: try RestorationPath("Root", "n\(index)", "a/b%c"), className: "C\(index)", classVersion: index,
                    outcome: index.isMultiple(of: 2) ? .skipped(reason) : .failed(reason)))
            }
            let date = Date(timeIntervalSince1970: 1_800_000_000.123)
            let reports = [
                RestoreReport(archive: .main, generation: 7, date: date, outcome: .restored, nodes: nodes),
                RestoreReport(archive: .main, generation: 8, date: date, outcome: .refused(reason: "old"), nodes: []),
                RestoreReport(archive: .main, generation: nil, date: date, outcome: .failed(reason: "damaged"), nodes: []),
                RestoreReport(archive: .main, generation: nil, date: date, outcome: .nothingToRestore, nodes: []),
            ]
            for report in reports { try store.recordRestoreReport(report) }
            #expect(try store.restoreReports() == reports.reversed())
        }
    }

    @Test func damagedReportIsAnErrorNotAWrongReport() throws {
        try withTemporaryStorePath { path in
            let store = try ArchiveStore(path: path)
            try store.save([ArchivedNode(path: try RestorationPath("Root"), className: "Root", state: [])], header: SampleArchives.header)
            try store.recordRestoreReport(RestoreReport(archive: .main, generation: 1, date: Date(), outcome: .restored, nodes: []))
            try tamper(with: path, "UPDATE restore_report SET report = x'01020304'")
            #expect(throws: ArchiveStoreError.damagedStore("a restore report of archive 'main' cannot be read")) {
                try store.restoreReports()
            }
        }
    }
}
