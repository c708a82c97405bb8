import ArgumentParser
import Examples
import Foundation
import RestorationArchive

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Play an example app's lifecycle against a store, to see what restoration does and what restorectl shows.",
        discussion: """
            The example app is the order app of the seed articles: a tab bar, a menu navigation \
            stack (Categories → Menu → MenuItemDetail), an order, web pages with per-category \
            identifiers (MILK_webview, COFFEE_webview) and a presented page, a profile form being \
            edited, and a login screen that is never preserved.

            Without --step, the demo plays the whole story: first launch, navigation, background \
            save, the system killing the app, a relaunch that restores it, a relaunch whose \
            restoration crashes (a child process killed with SIGKILL), the launch after it \
            invalidating that generation, an explicit quit discarding the state, and a last \
            session that leaves a saved archive. Each launch is a new process or a fresh start-up.

            With --step, it runs one launch's worth against --db: 'save' launches (restoring if it \
            can), navigates and saves; 'restore' launches and restores; 'restore-crash' launches \
            and dies by SIGKILL in the middle of restoring; 'quit' launches and quits explicitly, \
            which discards the saved state.
            """
    )

    enum Step: String, ExpressibleByArgument, CaseIterable {
        case save, restore, restoreCrash = "restore-crash", quit
    }

    @Option(name: .long, help: "The store to write; by default the per-user state directory of the app 'restorectl-demo'.")
    var db: String?

    @Option(name: .long, help: "Run one launch only: save, restore, restore-crash or quit.")
    var step: Step?

    func run() throws {
        let path: String
        do {
            path = try db ?? ArchiveStore.defaultPath(appIdentifier: "restorectl-demo")
        } catch {
            Diagnostics.fail(error, exitCode: 2)
        }
        do {
            if let step {
                try Self.run(step, path: path)
            } else {
                try story(path: path)
            }
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
    }

    // MARK: One launch

    /// A launch of the example app: its start-up, then restoration.
    private struct Launch {
        let app = OrderApp()
        let store: ArchiveStore
        let engine: RestorationEngine
        let restoration: RestorationResult

        init(path: String, dyingAtNode: Int? = nil) throws {
            store = try ArchiveStore(path: path)
            var looked = 0
            let registry = try OrderApp.registry(
                lookingUp: dyingAtNode.map { node in
                    { _ in
                        looked += 1
                        // The system kills the app in the middle of restoring.
                        if looked == node { kill(getpid(), SIGKILL) }
                    }
                })
            engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: registry)
            engine.saveGate = { values in
                values["MyAppVersion"] = .string(OrderApp.identity.version)
                return .save
            }
            restoration = try engine.restore(app.roots)
        }
    }

    static func run(_ step: Step, path: String) throws {
        switch step {
        case .save:
            let launch = try Launch(path: path)
            print("Launch: \(summary(of: launch.restoration.report)).")
            let order = launch.app.order
            if launch.restoration.report.outcome == .restored, !order.order.lines.isEmpty {
                order.order.lines[0].quantity += 1
                print("The user finds their order as they left it and adds one more \(order.order.lines[0].item.name).")
            } else {
                launch.app.simulateSession()
                print("The user browses to a latte, orders two, opens the milk page and edits their profile.")
            }
            let saved = try launch.engine.preserve(launch.app.roots)
            print("The app moves to the background: \(summary(of: saved)).")
        case .restore:
            let launch = try Launch(path: path)
            print("Launch: \(summary(of: launch.restoration.report)).")
            for node in launch.restoration.report.notRestored {
                print("  not restored: \(TerminalText.escaped(node.path.description)): \(node.outcome)")
            }
        case .restoreCrash:
            let store = try ArchiveStore(path: path)
            guard let header = try store.header() else {
                Diagnostics.printError("There is nothing to restore, so a restoration cannot crash: run '--step save' first.")
                RestoreCtl.exit(withError: ExitCode(1))
            }
            // Somewhere among the archived nodes, chosen at random.
            let node = Int.random(in: 1...max(1, header.nodeCount))
            print("Launch: restoring generation \(header.generation); the app will be killed at node \(node) of \(header.nodeCount).")
            fflush(nil)  // all streams: the line must be out before the process dies
            _ = try Launch(path: path, dyingAtNode: node)
            print("Restoration finished before node \(node) was reached.")
        case .quit:
            let launch = try Launch(path: path)
            print("Launch: \(summary(of: launch.restoration.report)).")
            for archive in try launch.store.archives() where archive.header != nil {
                try launch.store.discard(archive.name, reason: "the user quit the app explicitly")
            }
            print("The user quits the app explicitly: its saved state is discarded.")
        }
    }

    // MARK: The whole story

    private func story(path: String) throws {
        print("Store: \(TerminalText.escaped(path))")
        print("")
        print("1. First launch, the user navigates, the app goes to the background:")
        try Self.run(.save, path: path)
        print("")
        print("2. The system kills the app in the background (normal: that is what restoration is for). Next launch:")
        try Self.run(.restore, path: path)
        print("")
        print("3. The user works on; backgrounded again, the app saves a new generation:")
        try Self.run(.save, path: path)
        print("")
        print("4. The next launch's restoration crashes (a child process, killed with SIGKILL):")
        let child = Process()
        child.executableURL = URL(filePath: "/proc/self/exe")
        child.arguments = ["demo", "--step", "restore-crash", "--db", path]
        child.standardOutput = FileHandle.standardOutput
        child.standardError = FileHandle.standardError
        fflush(nil)  // our lines first, then the child's
        try child.run()
        child.waitUntilExit()
        let died = child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL
        print("The child process \(died ? "was killed by SIGKILL" : "exited with status \(child.terminationStatus)").")
        print("")
        print("5. The launch after it finds the crash marker and invalidates that generation (crash policy: discard):")
        try Self.run(.restore, path: path)
        print("")
        print("6. The user quits the app explicitly:")
        try Self.run(.quit, path: path)
        print("")
        print("7. The user comes back, navigates again, and the app is backgrounded:")
        try Self.run(.save, path: path)
        print("")
        print("Inspect the store:")
        print("  swift run restorectl info \(shellQuoted(path))")
        print("  swift run restorectl report \(shellQuoted(path)) --all")
        print("  swift run restorectl show \(shellQuoted(path)) Tabs/MenuNavigation/MenuItemDetail")
        print("  swift run restorectl info \(shellQuoted(path)) --format json")
    }

    // MARK: Words

    static func summary(of report: RestoreReport) -> String {
        switch report.outcome {
        case .nothingToRestore: "nothing to restore"
        case .restored:
            "restored \(report.restoredCount) of \(report.nodes.count) screens from generation \(report.generation.map(String.init(describing:)) ?? "?")"
        case .refused(let reason): "not restored, because \(TerminalText.escaped(reason))"
        case .failed(let reason): "restoration failed: \(TerminalText.escaped(reason))"
        }
    }

    static func summary(of result: PreservationResult) -> String {
        guard let save = result.save else { return "save vetoed: \(TerminalText.escaped(result.vetoReason ?? ""))" }
        return "\(save.kind.rawValue) save, \(result.nodesWritten) of \(result.nodeCount) nodes written → generation \(save.generation)"
    }

    private func shellQuoted(_ text: String) -> String {
        let safe = text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "/._-~+".unicodeScalars.contains(scalar))
        }
        if safe { return text }
        return "'" + TerminalText.escaped(text).replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
