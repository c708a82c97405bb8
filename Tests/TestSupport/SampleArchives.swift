public import RestorationArchive

/// Archives built for tests.
public enum SampleArchives {
    /// The app ``header`` is saved by: what its restore gate lets restore.
    public static let app = AppIdentity(version: "11.0", build: "1024", platform: "linux", idiom: "phone")

    /// A header as an app writes it.
    public static let header = SaveHeader(
        appVersion: "11.0", appBuild: "1024", platform: "linux", idiom: "phone",
        appValues: ["MyAppVersion": .string("11.0"), "launches": .int(3)])

    /// A tree of `count` nodes: a root `Root`, then children spread over a few levels, each
    /// with `stateSize` bytes of state whose bytes are all `fill`.
    public static func tree(count: Int, stateSize: Int = 32, fill: UInt8 = 1) throws -> [ArchivedNode] {
        precondition(count >= 1)
        var nodes = [ArchivedNode(path: try RestorationPath("Root"), className: "Root", state: state(stateSize, fill))]
        var parents = [nodes[0].path]
        var index = 1
        while nodes.count < count {
            let parent = parents[(index - 1) / 4 % parents.count]
            let path = try parent.appending("n\(index)")
            nodes.append(
                ArchivedNode(path: path, className: "Screen", classVersion: 1, order: index % 4, state: state(stateSize, fill)))
            if path.depth < 5 { parents.append(path) }
            index += 1
        }
        return nodes
    }

    /// Every reason a restore report gives for a node not restored, once each.
    public static let everyRestoreReason: [RestoreReport.Reason] = [
        .noRestorationClass, .declined, .classMismatch(found: "Other"), .versionTooNew(supported: 3),
        .decodeFailed("No value for key 'x'."), .parentNotRestored, .checksumMismatch,
        .overBudget(bytes: 5000, budget: 4096),
    ]

    public static func state(_ size: Int, _ fill: UInt8) -> [UInt8] {
        [UInt8](repeating: fill, count: size)
    }
}
