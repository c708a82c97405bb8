import RestorationArchive
import Testing
import TestSupport
@testable import restorectl

/// What `restorectl tree`, `show` and `export` say of an archive they listed that retains no
/// generation when they read it.
@Suite("restorectl: an archive that retains nothing")
struct RetainingNothingTests {
    private func summary(_ archive: ArchiveName, in store: ArchiveStore) -> Result<ArchiveSummary?, ArchiveStoreError> {
        Result { () throws(ArchiveStoreError) -> ArchiveSummary? in try store.summary(of: archive) }
    }

    @Test func aDiscardedArchiveSaysSoWithItsReason() throws {
        try withTemporaryStorePath { path in
            let writer = try ArchiveStore(path: path)
            try writer.save(SampleArchives.tree(count: 3), header: SampleArchives.header)
            _ = try writer.discard(.main, reason: "The user closed the window")
            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(
                StoreOptions.retainingNothing(.main, summary: summary(.main, in: store))
                    == "Archive 'main' was discarded (The user closed the window): it retains no generation.")
        }
    }

    /// The reason reaches the terminal escaped once, as `info` shows it: escaped as the
    /// message was made and again as it was printed, each escape's backslash showed twice,
    /// as if the reason held a backslash.
    @Test func aDiscardReasonIsEscapedOnce() throws {
        try withTemporaryStorePath { path in
            let writer = try ArchiveStore(path: path)
            try writer.save(SampleArchives.tree(count: 3), header: SampleArchives.header)
            _ = try writer.discard(.main, reason: "support\u{1B}[2J asked")
            let tree = try runProcess(builtProduct("restorectl"), ["tree", path])
            #expect(tree.status == 1)
            #expect(
                tree.standardError
                    == "restorectl: error: Archive 'main' was discarded (support\\u{1B}[2J asked): it retains no generation.\n")
        }
    }

    /// An app erased the store between the command's listing and its read: the archive is
    /// gone, not "never saved".
    @Test func anArchiveGoneSinceItWasListedIsNotFound() throws {
        try withTemporaryStorePath { path in
            let writer = try ArchiveStore(path: path)
            try writer.save(SampleArchives.tree(count: 3), header: SampleArchives.header)
            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(try store.archiveNames() == [.main])
            try ArchiveStore.erase(at: path)
            #expect(try store.snapshot(of: .main) == nil)
            #expect(
                StoreOptions.retainingNothing(.main, summary: summary(.main, in: store))
                    == ArchiveStoreError.archiveNotFound(.main).description)
        }
    }

    /// Erased, then saved again before the command read the archive's summary: the read that
    /// found nothing is not the archive's state now.
    @Test func anArchiveSavedAgainSinceTheReadAsksToTryAgain() throws {
        try withTemporaryStorePath { path in
            let writer = try ArchiveStore(path: path)
            try writer.save(SampleArchives.tree(count: 3), header: SampleArchives.header)
            let store = try ArchiveStore(path: path, mode: .readOnly)
            #expect(
                StoreOptions.retainingNothing(.main, summary: summary(.main, in: store))
                    == "Archive 'main' was saved again while restorectl read it (an app is writing the store); try again.")
        }
    }

    /// A summary that cannot be read says why, not that nothing was saved: the archive's row
    /// may be damaged, or the store kept changing under the command's reads.
    @Test func aSummaryThatCannotBeReadSaysWhy() {
        let damage = ArchiveStoreError.damagedStore("the archive row of 'main' does not match its checksum")
        #expect(StoreOptions.retainingNothing(.main, summary: .failure(damage)) == damage.description)
    }

    /// An archive the store has, not discarded, whose summary lists no generation.
    @Test func anArchiveWithNoGenerationSaysNothingIsSaved() throws {
        try withTemporaryStorePath { path in
            let writer = try ArchiveStore(path: path)
            try writer.save(SampleArchives.tree(count: 3), header: SampleArchives.header)
            let store = try ArchiveStore(path: path, mode: .readOnly)
            guard case .success(var summary?) = summary(.main, in: store) else {
                Issue.record("no summary of 'main'")
                return
            }
            summary.generations = []
            #expect(
                StoreOptions.retainingNothing(.main, summary: .success(summary)) == "Archive 'main' has no saved generation.")
        }
    }
}
