public import Logging
import Synchronization

/// A log handler that keeps every message (at every level) for a test to read.
public final class LogSink: LogHandler, Sendable {
    private let stored = Mutex<[String]>([])

    public init() {}

    /// Every message logged so far, with its metadata.
    public var messages: [String] { stored.withLock { $0 } }

    public var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    public var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    public func log(event: LogEvent) {
        let metadata = event.metadata.map { " \($0)" } ?? ""
        stored.withLock { $0.append(event.message.description + metadata) }
    }
}
