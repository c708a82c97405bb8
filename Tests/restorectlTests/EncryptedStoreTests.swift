#if Encryption
import Foundation
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
    /// A key file's mode, as it should be.
    private static var ownerOnly: [FileAttributeKey: Any] { [.posixPermissions: 0o600] }

    /// A store of one sealed node, and a file holding what `written` makes of its key
    /// (owner-only).
    private func sealedStore(_ directory: String, keyFileHolds written: (StateEncryptionKey) -> [UInt8]) throws
        -> (store: String, keyFile: String)
    {
        let key = StateEncryptionKey.generate()
        var configuration = ArchiveStore.Configuration()
        configuration.encryptionKey = key
        let coder = StateEncoder()
        try coder.encode("secret draft", forKey: "draft")
        let node = ArchivedNode(path: try RestorationPath("Root"), className: "Screen", state: try coder.encodedBlob())
        let store = directory + "/store.sqlite"
        let keyFile = directory + "/store.key"
        try ArchiveStore(path: store, configuration: configuration).save([node], header: SampleArchives.header)
        #expect(FileManager.default.createFile(atPath: keyFile, contents: Data(written(key)), attributes: Self.ownerOnly))
        return (store, keyFile)
    }

    @Test(arguments: ["bytes", "hexadecimal"])
    func withItsKeyFileEveryCommandReadsTheStates(keyFileHolds format: String) throws {
        try withTemporaryDirectory { directory in
            let (store, keyFile) = try sealedStore(directory) { key in
                // The digits with white space around them, as an editor may save them: a tab,
                // a line's end of two characters.
                format == "bytes" ? key.bytes : Array(("\t" + key.bytes.map { String(format: "%02X", $0) }.joined() + " \r\n").utf8)
            }
            let show = try runProcess(restorectl, ["show", store, "Root", "--key-file", keyFile])
            #expect(show.status == 0, "\(show.standardError)")
            #expect(show.standardOutput.contains("draft: string \"secret draft\""))
            for arguments in [["info"], ["tree"], ["diff", "--from", "1", "--to", "1"], ["check"], ["export", "--output", "-"]] {
                let outcome = try runProcess(restorectl, [arguments[0], store] + arguments.dropFirst() + ["--key-file", keyFile])
                #expect(outcome.status == 0, "\(arguments[0]): \(outcome.standardError)")
                #expect(outcome.standardError.isEmpty, "\(arguments[0])")
            }
        }
    }

    @Test func aKeyFileWithAnotherKeyOrNoKeyIsRefused() throws {
        try withTemporaryDirectory { directory in
            let (store, keyFile) = try sealedStore(directory) { _ in StateEncryptionKey.generate().bytes }
            let wrong = try runProcess(restorectl, ["show", store, "Root", "--key-file", keyFile])
            #expect(wrong.status == 2)
            #expect(wrong.standardError == "restorectl: error: \(ArchiveStoreError.wrongEncryptionKey.description)\n")
            #expect(!wrong.standardOutput.contains("secret draft") && !wrong.standardError.contains("secret draft"))

            #expect(FileManager.default.createFile(atPath: keyFile, contents: Data(repeating: 7, count: 31)))
            let short = try runProcess(restorectl, ["info", store, "--key-file", keyFile])
            #expect(short.status == 64)
            #expect(short.standardError.contains("cannot be used: it holds neither 32 bytes nor 64 hexadecimal digits"))
            #expect(FileManager.default.createFile(atPath: keyFile, contents: Data(repeating: UInt8(ascii: "g"), count: 64)))
            let notHexadecimal = try runProcess(restorectl, ["info", store, "--key-file", keyFile])
            #expect(notHexadecimal.status == 64)
            #expect(notHexadecimal.standardError.contains("it holds neither 32 bytes nor 64 hexadecimal digits"))
            let missing = try runProcess(restorectl, ["info", store, "--key-file", directory + "/missing.key"])
            #expect(missing.status == 64)
            #expect(missing.standardError.contains("cannot be used: it cannot be read (No such file or directory)"))
            // The path is the user's, and escaped as any other text that reaches the terminal.
            let escaped = try runProcess(restorectl, ["info", store, "--key-file", directory + "/missing\u{1B}[2J.key"])
            #expect(escaped.status == 64 && escaped.standardError.contains("/missing\\u{1B}[2J.key' cannot be used"))
            #expect(!escaped.standardError.contains("\u{1B}"))
            let folder = try runProcess(restorectl, ["info", store, "--key-file", directory])
            #expect(folder.status == 64)
            #expect(folder.standardError.contains("cannot be used: it cannot be read (Is a directory)"))
        }
    }

    /// A key read from a pipe (`--key-file <(pass show key)`, or `/dev/stdin`): the file was
    /// read once to check it and once more to open the store, and the second read of a pipe
    /// found nothing, so that a good key was refused as holding "neither 32 bytes nor 64
    /// hexadecimal digits".
    @Test(arguments: ["bytes", "hexadecimal"])
    func aKeyFromAPipeOpensTheStates(keyFileHolds format: String) throws {
        try withTemporaryDirectory { directory in
            let (store, keyFile) = try sealedStore(directory) { key in
                format == "bytes" ? key.bytes : Array(key.bytes.map { String(format: "%02x", $0) }.joined().utf8)
            }
            let outcome = try runProcess(
                "/bin/sh", ["-c", #"cat "$1" | "$2" show "$3" Root --key-file /dev/stdin"#, "sh", keyFile, restorectl, store])
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(outcome.standardOutput.contains("draft: string \"secret draft\""))
        }
    }

    /// A key file that users other than its owner can read draws a warning, once, naming its
    /// mode and how to close it; the command runs all the same.
    @Test func aKeyFileOthersCanReadDrawsAWarning() throws {
        try withTemporaryDirectory { directory in
            let (store, keyFile) = try sealedStore(directory) { $0.bytes }
            for mode in [0o644, 0o604, 0o620] {
                try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: keyFile)
                let outcome = try runProcess(restorectl, ["show", store, "Root", "--key-file", keyFile])
                #expect(outcome.status == 0, "\(outcome.standardError)")
                #expect(outcome.standardOutput.contains("draft: string \"secret draft\""))
                #expect(
                    outcome.standardError
                        == "restorectl: warning: the key file '\(keyFile)' is open to users other than its owner "
                        + "(mode 0\(String(mode, radix: 8))): make it owner-only (chmod 600 '\(keyFile)')\n")
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: keyFile)
            #expect(try runProcess(restorectl, ["show", store, "Root", "--key-file", keyFile]).standardError.isEmpty)
        }
    }

    /// With a key, a node whose seal does not open is named as such, not as a checksum that
    /// does not match: here the one node of a store whose states were never sealed.
    @Test func aKeyOnAStoreThatWasNeverSealedNamesItsStatesAsNotOpening() throws {
        try withTemporaryDirectory { directory in
            let store = directory + "/store.sqlite"
            let keyFile = directory + "/store.key"
            let node = ArchivedNode(path: try RestorationPath("Root"), className: "Screen", state: try StateEncoder().encodedBlob())
            try ArchiveStore(path: store).save([node], header: SampleArchives.header)
            #expect(
                FileManager.default.createFile(
                    atPath: keyFile, contents: Data(StateEncryptionKey.generate().bytes), attributes: Self.ownerOnly))
            let expected = ArchiveStoreError.sealRejected(.main, try RestorationPath("Root"), 1).description
            for arguments in [["info"], ["tree"], ["show", "Root"], ["show", "Root", "--format", "json"], ["export", "--output", "-"]] {
                let outcome = try runProcess(restorectl, [arguments[0], store] + arguments.dropFirst() + ["--key-file", keyFile])
                #expect(outcome.status == 1, "\(arguments)")
                #expect(outcome.standardError == "restorectl: error: \(expected)\n", "\(arguments)")
                if arguments == ["show", "Root"] {
                    #expect(outcome.standardOutput.contains(
                        "  checksum:  ok, but its state does not open under the store's key: the node is damaged\n"))
                    #expect(outcome.standardOutput.contains("  state:     not shown: it is not what was saved\n"))
                }
                if arguments.contains("json") || arguments[0] == "export" {
                    #expect(outcome.standardOutput.contains(#""checksum" : "ok""#), "\(arguments)")
                    #expect(outcome.standardOutput.contains("its state does not open under the store's key"), "\(arguments)")
                    #expect(!outcome.standardOutput.contains(#""mismatch""#), "\(arguments)")
                }
            }
        }
    }
}
#endif
