#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value reached only under a lock: what `Synchronization.Mutex` offers, on a pthread mutex.
///
/// On Linux, `Mutex` hands a contended lock over inside the kernel (priority-inheritance
/// futexes, in its uninstrumented slow path), where ThreadSanitizer cannot see it. TSan then
/// reports accesses made under the lock as races, now and then, when two threads contend. A
/// pthread mutex is one TSan knows, so `scripts/sanitizers` reports only real races.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is reached only inside `withLock`, between lock and unlock.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: consuming sending Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // A default mutex needs no resources beyond its memory: this does not fail.
        let code = pthread_mutex_init(mutex, nil)
        precondition(code == 0, "pthread_mutex_init failed (\(code))")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Calls `body` with the value, holding the lock.
    func withLock<Result, Failure: Error>(_ body: (inout sending Value) throws(Failure) -> sending Result)
        throws(Failure) -> sending Result
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
