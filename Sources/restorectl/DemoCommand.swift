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
            applying the crash policy to that generation, an explicit quit discarding the state, \
            and a last session that leaves a saved archive. Each launch is a new process or a \
            fresh start-up.

            With --step, it runs one launch's worth against the store, recording the app's lifecycle \
            events in the store's journal as it goes: 'save' launches (restoring if it can), \
            navigates, and saves when it moves to the background; 'background-kill' does the \
            same and is then killed there by SIGKILL, as the system does; 'restore' launches, \
            restores and moves to the background; 'restore-crash' dies by SIGKILL in the middle \
            of restoring; 'load-crash' restores and dies while a restored web page is still \
            loading (restoration not complete); 'foreground-crash' restores, navigates and dies \
            on screen before saving; 'quit' launches and quits explicitly, which discards the \
            saved state. --crash-policy chooses what a launch does after such crashes, in one \
            step or in the whole story.
            """
    )

    enum Step: String, ExpressibleByArgument, CaseIterable {
        case save, backgroundKill = "background-kill", restore, restoreCrash = "restore-crash"
        case loadCrash = "load-crash", foregroundCrash = "foreground-crash", quit
    }

    @Argument(
        help: ArgumentHelp(
            """
            The path of the store to write; by default the per-user state directory of the app \
            'restorectl-demo'.
            """,
            valueName: "db"))
    var store: String?

    @Option(name: .long, help: "The same as <db> (either one, not both).")
    var db: String?

    func validate() throws {
        if store != nil && db != nil {
            throw ValidationError("give the store once: as <db> or with --db, not both")
        }
    }

    @Option(
        name: .long,
        help: """
            Run one launch only: save, background-kill, restore, restore-crash, load-crash, \
            foreground-crash or quit.
            """)
    var step: Step?

    @Option(
        name: .long,
        help: """
            What a launch does after a crash: discard (the default), fall-back (to the newest \
            generation that once restored cleanly), retry:N (N attempts), or foreground (also \
            discard after any death in the foreground).
            """)
    var crashPolicy: DemoCrashPolicy = DemoCrashPolicy(.discard)

    func run() throws {
        let path: String
        do {
            path = try store ?? db ?? ArchiveStore.defaultPath(appIdentifier: "restorectl-demo")
        } catch {
            Diagnostics.fail(error, exitCode: 2)
        }
        do {
            if let step {
                try Self.run(step, path: path, policy: crashPolicy.policy)
            } else {
                try story(path: path)
            }
        } catch let error as ArchiveStoreError {
            // A write lock another connection held past the busy timeout (the app, another
            // demo), a file that cannot be written or a full disk: said in words, as the
            // commands that write say them, rather than as SQLite's codes.
            Diagnostics.failWriting(path, error, busyTimeout: ArchiveStore.Configuration().busyTimeout)
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
    }

    // MARK: One launch

    /// A launch of the example app: its start-up, restoration, and lifecycle events in the
    /// store's journal, in UIKit's order (R9).
    private struct Launch {
        let app = OrderApp()
        let store: ArchiveStore
        let engine: RestorationEngine
        let previous: LaunchSummary?
        let restoration: RestorationResult

        /// - Parameters:
        ///   - dyingAtNode: the node at which the system kills the app during restoration.
        ///   - loadingPages: whether the restored web pages finish loading, which completes
        ///     restoration (R10).
        init(path: String, policy: CrashPolicy, dyingAtNode: Int? = nil, loadingPages: Bool = true) throws {
            store = try ArchiveStore(path: path, configuration: .init(crashPolicy: policy))
            previous = try store.previousLaunch()
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
            try store.record(.willFinishLaunching)
            restoration = try engine.restore(app.roots)
            if loadingPages { app.finishLoadingPages() }
            try store.record(.didFinishLaunching)
            try store.record(.didBecomeActive)
        }

        /// Prints how the previous launch ended and what this one restored.
        func describe() {
            print("Launch (\(DemoCommand.summary(of: previous))): \(DemoCommand.summary(of: restoration.report)).")
            for node in restoration.report.notRestored {
                print("  not restored: \(TerminalText.escaped(node.path.description)): \(node.outcome)")
            }
        }

        /// The user works: on a restored order, one more of its first item; otherwise the
        /// whole session from scratch.
        func navigate() {
            let order = app.order
            if restoration.report.outcome == .restored, !order.order.lines.isEmpty {
                order.order.lines[0].quantity += 1
                print("The user finds their order as they left it and adds one more \(order.order.lines[0].item.name).")
            } else {
                app.simulateSession()
                print("The user browses to a latte, orders two, opens the milk page and edits their profile.")
            }
        }

        /// The app leaves the screen and, when `saving`, preserves its state.
        func enterBackground(saving: Bool) throws {
            try store.record(.willResignActive)
            if saving {
                let saved = try engine.preserve(app.roots)
                print("The app moves to the background: \(DemoCommand.summary(of: saved)).")
            } else {
                print("The app moves to the background.")
            }
            try store.record(.didEnterBackground)
        }
    }

    /// Plays one launch as an app would: when its store turns out to be unusable (damaged, cut
    /// short, saved by a newer version of the library), at opening or at any later call, the
    /// app erases it and the launch starts again afresh.
    ///
    /// A file that is not an archive store at all is never erased: the path given may name a file of
    /// the user's by mistake (the library's erase refuses only another program's SQLite
    /// database). `restorectl erase` erases one on purpose.
    static func run(_ step: Step, path: String, policy: CrashPolicy) throws {
        do {
            try play(step, path: path, policy: policy)
        } catch {
            guard let unusable = unusableStore(error) else { throw error }
            if case .notAStore = unusable { throw NotAStoreRefusal(unusable) }
            announceErasing(because: unusable)
            try ArchiveStore.erase(at: path)
            try play(step, path: path, policy: policy)
        }
    }

    /// Why the demo stopped at a file that is not an archive store.
    private struct NotAStoreRefusal: Error, CustomStringConvertible {
        let description: String
        init(_ error: ArchiveStoreError) {
            description =
                error.description + " The demo never erases a file that is not an archive store: "
                + "give the demo another path (or, if it is a store of yours damaged past recognition, "
                + "erase it with 'restorectl erase')."
        }
    }

    /// The store's error that says it cannot be used, if `error` is one, from the store or
    /// through the engine.
    private static func unusableStore(_ error: any Error) -> ArchiveStoreError? {
        let storeError: ArchiveStoreError? =
            switch error {
            case let error as ArchiveStoreError: error
            case RestorationError.store(let error): error
            default: nil
            }
        return storeError?.isUnusableStore == true ? storeError : nil
    }

    private static func play(_ step: Step, path: String, policy: CrashPolicy) throws {
        switch step {
        case .save, .backgroundKill:
            let launch = try Launch(path: path, policy: policy)
            launch.describe()
            launch.navigate()
            try launch.enterBackground(saving: true)
            if step == .backgroundKill {
                print("The system kills the app in the background (SIGKILL), as it does to free memory.")
                fflush(nil)
                kill(getpid(), SIGKILL)
            }
        case .restore:
            let launch = try Launch(path: path, policy: policy)
            launch.describe()
            try launch.enterBackground(saving: false)
        case .restoreCrash:
            // Read-write, like the launch below: in one process, a read-only connection to a
            // store whose -wal exists would make SQLite map the shared memory read-only for
            // both, and the launch could not write.
            let store = try ArchiveStore(path: path)
            guard let header = try store.header() else {
                Diagnostics.printError("There is nothing to restore, so a restoration cannot crash: run '--step save' first.")
                RestoreCtl.exit(withError: ExitCode(1))
            }
            // Somewhere among the archived nodes, chosen at random.
            let node = Int.random(in: 1...max(1, header.nodeCount))
            print("Launch: restoring generation \(header.generation); the app will be killed at node \(node) of \(header.nodeCount).")
            fflush(nil)  // all streams: the line must be out before the process dies
            _ = try Launch(path: path, policy: policy, dyingAtNode: node)
            print("Restoration finished before node \(node) was reached.")
        case .loadCrash:
            let launch = try Launch(path: path, policy: policy, loadingPages: false)
            launch.describe()
            if launch.restoration.isComplete {
                // Refused, or nothing to restore: no page is loading, and no restoration is in progress.
                print("The app is killed (SIGKILL) on screen; nothing was restored, so no restoration was in progress.")
            } else {
                print("The app is killed (SIGKILL) while a restored web page is still loading: restoration was not complete.")
            }
            fflush(nil)
            kill(getpid(), SIGKILL)
        case .foregroundCrash:
            let launch = try Launch(path: path, policy: policy)
            launch.describe()
            launch.navigate()
            print("The app crashes while on screen (SIGKILL), before saving anything.")
            fflush(nil)
            kill(getpid(), SIGKILL)
        case .quit:
            let launch = try Launch(path: path, policy: policy)
            launch.describe()
            let discarded = try launch.store.discardAll(reason: "the user quit the app explicitly")
            try launch.store.record(.willTerminate)
            print("The user quits the app explicitly: its saved state is discarded (\(discarded.count) archive\(discarded.count == 1 ? "" : "s")).")
        }
    }

    private static func announceErasing(because error: ArchiveStoreError) {
        print("The app cannot use its store. \(TerminalText.escaped(error.description)) It erases it and starts afresh.")
    }

    // MARK: The whole story

    private func story(path: String) throws {
        // A store an earlier story left (the default path's, run again): its state would be
        // restored at the "first" launch, and every step would tell another story. A file
        // that is not an archive store is refused here, before the story begins: its first
        // launch runs in a child process, and the story printed the child's refusal, then
        // that the child had failed.
        let archives: [ArchiveSummary]?
        do throws(ArchiveStoreError) {
            archives = try ArchiveStore(path: path, mode: .readOnly).archives()
        } catch {
            if case .notAStore = error { throw NotAStoreRefusal(error) }
            archives = nil
            // Nothing there yet: the store is created now, so that a location where it cannot
            // be (a folder that cannot be made) is said before the story begins, not by its
            // first launch's child process after the first step's heading.
            if case .storeNotFound = error {
                do {
                    _ = try ArchiveStore(path: path)
                } catch {
                    Diagnostics.failOpening(path, error)
                }
            }
        }
        print("Store: \(TerminalText.escaped(path))")
        print("")
        // Every launch of the story, the children's too, under the one policy an app has.
        let policy = crashPolicy.policy
        if archives?.contains(where: { !$0.generations.isEmpty }) == true {
            print("0. The store holds the state of an earlier session: the user quits the app explicitly, which discards it, so that the story starts afresh:")
            try Self.run(.quit, path: path, policy: policy)
            print("")
            print("1. Launch with nothing to restore: the user navigates, the app goes to the background and saves, and the system kills it there (a child process, killed with SIGKILL):")
        } else {
            print("1. First launch: the user navigates, the app goes to the background and saves, and the system kills it there (a child process, killed with SIGKILL):")
        }
        try child(.backgroundKill, path: path)
        print("")
        print("2. Next launch: the journal shows the app was killed in the background, which is normal, so its state is restored:")
        try Self.run(.restore, path: path, policy: policy)
        print("")
        print("3. The user works on; backgrounded again, the app saves a new generation:")
        try Self.run(.save, path: path, policy: policy)
        print("")
        print("4. The next launch's restoration crashes (a child process, killed with SIGKILL):")
        try child(.restoreCrash, path: path)
        print("")
        print("5. The launch after it finds the crash marker and \(Self.afterTheCrash(under: policy)):")
        try Self.run(.restore, path: path, policy: policy)
        print("")
        print("6. The user quits the app explicitly:")
        try Self.run(.quit, path: path, policy: policy)
        print("")
        print("7. The user comes back, navigates again, and the app is backgrounded:")
        try Self.run(.save, path: path, policy: policy)
        print("")
        print("Inspect the store:")
        print("  swift run restorectl info \(Self.shellQuoted(path))")
        print("  swift run restorectl report \(Self.shellQuoted(path)) --all")
        print("  swift run restorectl show \(Self.shellQuoted(path)) Tabs/MenuNavigation/MenuItemDetail")
        print("  swift run restorectl info \(Self.shellQuoted(path)) --format json")
    }

    /// Runs one step in a child process (this executable), which the step kills. A child
    /// that fails otherwise (it printed why) ends the story with status 1: the next steps
    /// would only meet the same problem.
    private func child(_ step: Step, path: String) throws {
        let child = Process()
        child.executableURL = URL(filePath: "/proc/self/exe")
        child.arguments = [
            "demo", "--step", step.rawValue, "--crash-policy", crashPolicy.spelling,
            "--", path,  // a path may start with "-"
        ]
        child.standardOutput = FileHandle.standardOutput
        child.standardError = FileHandle.standardError
        fflush(nil)  // our lines first, then the child's
        try child.run()
        child.waitUntilExit()
        let signalled = child.terminationReason == .uncaughtSignal
        if signalled && child.terminationStatus == SIGKILL {
            print("The child process was killed by SIGKILL.")
        } else if !signalled && child.terminationStatus == 0 {
            print("The child process exited with status 0.")
        } else {
            let ending = signalled ? "died of signal \(child.terminationStatus)" : "exited with status \(child.terminationStatus)"
            Diagnostics.printError("The demo stops: the launch in the child process \(ending).")
            RestoreCtl.exit(withError: ExitCode(1))
        }
    }

    // MARK: Words

    /// What the story's fifth launch does with the generation whose restoration crashed
    /// (R11), under `policy`, and the policy's name.
    static func afterTheCrash(under policy: CrashPolicy) -> String {
        let what =
            switch policy {
            case .discard: "invalidates that generation"
            case .fallBackToKnownGood: "invalidates that generation, then restores the newest one that once restored cleanly"
            case .retry(let attempts) where attempts > 1: "tries that generation again, its attempt 2 of \(attempts)"
            case .retry: "invalidates that generation, its one attempt spent"
            case .discardAfterForegroundDeath:
                "invalidates that generation, as it does every archive's newest after a death in the foreground"
            }
        return "\(what) (crash policy: \(DemoCrashPolicy(policy).spelling))"
    }

    static func summary(of previous: LaunchSummary?) -> String {
        guard let previous else { return "first launch" }
        return switch previous.ending {
        case .inBackground: "the previous launch ended in the background"
        case .terminated: "the previous launch terminated normally"
        case .inForeground: "the previous launch died in the foreground, after \(previous.lastEvent.rawValue)"
        }
    }

    static func summary(of report: RestoreReport) -> String {
        switch report.outcome {
        case .nothingToRestore: "nothing to restore"
        case .restored:
            "restored \(report.restoredCount) of \(report.nodes.count) screens from generation \(report.generation.map(String.init(describing:)) ?? "?")"
        case .refused(let reason): "not restored, because \(TerminalText.escapedReason(reason))"
        case .failed(let reason):
            // An error's words end with a full stop, and so does the sentence this goes into.
            "restoration failed: \(TerminalText.escaped(reason.hasSuffix(".") ? String(reason.dropLast()) : reason))"
        }
    }

    static func summary(of result: PreservationResult) -> String {
        guard let save = result.save else { return "save vetoed: \(TerminalText.escaped(result.vetoReason ?? ""))" }
        return "\(save.kind.rawValue) save, \(result.nodesWritten) of \(result.nodeCount) nodes written → generation \(save.generation)"
    }

    /// `text` as one word for a POSIX shell, escaped for the terminal: between single quotes,
    /// each `'` written `'\''`. Quotes are found by scalar, not by character: a `'` followed by
    /// a combining mark is one `Character` that is not `"'"`, yet the shell still ends the
    /// quoted word at its quote.
    static func shellQuoted(_ text: String) -> String {
        let safe = text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "/._-~+".unicodeScalars.contains(scalar))
        }
        if safe { return text }
        var quoted = "'"
        for scalar in TerminalText.escaped(text).unicodeScalars {
            if scalar == "'" { quoted += "'\\''" } else { quoted.unicodeScalars.append(scalar) }
        }
        return quoted + "'"
    }
}

/// A crash policy as the demo's `--crash-policy` option spells it.
struct DemoCrashPolicy: ExpressibleByArgument {
    let policy: CrashPolicy

    init(_ policy: CrashPolicy) {
        self.policy = policy
    }

    init?(argument: String) {
        switch argument {
        case "discard": policy = .discard
        case "fall-back": policy = .fallBackToKnownGood
        case "foreground": policy = .discardAfterForegroundDeath
        default:
            guard argument.hasPrefix("retry:"), let attempts = Int(argument.dropFirst("retry:".count)), attempts >= 1
            else { return nil }
            policy = .retry(attempts: attempts)
        }
    }

    /// The policy as the option spells it.
    var spelling: String {
        switch policy {
        case .discard: "discard"
        case .fallBackToKnownGood: "fall-back"
        case .discardAfterForegroundDeath: "foreground"
        case .retry(let attempts): "retry:\(attempts)"
        }
    }

    var defaultValueDescription: String { spelling }

    static var allValueStrings: [String] { ["discard", "fall-back", "retry:N", "foreground"] }
}
