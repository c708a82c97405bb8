import ArgumentParser

@main
struct RestoreCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restorectl",
        abstract: "Inspect and manage restoration archive stores.",
        discussion: """
            A store is one SQLite file holding the preserved UI state of an app: one archive per \
            scene or window, each with its recent generations. Inspecting commands open the store \
            read-only and work while the app is running.
            """,
        subcommands: [
            InfoCommand.self, TreeCommand.self, ShowCommand.self, MarkersCommand.self, EventsCommand.self,
            ReportCommand.self, DiffCommand.self, CheckCommand.self, ExportCommand.self, DiscardCommand.self,
            EraseCommand.self, DemoCommand.self,
        ]
    )
}
