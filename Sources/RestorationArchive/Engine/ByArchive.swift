/// Values by archive name, for what an engine keeps of its few archives: a list searched in
/// order. A `Dictionary` keyed by ``ArchiveName`` cost each process, at its first use, a scan
/// of every protocol conformance the process has (about 390,000 instructions on Linux, at
/// every app's first launch: BENCHMARKS.md, "Cold launches").
struct ByArchive<Value> {
    private var entries: [(archive: ArchiveName, value: Value)] = []

    subscript(archive: ArchiveName) -> Value? {
        get { entries.first { $0.archive == archive }?.value }
        set {
            if let index = entries.firstIndex(where: { $0.archive == archive }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((archive, newValue))
            }
        }
    }
}
