import ArgumentParser
import RestorationArchive

/// How a command prints.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text
    case json
}

/// `--format text|json`, for the commands that print in both.
struct FormatOptions: ParsableArguments {
    @Option(name: .long, help: "Output format: text or json.")
    var format: OutputFormat = .text
}

/// The options shared by every command that inspects a store.
struct StoreOptions: ParsableArguments {
    @Argument(help: "The path of the store (an SQLite file written by the RestorationArchive library).")
    var db: String

    @Option(name: .long, help: "Only this archive (one per scene or window; 'main' by default in apps without scenes).")
    var archive: String?

    #if Encryption
    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp(
            "A file holding the store's encryption key (32 bytes, or 64 hexadecimal digits): sealed states are then opened.",
            valueName: "file"))
    var keyFile: String?
    #endif

    // The key file is read once, when the store is opened (`openReadOnly()`): a file read
    // here first could not be read again when it is a pipe (`--key-file <(pass show key)`).
    func validate() throws {
        if let archive {
            do {
                _ = try ArchiveName(archive)
            } catch {
                throw ValidationError("\(TerminalText.escaped(error.description))")
            }
        }
    }

    /// The selected archive, if any.
    var archiveName: ArchiveName? {
        archive.flatMap { try? ArchiveName($0) }
    }

    /// The name of the selected archive (exiting with status 1 when the store has no archive
    /// of that name), or of every archive: read without checking the archives, so that one
    /// damaged archive does not hide the others.
    ///
    /// When the list cannot be made (the store lost archives: damage to its table of
    /// archives), its damage is added to `unreadable` and the command goes on with what it
    /// reads without the list: the selected archive, or none.
    func selectedArchiveNames(in store: ArchiveStore, unreadable: inout [ArchiveStoreError]) throws(ArchiveStoreError)
        -> [ArchiveName]
    {
        guard let names = try Diagnostics.unlessDamaged(&unreadable, { () throws(ArchiveStoreError) in try store.archiveNames() })
        else { return archiveName.map { [$0] } ?? [] }
        guard let name = archiveName else { return names }
        return [Self.stored(name, among: names, exitCode: 1)]
    }

    /// The archive named by --archive, or `main`; exits with status 1 when the store has no
    /// archive of that name (read without checking the archives, as ``selectedArchiveNames(in:)``),
    /// or cannot say.
    func selectedArchive(in store: ArchiveStore) -> ArchiveName {
        let name = archiveName ?? .main
        do {
            return Self.stored(name, among: try store.archiveNames(), exitCode: 1)
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
    }

    /// `name` as the store holds it, among `names`: itself, or else the one archive whose
    /// name is the same text in another Unicode form (a person types `Café` in composed
    /// characters for the archive that `info` shows as `Café`, saved in decomposed ones,
    /// which the store tells apart by their bytes). Exits with `exitCode` when there is none,
    /// or when several archives are that text, naming each by its characters: they print
    /// alike.
    static func stored(_ name: ArchiveName, among names: [ArchiveName], exitCode: Int32) -> ArchiveName {
        if names.contains(name) { return name }
        let forms = names.filter { $0.rawValue == name.rawValue }
        if forms.count == 1 { return forms[0] }
        guard !forms.isEmpty else { Diagnostics.fail(ArchiveStoreError.archiveNotFound(name), exitCode: exitCode) }
        let spelled = forms.map { form in
            "'" + form.rawValue.unicodeScalars.map { $0.isASCII ? String($0) : "<U+\(Self.hex($0))>" }.joined() + "'"
        }
        Diagnostics.printError(
            "No archive named '\(name)' in those characters: \(forms.count) archives are that text in other Unicode "
                + "forms, which print alike (\(spelled.joined(separator: ", "))); name one in its own characters.")
        RestoreCtl.exit(withError: ExitCode(exitCode))
    }

    /// A scalar's number as `U+` writes it: four hexadecimal digits at least.
    private static func hex(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// A generation of the selected archive (`main` by default), the newest when `generation`
    /// is `nil`; exits with status 1 and a one-line explanation when there is none. With
    /// `keepingDamagedNodes`, a node whose checksum does not match is kept and named in
    /// `nodeDamage` (`ArchiveStore.inspectionSnapshot`) instead of failing the read.
    func snapshot(in store: ArchiveStore, generation: Int64? = nil, keepingDamagedNodes: Bool = false) -> ArchiveSnapshot {
        let generation = generation.map { Generation(rawValue: $0) }
        do {
            let archive = selectedArchive(in: store)
            let read =
                keepingDamagedNodes
                ? try store.inspectionSnapshot(of: archive, generation: generation)
                : try store.snapshot(of: archive, generation: generation)
            guard let found = read else { Self.failRetainingNothing(archive, in: store) }
            return found
        } catch {
            Diagnostics.fail(error, exitCode: 1)
        }
    }

    /// Exits with status 1 saying why `archive`, which the store had, retains no generation.
    static func failRetainingNothing(_ archive: ArchiveName, in store: ArchiveStore) -> Never {
        let summary = Result { () throws(ArchiveStoreError) -> ArchiveSummary? in try store.summary(of: archive) }
        Diagnostics.printError(retainingNothing(archive, summary: summary))
        RestoreCtl.exit(withError: ExitCode(1))
    }

    /// Why `archive` retains no generation, by its summary read after: discarded; gone since
    /// the store listed it (an app erased the store, or discarded the archive and the store
    /// forgot it, while the command read); saved again since (erased, then saved); never
    /// saved; or, when the summary cannot be read, why (damage, a store that kept changing).
    /// Not escaped: printed through ``Diagnostics/printError(_:)``, which escapes it (the
    /// reason escaped here too showed each backslash of an escape twice).
    static func retainingNothing(_ archive: ArchiveName, summary: Result<ArchiveSummary?, ArchiveStoreError>) -> String {
        switch summary {
        case .success(let summary?):
            if case .discarded(let reason, _) = summary.state {
                return "Archive '\(archive)' was discarded (\(TerminalText.shownReason(reason))): it retains no generation."
            }
            if !summary.generations.isEmpty {
                return "Archive '\(archive)' was saved again while restorectl read it (an app is writing the store); try again."
            }
        case .success(nil):
            return ArchiveStoreError.archiveNotFound(archive).description
        case .failure(let error):
            return error.description
        }
        return "Archive '\(archive)' has no saved generation."
    }

    /// Opens the store read-only (with the key of `--key-file`, when given), or exits with
    /// status 2 and a one-line explanation; a key file that holds no key, or cannot be read,
    /// is bad usage (status 64).
    func openReadOnly() throws -> ArchiveStore {
        var configuration = ArchiveStore.Configuration()
        #if Encryption
        if let keyFile {
            switch KeyFile.key(at: keyFile) {
            case .success(let key):
                configuration.encryptionKey = key
                if let warning = KeyFile.exposure(of: keyFile) { Diagnostics.printWarning(warning) }
            case .failure(let error): Diagnostics.fail(error, exitCode: ExitCode.validationFailure.rawValue)
            }
        }
        #endif
        do {
            return try ArchiveStore(
                path: db, mode: .readOnly, configuration: configuration, logger: Diagnostics.libraryWarnings)
        } catch {
            Diagnostics.failOpening(db, error)
        }
    }
}
