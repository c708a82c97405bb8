public import Foundation

/// What a child process did.
public struct ProcessOutcome: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
    /// Whether the process was killed by a signal rather than exiting.
    public var wasSignalled: Bool
}

/// Kills a child process and waits for it. SIGKILL, not `terminate()`: a child of the test
/// runner inherits a signal mask that blocks SIGTERM (a `sleep` lived on for its 30 seconds).
public func stop(_ process: Process) {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
}

/// Runs `body` with a process that runs (`sleep 30`) until `body` returns, then kills it: a
/// process id that is in use, started just before `body`.
public func withRunningProcess<Result>(_ body: (Process) throws -> Result) throws -> Result {
    let process = Process()
    process.executableURL = URL(filePath: "/bin/sleep")
    process.arguments = ["30"]
    try process.run()
    defer { stop(process) }
    return try body(process)
}

/// Runs `body` while another process (Python's `sqlite3`) has the database at `path` open
/// and has run `statement` on it (`BEGIN IMMEDIATE` holds the write lock; a `SELECT` maps
/// the log's index), then kills that process. Returns whether `body` ran: not when the
/// process ended before it was ready.
public func withSQLiteHolder(of path: String, having statement: String, _ body: () throws -> Void) throws -> Bool {
    let holder = Process()
    holder.executableURL = URL(filePath: "/usr/bin/env")
    holder.arguments = [
        "python3", "-c",
        """
        import sqlite3, sys, time
        c = sqlite3.connect(sys.argv[1], isolation_level=None)
        c.execute(sys.argv[2]).fetchall()
        print('ready', flush=True)
        time.sleep(30)
        """,
        path, statement,
    ]
    let output = Pipe()
    holder.standardOutput = output
    try holder.run()
    defer { stop(holder) }
    // Blocks until the holder is ready (or it ends, with nothing).
    guard String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready") else {
        return false
    }
    try body()
    return true
}

/// Runs `statements` on the database at `path` in one transaction of another process
/// (Python's `sqlite3`), with `CHECK` constraints off, as damage or another program would
/// write them. The outcome's status is 0 when every statement ran.
public func runSQLite(on path: String, _ statements: [String]) throws -> ProcessOutcome {
    let script = """
        import sqlite3, sys
        c = sqlite3.connect(sys.argv[1])
        c.execute("PRAGMA ignore_check_constraints = ON")
        for statement in sys.argv[2:]: c.execute(statement)
        c.commit()
        """
    return try runProcess("/usr/bin/env", ["python3", "-c", script, path] + statements)
}

/// Runs an executable to completion (killing it after `timeout` seconds) and captures its output.
public func runProcess(_ executable: String, _ arguments: [String], timeout: Double = 60) throws -> ProcessOutcome {
    let process = Process()
    process.executableURL = URL(filePath: executable)
    process.arguments = arguments
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read both pipes while the process runs, so a full pipe never blocks it.
    let group = DispatchGroup()
    nonisolated(unsafe) var outData = Data()
    nonisolated(unsafe) var errData = Data()
    DispatchQueue.global().async(group: group) { outData = output.fileHandleForReading.readDataToEndOfFile() }
    DispatchQueue.global().async(group: group) { errData = error.fileHandleForReading.readDataToEndOfFile() }
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(10_000) }
    if process.isRunning { stop(process) }
    process.waitUntilExit()
    group.wait()
    return ProcessOutcome(
        status: process.terminationStatus,
        standardOutput: String(decoding: outData, as: UTF8.self),
        standardError: String(decoding: errData, as: UTF8.self),
        wasSignalled: process.terminationReason == .uncaughtSignal)
}

/// The path of an executable product built next to the running test bundle.
public func builtProduct(_ name: String) -> String {
    URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: name).path
}

extension ProcessOutcome {
    /// What the process printed, read as a JSON object (a command's `--format json`).
    /// - Throws: when it is not one.
    public func jsonObject() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(standardOutput.utf8)) as? [String: Any] else {
            throw NotAJSONObject(printed: standardOutput)
        }
        return object
    }
}

/// What a process printed where a JSON object was expected.
public struct NotAJSONObject: Error, CustomStringConvertible {
    public let printed: String
    public var description: String { "not a JSON object: \(printed.prefix(500))" }
}
