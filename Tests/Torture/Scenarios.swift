import TestSupport

/// Every scenario of this executable, in the order they run. (`fuzz-codec` is run by
/// `scripts/torture` itself: the fuzzer is a separate build.)
enum Scenarios {
    struct Entry: Sendable {
        let name: String
        let run: @Sendable (Scale, inout SeededGenerator) throws -> Scenario
    }

    static let all: [Entry] = [
        Entry(name: "save-kill", run: SaveKill.run),
        Entry(name: "two-writers", run: SaveKill.runTwoWriters),
        Entry(name: "copy-kill", run: SaveKill.runCopyKill),
        Entry(name: "power-cut", run: PowerCut.run),
        Entry(name: "lifecycle-kill", run: LifecycleKill.run),
        Entry(name: "log-removal", run: LogRemoval.run),
        Entry(name: "restore-kill", run: RestoreKill.run),
        Entry(name: "disk-full", run: DiskFull.run),
        Entry(name: "busy", run: Busy.run),
        Entry(name: "threads", run: Threads.run),
        Entry(name: "processes", run: Processes.run),
        Entry(name: "read-only", run: ReadOnly.run),
        Entry(name: "not-a-store", run: NotAStore.run),
        Entry(name: "damage", run: Damage.run),
        Entry(name: "header-damage", run: Damage.runHeader),
        Entry(name: "marker-damage", run: Damage.runMarker),
        Entry(name: "journal-damage", run: Damage.runJournal),
        Entry(name: "schema-tampering", run: SchemaTampering.run),
        Entry(name: "log-damage", run: LogDamage.run),
        Entry(name: "hostile-values", run: HostileValues.run),
        Entry(name: "permissions", run: Permissions.run),
        Entry(name: "erase-kill", run: EraseKill.run),
        Entry(name: "discard-kill", run: DiscardKill.run),
    ]
}

/// The child processes scenarios start: `torture child MODE ARGUMENTS...`.
enum ChildMode {
    static func run(_ arguments: [String]) throws {
        guard let mode = arguments.first else { throw ChildError.usage }
        let rest = Array(arguments.dropFirst())
        switch mode {
        case "save-loop": try SaveKill.child(rest)
        case "lifecycle-loop": try LifecycleKill.child(rest)
        case "log-removal-loop": try LogRemoval.child(rest)
        case "hold-lock": try Busy.holdLock(rest)
        case "save-and-wait": try ReadOnly.saveAndWait(rest)
        case "damage-batch": try Damage.batch(rest)
        case "die-restoring": try Damage.dieRestoring(rest)
        case "log-damage-batch": try LogDamage.batch(rest)
        case "hostile": try HostileValues.child(rest)
        case "erase-loop": try EraseKill.child(rest)
        case "discard-loop": try DiscardKill.child(rest)
        case "power-cut-loop": try PowerCut.child(rest)
        case "race-loop": try Processes.child(rest)
        default: throw ChildError.usage
        }
    }
}
