import Foundation
import RestorationArchive
import TestSupport

/// 9. Hostile values: a 50 MiB blob, a million nodes, nesting past the limit, identifiers
/// and names with NUL, escape and bidi characters. Each is stored and read back exactly, or
/// refused with a typed error, and memory stays bounded.
///
/// Each case runs in its own child process (`hostile CASE`), so its peak memory is its own.
enum HostileValues {
    static let cases = ["big-blob", "million-nodes", "deep-nesting", "strange-text", "limits"]

    static func run(scale: Scale, random: inout SeededGenerator) throws -> Scenario {
        let scenario = Scenario("hostile-values")
        try withTemporaryDirectory { directory in
            for name in cases {
                scenario.trial(name) { trial in
                    let started = Date()
                    let result = try Child.run(Child.torture, ["child", "hostile", name, directory + "/\(name).sqlite"], timeout: 600)
                    trial.expect(!result.signalled && !result.timedOut, "the process died or hung (status \(result.status))")
                    for line in result.lines where !line.hasPrefix("ok") { trial.fail(line) }
                    trial.expect(result.lines.contains { $0.hasPrefix("ok") }, "no result: \(result.lines)")
                    let figures = result.lines.first { $0.hasPrefix("ok") }?.dropFirst(3) ?? ""
                    scenario.remark("\(name): \(figures) (\(String(format: "%.1f s", Date().timeIntervalSince(started))))")
                }
            }
        }
        return scenario
    }

