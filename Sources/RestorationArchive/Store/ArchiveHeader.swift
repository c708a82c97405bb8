#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What the app says about itself when it saves: it becomes the saved generation's header,
/// which the restore gate reads at the next launch.
public struct SaveHeader: Hashable, Sendable {
    /// The app's marketing version, e.g. `"11.0"`.
    public var appVersion: String
    /// The app's build number, e.g. `"1024"`.
    public var appBuild: String
    /// The platform the state was saved on, e.g. `"linux"`; see ``SaveHeader/currentPlatform``.
    public var platform: String
    /// The user-interface idiom, e.g. `"phone"`, `"pad"`, `"desktop"`; empty when irrelevant.
    public var idiom: String
    /// App-level values, such as `["MyAppVersion": .string("11.0")]`.
    public var appValues: HeaderValues

    /// A header for the next save.
    public init(
        appVersion: String, appBuild: String, platform: String = SaveHeader.currentPlatform, idiom: String = "",
        appValues: HeaderValues = [:]
    ) {
        self.appVersion = appVersion
        self.appBuild = appBuild
        self.platform = platform
        self.idiom = idiom
        self.appValues = appValues
    }

    /// The longest ``appVersion``, ``appBuild``, ``platform`` or ``idiom`` a save accepts, in
    /// bytes of UTF-8; a longer one is refused as ``ArchiveStoreError/invalidHeaderValue(_:)``.
    /// They name a version or a device, which a cut would change into another.
    public static let maximumTextLength = 256

    /// The header's app values encoded for the store (``HeaderValue/encode(_:)``), once its
    /// texts are checked: what a save writes, or the reason it refuses the header.
    func encodedAppValues() throws(ArchiveStoreError) -> [UInt8] {
        if let problem = textTooLong(names: ["appVersion", "appBuild", "platform", "idiom"]) {
            throw .invalidHeaderValue("the header's \(problem)")
        }
        return try HeaderValue.encode(appValues)
    }

    /// The first of the header's texts longer than ``maximumTextLength``, named by `names`
    /// (the app version's, the build's, the platform's, the idiom's) with its length
    /// ("appVersion is 300 bytes of UTF-8; …"), or `nil` when none is.
    func textTooLong(names: @autoclosure () -> [String]) -> String? {
        // At every save: no array is made unless a text is too long.
        let longest = max(appVersion.utf8.count, appBuild.utf8.count, platform.utf8.count, idiom.utf8.count)
        guard longest > Self.maximumTextLength else { return nil }
        for (name, text) in zip(names(), [appVersion, appBuild, platform, idiom]) where text.utf8.count > Self.maximumTextLength {
            return "\(name) is \(text.utf8.count) bytes of UTF-8; at most \(Self.maximumTextLength) are accepted"
        }
        return nil
    }

    /// The operating system this code was built for: `"linux"`, `"macos"`, `"ios"`, …
    public static var currentPlatform: String {
        #if os(Linux)
        "linux"
        #elseif os(macOS)
        "macos"
        #elseif os(iOS)
        "ios"
        #elseif os(tvOS)
        "tvos"
        #elseif os(watchOS)
        "watchos"
        #elseif os(visionOS)
        "visionos"
        #elseif os(Windows)
        "windows"
        #else
        "unknown"
        #endif
    }
}

/// Whether an archive may be restored.
public enum ArchiveState: Hashable, Sendable {
    /// Saved and never refused: a candidate for restoration.
    case valid
    /// Must not be restored (a crash during its restoration, or the app's decision).
    case invalidated(reason: String, at: Date)
    /// Thrown away (an explicit quit, a closed scene): no state remains.
    case discarded(reason: String, at: Date)
}

/// The header of one saved generation of an archive.
public struct ArchiveHeader: Hashable, Sendable {
    /// The archive this header belongs to.
    public var archive: ArchiveName
    /// The generation this header describes.
    public var generation: Generation
    /// The store format the generation was written in (``ArchiveStore/storeFormat`` then).
    public var storeFormat: Int
    /// The app's version when it saved.
    public var appVersion: String
    /// The app's build when it saved.
    public var appBuild: String
    /// The platform it saved on.
    public var platform: String
    /// The user-interface idiom it saved with.
    public var idiom: String
    /// When the archive was first created.
    public var createdAt: Date
    /// When this generation was saved.
    public var savedAt: Date
    /// Whether this generation may be restored.
    public var state: ArchiveState
    /// The app-level values written with this generation.
    public var appValues: HeaderValues
    /// The number of nodes in this generation.
    public var nodeCount: Int
    /// The total size of the nodes' encoded state, in bytes.
    public var totalBytes: Int
    /// Whether this generation was written in full or as changes to the previous one.
    public var saveKind: SaveKind
}

/// How a generation was written.
public enum SaveKind: String, Hashable, Sendable {
    /// Every node was written.
    case full
    /// Only the nodes that changed were written; the others are shared with the previous generation.
    case incremental
}
