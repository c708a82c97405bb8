import ArgumentParser
import Foundation
import Examples
import RestorationArchive

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run an example app through a whole lifecycle against a store, to see what restorectl shows.",
        discussion: """
            The example app is the order app of the seed articles: a tab bar, a menu navigation \
            stack (Categories → Menu → MenuItemDetail), an order, web pages with per-category \
            identifiers (MILK_webview, COFFEE_webview) and a presented page, a profile form being \
            edited, and a login screen that is never preserved. The demo uses it the way an app \
            would: it launches, the user browses, the app goes to the background (a full save), \
            the user edits the order (an incremental save), the system kills the app, and the next \
            launch restores every screen. Then it prints the commands that inspect the result.
            """
    )

    @Option(name: .long, help: "The store to write; by default the per-user state directory of the app 'restorectl-demo'.")
    var db: String?

    func run() throws {
        let path: String
        do {
            path = try db ?? ArchiveStore.defaultPath(appIdentifier: "restorectl-demo")
        } catch {
            Diagnostics.fail(error, exitCode: 2)
        }
        do {
            let store = try ArchiveStore(path: path)
            print("Store: \(TerminalText.escaped(path))")
            let registry = try OrderApp.registry()

            // First launch: the app's normal start-up, then restoration (nothing yet, or what
            // an earlier demo left).
            let app = OrderApp()
            let engine = try RestorationEngine(store: store, app: OrderApp.identity, registry: registry)
            engine.saveGate = { values in
                values["MyAppVersion"] = .string(OrderApp.identity.version)
                return .save
            }
            let launch = try engine.restore(app.roots)
            print("Launch: \(summary(of: launch.report))")

            app.simulateSession()
            let full = try engine.preserve(app.roots)
            print(
                "The user browses to a latte, orders two, opens the milk page and edits their profile; "
                    + "the app moves to the background: \(summary(of: full)).")

            app.order.order.note += ", oat milk"
            let incremental = try engine.preserve(app.roots)
            print("The user edits the order note; backgrounded again: \(summary(of: incremental)).")

            // The system kills the app. Next launch: a fresh start-up, then restoration.
            let relaunched = OrderApp()
            let restoring = try RestorationEngine(store: store, app: OrderApp.identity, registry: registry)
            let restoration = try restoring.restore(relaunched.roots)
            print("Next launch, after the system killed the app (simulated with a fresh start-up): \(summary(of: restoration.report)).")
            for node in restoration.report.notRestored {
                print("  not restored: \(TerminalText.escaped(node.path.description)): \(node.outcome)")
            }
            if let detail = relaunched.menuNavigation.screens.last as? MenuItemDetail {
                print("  The menu tab shows \(TerminalText.escaped(detail.item.name)) again; the order note reads "
                    + "\"\(TerminalText.escaped(relaunched.order.order.note))\".")
            }
            print("")
            print("Inspect it:")
            print("  swift run restorectl info \(shellQuoted(path))")
            print("  swift run restorectl info \(shellQuoted(path)) --format json")
            print("  swift run restorectl show \(shellQuoted(path)) Tabs/MenuNavigation/MenuItemDetail")
            print("  swift run restorectl show \(shellQuoted(path)) Tabs/OrderNavigation/Order --generation 1")
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
    }

    private func summary(of report: RestoreReport) -> String {
        switch report.outcome {
        case .nothingToRestore: "nothing to restore"
        case .restored:
            "restored \(report.restoredCount) of \(report.nodes.count) screens from generation \(report.generation.map(String.init(describing:)) ?? "?")"
        case .refused(let reason): "not restored: \(TerminalText.escaped(reason))"
        case .failed(let reason): "restoration failed: \(TerminalText.escaped(reason))"
        }
    }

    private func summary(of result: PreservationResult) -> String {
        guard let save = result.save else { return "save vetoed: \(result.vetoReason ?? "")" }
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

