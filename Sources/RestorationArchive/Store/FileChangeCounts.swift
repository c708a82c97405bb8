/// How many times a list of this process changed, per store file: a list searched in order
/// (it holds an entry per store file the process opened).
struct FileChangeCounts {
    private var counts: [(file: StoreFileIdentity, changes: UInt64)] = []

    subscript(file: StoreFileIdentity) -> UInt64 { counts.first { $0.file == file }?.changes ?? 0 }

    /// Counts one change of `file`'s entries.
    mutating func count(_ file: StoreFileIdentity) {
        if let index = counts.firstIndex(where: { $0.file == file }) {
            counts[index].changes &+= 1
        } else {
            counts.append((file, 1))
        }
    }
}
