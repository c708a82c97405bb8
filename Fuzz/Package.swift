// swift-tools-version:6.1
// The codec's libFuzzer target, in its own package so that its build flags never touch the
// library's users. Run it with scripts/fuzz-codec.
import PackageDescription

let package = Package(
    name: "RestorationArchiveFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "RestorationArchive", path: "..")],
    targets: [
        .executableTarget(
            name: "CodecFuzzer",
            dependencies: [.product(name: "RestorationArchive", package: "RestorationArchive")],
            swiftSettings: [
                .swiftLanguageMode(.v6),
                // libFuzzer provides `main`.
                .unsafeFlags(["-parse-as-library"]),
            ]
        )
    ]
)
