/// One schema migration: an identifier and its SQL text.
package struct StoreMigration: Sendable {
    /// The file name without `.sql`, e.g. `v0001_create_store`. Recorded in the store.
    package let identifier: String
    /// The SQL, as embedded from `Migrations/<identifier>.sql`.
    package let sql: String

    /// A migration from its identifier and SQL text (tests build their own).
    package init(identifier: String, sql: String) {
        self.identifier = identifier
        self.sql = sql
    }

    init(_ identifier: String, _ bytes: [UInt8]) {
        self.init(identifier: identifier, sql: String(decoding: bytes, as: UTF8.self))
    }
}

/// The store's migrations, in the order they are applied.
package enum StoreMigrations {
    package static let all: [StoreMigration] = [
        StoreMigration("v0001_create_store", PackageResources.v0001_create_store_sql),
        StoreMigration("v0002_restore_reports", PackageResources.v0002_restore_reports_sql),
        StoreMigration("v0003_crash_markers", PackageResources.v0003_crash_markers_sql),
        StoreMigration("v0004_lifecycle_journal", PackageResources.v0004_lifecycle_journal_sql),
        StoreMigration("v0005_row_checksums", PackageResources.v0005_row_checksums_sql),
        StoreMigration("v0006_state_sealing", PackageResources.v0006_state_sealing_sql),
        StoreMigration("v0007_full_save_epochs", PackageResources.v0007_full_save_epochs_sql),
        StoreMigration(
            "v0008_node_rows_without_foreign_key", PackageResources.v0008_node_rows_without_foreign_key_sql),
        StoreMigration(
            "v0009_node_rows_without_parent_path", PackageResources.v0009_node_rows_without_parent_path_sql),
        StoreMigration("v0010_process_start", PackageResources.v0010_process_start_sql),
        StoreMigration(
            "v0011_checks_without_value_lists", PackageResources.v0011_checks_without_value_lists_sql),
        StoreMigration("v0012_journal_checksums", PackageResources.v0012_journal_checksums_sql),
        StoreMigration("v0013_crash_marker_checksums", PackageResources.v0013_crash_marker_checksums_sql),
    ]
}
