// swift-tools-version:6.1
// Benchmarks, in their own package so that their dependencies never reach the library's users.
// Run them with scripts/bench.
import PackageDescription

let package = Package(
    name: "RestorationBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "RestorationArchive", path: "..")],
    targets: [
        // The system SQLite again, for the floor implementation (the library's own CSQLite
        // target is not a product).
        .systemLibrary(name: "BenchSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "RestorationBenchmarks",
            dependencies: [.product(name: "RestorationArchive", package: "RestorationArchive"), "BenchSQLite"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
