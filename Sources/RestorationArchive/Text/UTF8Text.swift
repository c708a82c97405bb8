/// UTF-8 checks shared by the blob reader and the SQLite layer. Most stored text is ASCII,
/// which needs no validation; the standard library's `String(validating:)` is not
/// specialized (it looks up generic metadata on every call), so only other text reaches it.
enum UTF8Text {
    /// Whether every byte is ASCII, checked 8 bytes at a time.
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while bytes.count - index >= 8 {
            if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }

    /// Whether the bytes are valid UTF-8.
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        isASCII(UnsafeRawBufferPointer(bytes)) || String(validating: bytes, as: UTF8.self) != nil
    }

    /// The string the bytes hold, or `nil` when they are not valid UTF-8.
    static func string(validating bytes: UnsafeBufferPointer<UInt8>) -> String? {
        isASCII(UnsafeRawBufferPointer(bytes))
            ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
    }
}
