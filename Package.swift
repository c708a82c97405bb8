// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "RestorationArchive",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "RestorationArchive", targets: ["RestorationArchive"]),
        .executable(name: "restorectl", targets: ["restorectl"]),
    ],
    traits: [
        .trait(
            name: "Encryption",
            description: """
                Seals every node's state on disk with AES-GCM (apple/swift-crypto) under a key the app \
                provides (ArchiveStore.Configuration.encryptionKey). Off by default: without it, \
                swift-crypto is not built.
                """
        )
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        // The system SQLite (apt: libsqlite3-dev). Never vendored.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]
        ),
        // The schema: one `.sql` file per migration, embedded in the binary so that
        // a moved executable still works (no resource bundle to find at run time).
        .target(
            name: "StoreMigrations",
            path: "Migrations",
            exclude: ["README.md"],
            resources: [
                .embedInCode("v0001_create_store.sql"),
                .embedInCode("v0002_restore_reports.sql"),
                .embedInCode("v0003_crash_markers.sql"),
                .embedInCode("v0004_lifecycle_journal.sql"),
                .embedInCode("v0005_row_checksums.sql"),
                .embedInCode("v0006_state_sealing.sql"),
                .embedInCode("v0007_full_save_epochs.sql"),
                .embedInCode("v0008_node_rows_without_foreign_key.sql"),
                .embedInCode("v0009_node_rows_without_parent_path.sql"),
                .embedInCode("v0010_process_start.sql"),
                .embedInCode("v0011_checks_without_value_lists.sql"),
                .embedInCode("v0012_journal_checksums.sql"),
                .embedInCode("v0013_crash_marker_checksums.sql"),
            ]
        ),
        // CRC-32C with the CPU's instruction (our own code; the portable version is Swift).
        .target(name: "CCRC32C"),
        .target(
            name: "RestorationArchive",
            dependencies: [
                "CSQLite", "StoreMigrations", "CCRC32C",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Encryption"])),
            ]
        ),
        // The example app of the seed articles as plain Swift objects: used by the tests and
        // by `restorectl demo`; not part of the library product.
        .target(name: "Examples", dependencies: ["RestorationArchive"]),
        .executableTarget(
            name: "restorectl",
            dependencies: [
                "RestorationArchive",
                "Examples",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Helpers shared by every test target: temporary stores, umask, child processes.
        .target(
            name: "TestSupport",
            dependencies: ["RestorationArchive", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "RestorationArchiveTests",
            dependencies: [
                "RestorationArchive", "Examples", "StoreMigrations", "TestSupport", "CSQLite",
                .product(name: "Logging", package: "swift-log"),
            ],
            // Stores written by earlier versions of the library, read by path (MigrationTests).
            exclude: ["Fixtures"]
        ),
        // A power cut under SQLite, for the torture suite: a VFS of our own over the default one
        // that undoes the writes not yet synced when the power goes off.
        .target(name: "CPowerCut", dependencies: ["CSQLite"], path: "Tests/PowerCut"),
        // The torture suite (`scripts/torture`): crashes, power cuts, full disks, damage and
        // hostile input, each scenario in real processes against real files. Not a product.
        .executableTarget(
            name: "torture",
            dependencies: [
                "RestorationArchive", "CSQLite", "CPowerCut", "TestSupport", "Examples",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Torture"
        ),
        .testTarget(
            name: "restorectlTests",
            dependencies: [
                "restorectl",
                "RestorationArchive",
                "TestSupport",
            ]
        ),
    ]
)

for target in package.targets where target.type != .system && !["CCRC32C", "CPowerCut"].contains(target.name) {
    var settings = target.swiftSettings ?? []
    // Swift 6 language mode: complete strict concurrency checking.
    settings.append(.swiftLanguageMode(.v6))
    // `any P` must be spelled out: existentials are visible at the use site.
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    // A file only sees members of modules it imports itself.
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    // Imports are internal unless marked `public import`: no accidental re-export.
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
