#if Encryption
import RestorationArchive
import Testing
import TestSupport

/// What restorectl, which has no key, makes of a store whose states are sealed.
@Suite("restorectl on a store with sealed states")
struct EncryptedStoreTests {
    let restorectl = builtProduct("restorectl")

    @Test func listingCommandsWorkAndCommandsThatReadStatesSaySoInOneLine() throws {
        try withTemporaryStorePath { path in
            var configuration = ArchiveStore.Configuration()
            configuration.encryptionKey = .generate()
            let coder = StateEncoder()
            try coder.encode("secret draft", forKey: "draft")
            let node = ArchivedNode(path: try RestorationPath("Root"), className: "Screen", state: try coder.encodedBlob())
            try ArchiveStore(path: path, configuration: configuration).save([node], header: SampleArchives.header)

            // check verifies sealed states by their checksums.
            for command in ["info", "markers", "events", "report", "check"] {
                let outcome = try runProcess(restorectl, [command, path])
                #expect(outcome.status == 0, "\(command): \(outcome.standardError)")
            }
            for arguments in [["show", path, "Root"], ["tree", path], ["diff", path, "--from", "1", "--to", "1"]] {
                let outcome = try runProcess(restorectl, arguments)
                #expect(outcome.status == 1, "\(arguments[0]): \(outcome.status)")
                #expect(outcome.standardError.contains("is sealed; open the store with its encryption key"), "\(arguments[0])")
                #expect(outcome.standardError.split(separator: "\n").count == 1)
                #expect(!outcome.standardOutput.contains("secret draft") && !outcome.standardError.contains("secret draft"))
            }
        }
    }
}
#endif
