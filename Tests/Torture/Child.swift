import Foundation

/// A child process whose standard output is read line by line while it runs: a copy of this
/// executable in a child mode, or `restorectl`.
final class Child {
    private let process = Process()
    private let output = Pipe()
    private var buffer: [UInt8] = []
    private var ended = false
    private(set) var lines: [String] = []

    /// The path of this executable.
    static let torture = "/proc/self/exe"
    /// `restorectl`, built next to this executable.
    static let restorectl = URL(filePath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        .deletingLastPathComponent().appending(path: "restorectl").path

    init(_ executable: String = Child.torture, _ arguments: [String]) throws {
        process.executableURL = URL(filePath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var processIdentifier: pid_t { process.processIdentifier }

    /// The next line the child writes, or `nil` when it closed its output or `timeout`
    /// passed first.
    func nextLine(timeout: Double = 30) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                lines.append(line)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            guard !ended, left > 0, fill(timeoutMilliseconds: Int32(left * 1000)) else { return nil }
        }
    }

    /// Every line the child writes until it closes its output (within `timeout`).
    @discardableResult
    func remainingLines(timeout: Double = 60) -> [String] {
        var result: [String] = []
        while let line = nextLine(timeout: timeout) { result.append(line) }
        return result
    }

    /// Reads what is available; `false` at end of output or timeout.
    private func fill(timeoutMilliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, timeoutMilliseconds) > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = read(descriptor.fd, &chunk, chunk.count)
        guard count > 0 else {
            ended = true
            return false
        }
        buffer += chunk[..<count]
        return true
    }

    func kill(_ signal: Int32 = SIGKILL) {
        _ = Foundation.kill(process.processIdentifier, signal)
    }

    /// Waits for the child to end (killing it after `timeout` seconds): whether it was
    /// killed by a signal, and its exit status or signal.
    @discardableResult
    func wait(timeout: Double = 60) -> (signalled: Bool, status: Int32, timedOut: Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        let timedOut = process.isRunning
        if timedOut { kill() }
        process.waitUntilExit()
        return (process.terminationReason == .uncaughtSignal, process.terminationStatus, timedOut)
    }

    /// Runs a child to its end and returns its output lines and how it ended.
    static func run(_ executable: String = Child.torture, _ arguments: [String], timeout: Double = 60) throws
        -> (lines: [String], signalled: Bool, status: Int32, timedOut: Bool)
    {
        let child = try Child(executable, arguments)
        let lines = child.remainingLines(timeout: timeout)
        let ending = child.wait(timeout: 5)
        return (lines, ending.signalled, ending.status, ending.timedOut)
    }
}

/// Writes one line to standard output at once, unbuffered, so that a parent sees it even if
/// this process is killed right after.
func announce(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
