/// Values by key, in a list searched in order: for the few entries an engine or this
/// process keeps (an engine's archives, the restorations and the engines' work under way).
///
/// A `Dictionary` keyed by a type of ours cost each process, at its first use, a scan of
/// every protocol conformance the process has for its key's `Hashable` (about 390,000
/// instructions on Linux, at every app's first launch: BENCHMARKS.md, "Cold launches").
/// The type itself asks nothing of `Key`; its members need `==`, whose witness the caller
/// passes, so no conformance is looked up at run time.
struct KeyedList<Key, Value> {
    private var entries: [(key: Key, value: Value)] = []
}

extension KeyedList where Key: Equatable {
    /// The value for `key`; setting `nil` removes the entry.
    subscript(key: Key) -> Value? {
        get { entries.first { $0.key == key }?.value }
        set { _ = updateValue(newValue, forKey: key) }
    }

    /// Sets `key`'s value (`nil` removes the entry) and returns the value it had: one search
    /// of the list.
    @discardableResult
    mutating func updateValue(_ value: Value?, forKey key: Key) -> Value? {
        guard let index = entries.firstIndex(where: { $0.key == key }) else {
            if let value { entries.append((key, value)) }
            return nil
        }
        let old = entries[index].value
        if let value { entries[index].value = value } else { entries.remove(at: index) }
        return old
    }
}
