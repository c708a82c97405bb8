#if Encryption
import Foundation
import RestorationArchive

/// `--key-file`: the store's encryption key, read from a file the developer keeps it in.
///
/// The file holds the key's 32 bytes as they are, or as 64 hexadecimal digits (surrounding
/// white space ignored). Its bytes are never printed.
enum KeyFile {
    /// The most a key file is read of: anything longer is not a key.
    private static let readLimit = 4096

    /// The key in the file at `path`, or why there is none.
    static func key(at path: String) -> Result<StateEncryptionKey, KeyFileError> {
        let bytes: [UInt8]
        switch read(path) {
        case .success(let read): bytes = read
        case .failure(let reason): return .failure(KeyFileError(path: path, reason: "it cannot be read (\(reason))"))
        }
        if bytes.count == 32, let key = try? StateEncryptionKey(bytes: bytes) { return .success(key) }
        let text = bytes.drop { isWhiteSpace($0) }.reversed().drop { isWhiteSpace($0) }.reversed()
        if text.count == 64, let decoded = hexadecimal(Array(text)), let key = try? StateEncryptionKey(bytes: decoded) {
            return .success(key)
        }
        return .failure(KeyFileError(path: path, reason: "it holds neither 32 bytes nor 64 hexadecimal digits"))
    }

    /// A warning when users other than the file's owner have any access to it (its mode has
    /// group or other bits, as `ssh` refuses for a private key): a key's file should be the
    /// owner's alone. `nil` when it is, or when its mode cannot be read. Not escaped: printed
    /// through ``Diagnostics/printWarning(_:)``.
    static func exposure(of path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & 0o077 != 0 else { return nil }
        let mode = String(status.st_mode & 0o777, radix: 8)
        return "the key file '\(path)' is open to users other than its owner (mode 0\(mode)): "
            + "make it owner-only (chmod 600 '\(path)')"
    }

    /// The file's first bytes, or the system's words for why they cannot be read.
    private static func read(_ path: String) -> Result<[UInt8], SystemReason> {
        guard let file = fopen(path, "rb") else { return .failure(SystemReason(errno)) }
        defer { fclose(file) }
        var bytes = [UInt8](repeating: 0, count: readLimit + 1)
        let count = fread(&bytes, 1, bytes.count, file)
        guard ferror(file) == 0 else { return .failure(SystemReason(errno)) }
        return .success(Array(bytes[0..<count]))
    }

    /// `strerror`'s words for an `errno`.
    struct SystemReason: Error, CustomStringConvertible {
        let description: String
        init(_ code: Int32) { description = String(cString: strerror(code)) }
    }

    private static func isWhiteSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func hexadecimal(_ digits: [UInt8]) -> [UInt8]? {
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}

/// Why a key file cannot be used; says nothing of its content. Not escaped: printed through
/// ``Diagnostics/fail(_:exitCode:)``, which escapes it (the path escaped here too showed each
/// backslash of an escape twice).
struct KeyFileError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "The key file '\(path)' cannot be used: \(reason)." }
}
#endif
