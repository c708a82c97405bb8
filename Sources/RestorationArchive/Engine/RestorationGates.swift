/// The running app, as the engine writes it into every header and compares it with the
/// header of the archive it is about to restore (R5).
public struct AppIdentity: Hashable, Sendable {
    /// The app's marketing version, e.g. `"11.0"`.
    public var version: String
    /// The app's build number, e.g. `"1024"`.
    public var build: String
    /// The platform, ``SaveHeader/currentPlatform`` by default.
    public var platform: String
    /// The user-interface idiom (`"phone"`, `"pad"`, `"desktop"`), empty when irrelevant.
    public var idiom: String

    /// The running app, as its bundle names it.
    public init(version: String, build: String, platform: String = SaveHeader.currentPlatform, idiom: String = "") {
        self.version = version
        self.build = build
        self.platform = platform
        self.idiom = idiom
    }
}

/// A save gate's answer: save, with the app values it wrote, or skip this save (R5).
public enum SaveDecision: Hashable, Sendable {
    /// Save the archive.
    case save
    /// Do not save; the archive keeps its previous generation.
    case veto(reason: String)
}

/// A restore gate's answer about one archive header (R5).
public enum RestoreDecision: Hashable, Sendable {
    /// Restore this generation.
    case restore
    /// Do not restore it; the reason goes into the restore report.
    case refuse(reason: String)

    /// The default gate: restore only state written in a supported store format, by the same
    /// app version, on the same platform and idiom.
    ///
    /// Custom gates can start from it:
    ///
    /// ```swift
    /// engine.restoreGate = { header, app in
    ///     guard case .double(let version) = header.appValues["MyAppVersion"], version >= 11 else {
    ///         return .refuse(reason: "saved by a version before 11")
    ///     }
    ///     return .standard(for: header, app: app)
    /// }
    /// ```
    public static func standard(for header: ArchiveHeader, app: AppIdentity) -> RestoreDecision {
        if header.storeFormat > ArchiveStore.storeFormat {
            return .refuse(
                reason: "it was written in store format \(header.storeFormat); this library supports up to \(ArchiveStore.storeFormat)")
        }
        if header.appVersion != app.version {
            return .refuse(reason: "it was saved by app version \(header.appVersion), not \(app.version)")
        }
        if header.platform != app.platform {
            return .refuse(reason: "it was saved on \(header.platform), not \(app.platform)")
        }
        if header.idiom != app.idiom {
            return .refuse(reason: "it was saved with idiom '\(header.idiom)', not '\(app.idiom)'")
        }
        return .restore
    }
}