    /// The child: runs one case and announces `ok FIGURES` or one line per problem.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 2 else { throw ChildError.usage }
        let path = arguments[1]
        var problems: [String] = []
        func expect(_ condition: Bool, _ problem: String) { if !condition { problems.append(problem) } }
        let baseline = Files.peakResidentBytes()
        var figures = ""
        switch arguments[0] {
        case "big-blob":
            // Stored as a node's state: kept and read back exactly.
            let state = [UInt8](repeating: 0xA5, count: 50 << 20)
            let node = ArchivedNode(path: try RestorationPath("Root"), className: "Huge", state: state)
            let store = try ArchiveStore(path: path)
            try store.save([node], header: Content.header)
            expect(try store.snapshot()?.nodes == [node], "the 50 MiB node differs")
            // Through the coder: a 50 MiB value is refused when encoding (blobs are at most
            // 16 MiB), and a crafted 50 MiB blob when decoding, both with typed errors.
            let coder = StateEncoder()
            try coder.encodeBytes(state, forKey: "data")
            do {
                _ = try coder.encodedBlob()
                problems.append("a 50 MiB value was encoded")
            } catch .unencodable {
            } catch {
                problems.append("encoding 50 MiB: \(error), not unencodable")
            }
            var crafted: [UInt8] = [0x01, 0x01, 0x04] + Array("data".utf8) + [0x08]
            var length = state.count
            while length >= 0x80 {
                crafted.append(UInt8(length & 0x7F) | 0x80)
                length >>= 7
            }
            crafted.append(UInt8(length))
            crafted += state
            let crc = crc32c(crafted)
            crafted += [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)]
            do {
                _ = try StateDecoder(blob: crafted)
                problems.append("a 50 MiB blob decoded under the 16 MiB limit")
            } catch .limitExceeded {
            } catch {
                problems.append("decoding 50 MiB: \(error), not limitExceeded")
            }
            let roomy = DecodingLimits(maximumBlobSize: 64 << 20, maximumBytesLength: 64 << 20)
            expect(
                try StateDecoder(blob: crafted, limits: roomy).decode([UInt8].self, forKey: "data") == state,
                "the 50 MiB blob decoded under raised limits differs")
            figures = "peak memory \((Files.peakResidentBytes() - baseline) >> 20) MiB above start for a 50 MiB value"
            expect(Files.peakResidentBytes() - baseline < 1 << 30, "more than 1 GiB of memory for a 50 MiB value")
        case "million-nodes":
            // Root, 1,000 branches, 999 leaves under each: three levels, 16 bytes of state each,
            // the first being the blob format's version (a state may not start with 0xE1).
            var random = SeededGenerator(seed: 1)
            func state() -> [UInt8] { [1] + random.bytes(15) }
            var tree = [ArchivedNode(path: try RestorationPath("Root"), className: "Root", state: state())]
            tree.reserveCapacity(1_000_000)
            for branch in 0..<1_000 {
                let parent = try RestorationPath(["Root", "b\(branch)"])
                tree.append(ArchivedNode(path: parent, className: "Branch", state: state()))
                for leaf in 0..<999 {
                    tree.append(
                        ArchivedNode(
                            path: try parent.appending("n\(leaf)"), className: "Leaf", order: leaf, state: state()))
                }
            }
            tree.sort { $0.path < $1.path }
            let store = try ArchiveStore(path: path)
            let saving = Date()
            try store.save(tree, header: Content.header)
            let saved = Date().timeIntervalSince(saving)
            let reading = Date()
            let snapshot = try store.snapshot()
            let read = Date().timeIntervalSince(reading)
            expect(snapshot?.nodes.count == tree.count, "\(snapshot?.nodes.count ?? 0) nodes read back")
            expect(snapshot?.nodes == tree, "the million nodes differ")
            figures = String(
                format: "saved in %.1f s, read in %.1f s, peak memory %d MiB above start (debug build)", saved, read,
                (Files.peakResidentBytes() - baseline) >> 20)
            expect(Files.peakResidentBytes() - baseline < 4 << 30, "more than 4 GiB of memory for a million nodes")
        case "deep-nesting":
            problems += deepNesting()
            figures = "refused nesting of 65 levels through the coder and of 1,000,000 in a crafted blob"
        case "strange-text":
            problems += try strangeText(path: path)
            figures = "NUL, escape, bidi, `/`, `%`, combining and non-BMP text round-trips in paths, class names and header values"
        default:
            problems += limits()
            figures = "identifier, depth, class name and archive name limits refuse with typed errors"
        }
        for problem in problems { announce(problem) }
        if problems.isEmpty { announce("ok \(figures)") }
    }

    private static func deepNesting() -> [String] {
        var problems: [String] = []
        // Through the coder: 65 nested containers is one past the default decoding depth.
        do {
            let coder = StateEncoder()
            func nest(_ coder: StateEncoder, _ depth: Int) throws {
                if depth == 0 {
                    try coder.encode(true, forKey: "leaf")
                } else {
                    try coder.encodeNested(forKey: "child") { try nest($0, depth - 1) }
                }
            }
            try nest(coder, 64)
            let blob = try coder.encodedBlob()
            do {
                _ = try StateValue.decode(blob: blob)
                problems.append("65 levels decoded under a 64-level limit")
            } catch .limitExceeded {
            } catch {
                problems.append("65 levels: \(error), not limitExceeded")
            }
        } catch {
            // Refusing to encode past the limit is as good.
            if !(error is StateCodingError) { problems.append("encoding 65 levels: \(error)") }
        }
        // A crafted blob: one key holding a million arrays, each holding the next.
        var blob: [UInt8] = [0x01, 0x01, 0x01, UInt8(ascii: "a")]
        for _ in 0..<1_000_000 { blob += [0x0C, 0x01] }
        blob.append(0x00)
        let crc = crc32c(blob)
        blob += [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)]
        do {
            _ = try StateValue.decode(blob: blob, limits: DecodingLimits(maximumDepth: 1_000_000))
            problems.append("a million levels decoded")
        } catch .limitExceeded {
        } catch {
            problems.append("a million levels: \(error), not limitExceeded")
        }
        return problems
    }

    private static func strangeText(path: String) throws -> [String] {
        var problems: [String] = []
        let identifiers = [
            "nul\u{0}inside", "\u{1B}[31mred\u{1B}[0m", "\u{202E}txt.exe", "a/b", "100%", "%2F", "\u{FEFF}bom",
            "tab\there", "line\nbreak", "😀🇰🇷", "\u{7F}", " ", "..",
            // One character with the "/" before it in the path's text.
            "\u{301}50%", "\u{FE0F}", "\u{200D}x",
        ]
        var nodes = [ArchivedNode(path: try RestorationPath("Root"), className: "Root\u{0}\u{202E}", state: [1])]
        for (index, identifier) in identifiers.enumerated() {
            nodes.append(
                ArchivedNode(
                    path: try RestorationPath(["Root", identifier]), className: "C\(identifier)", order: index,
                    state: Array(identifier.utf8)))
        }
        var header = Content.header
        header.appValues = ["strange": .string(identifiers.joined())]
        let store = try ArchiveStore(path: path)
        try store.save(nodes, header: header)
        let snapshot = try store.snapshot()
        if snapshot?.nodes.sorted(by: { $0.path < $1.path }) != nodes.sorted(by: { $0.path < $1.path }) {
            problems.append("strange identifiers or class names differ when read back")
        }
        if snapshot?.header.appValues != header.appValues { problems.append("a strange header value differs") }
        for node in nodes where try store.node(at: node.path) != node {
            problems.append("node(at:) misses '\(node.path.identifiers.last ?? "")'")
        }
        // restorectl shows them escaped: no raw control or bidi character reaches a terminal.
        let tree = try Child.run(Child.restorectl, ["tree", path])
        let output = tree.lines.joined(separator: "\n")
        if tree.status != 0 { problems.append("restorectl tree failed: \(output)") }
        if output.unicodeScalars.contains(where: { [0x00, 0x1B, 0x7F, 0x202E, 0xFEFF].contains($0.value) }) {
            problems.append("restorectl tree printed a raw control or bidi character")
        }
        return problems
    }

    private static func limits() -> [String] {
        var problems: [String] = []
        func refused(_ what: String, _ body: () throws -> Void) {
            do {
                try body()
                problems.append("\(what) was accepted")
            } catch {
                if !(error is ArchiveStoreError) { problems.append("\(what): \(error), not an ArchiveStoreError") }
            }
        }
        let long = String(repeating: "x", count: RestorationPath.maximumIdentifierLength + 1)
        refused("an identifier over the length limit") { _ = try RestorationPath(["Root", long]) }
        refused("a path over the depth limit") {
            _ = try RestorationPath(Array(repeating: "d", count: RestorationPath.maximumDepth + 1))
        }
        refused("an empty identifier") { _ = try RestorationPath(["Root", ""]) }
        refused("an archive name with a control character") { _ = try ArchiveName("main\u{1B}[2J") }
        refused("an archive name over the length limit") {
            _ = try ArchiveName(String(repeating: "n", count: ArchiveName.maximumLength + 1))
        }
        refused("a class name over the length limit") {
            let node = ArchivedNode(
                path: try RestorationPath("Root"), className: String(repeating: "C", count: 257), state: [])
            let path = NSTemporaryDirectory() + "/limits-\(getpid()).sqlite"
            defer { for file in Files.storeFiles(path) { Files.remove(file) } }
            try ArchiveStore(path: path).save([node], header: Content.header)
        }
        return problems
    }

    /// CRC-32C (Castagnoli) as docs/blob-format.md specifies it, bit by bit, written apart
    /// from the library's on purpose: the crafted blobs test the format, not the code.
    private static func crc32c(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
