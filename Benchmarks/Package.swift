// swift-tools-version:6.1
// Benchmarks, in their own package so that their dependencies never reach the library's users.
// Run them with scripts/bench.
import PackageDescription

let package = Package(
    name: "RestorationBenchmarks",
    platforms: [.macOS(.v15)],
    traits: [
        .trait(
            name: "Encryption",
            description: "Builds the library with its Encryption trait and adds `ours+sealed` (scripts/bench --sealed)."
        )
    ],
    dependencies: [
        .package(
            name: "RestorationArchive", path: "..",
            traits: [.trait(name: "Encryption", condition: .when(traits: ["Encryption"]))]),
        // The `grdb` peer: the same store written idiomatically on GRDB.
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // The system SQLite again, for the floor implementation (the library's own CSQLite
        // target is not a product).
        .systemLibrary(name: "BenchSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "RestorationBenchmarks",
            dependencies: [
                .product(name: "RestorationArchive", package: "RestorationArchive"), "BenchSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
