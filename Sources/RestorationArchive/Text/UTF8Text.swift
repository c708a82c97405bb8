/// UTF-8 checks shared by the blob reader and the SQLite layer. Most stored text is ASCII,
/// which needs no validation; the standard library's `String(validating:)` is not
/// specialized (it looks up generic metadata on every call), so only other text reaches it.
enum UTF8Text {
    /// Whether every byte is ASCII: the bytes ORed together a word at a time, the last word
    /// overlapping the one before it (most text here is keys and short strings, for which a
    /// byte-at-a-time tail would cost more than the words).
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        if count >= 8 {
            var bits: UInt64 = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            var index = 0
            while count &- index > 8 {  // index < count: no overflow
                bits |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                index &+= 8
            }
            return bits & 0x8080_8080_8080_8080 == 0
        }
        if count >= 4 {
            let bits = bytes.loadUnaligned(as: UInt32.self) | bytes.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            return bits & 0x8080_8080 == 0
        }
        var bits: UInt8 = 0
        for index in 0..<count { bits |= bytes[index] }
        return bits & 0x80 == 0
    }

    /// Whether the bytes are valid UTF-8.
    @inline(__always)
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        isASCII(UnsafeRawBufferPointer(bytes)) || String(validating: bytes, as: UTF8.self) != nil
    }

    /// The string the bytes hold, or `nil` when they are not valid UTF-8. ASCII text is made
    /// into a string without the standard library checking its bytes again.
    static func string(validating bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard isASCII(UnsafeRawBufferPointer(bytes)) else { return String(validating: bytes, as: UTF8.self) }
        return string(checked: bytes, isKnownASCII: true)
    }

    /// The string bytes already known to be valid UTF-8 hold, made without the standard
    /// library checking them again (`String(decoding:as:)` would: about 40 instructions for a
    /// short ASCII string, 300 for 30 bytes of other text). Bytes that are not valid UTF-8
    /// would make a broken `String`: every caller passes bytes it has checked (debug builds
    /// assert it).
    @inline(__always)
    static func string(checked bytes: UnsafeBufferPointer<UInt8>, isKnownASCII: Bool = false) -> String {
        assert(isValid(bytes), "bytes that were not checked")
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            return String(copying: UTF8Span(unchecked: bytes.span, isKnownASCII: isKnownASCII))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Calls `body` with the UTF-8 bytes of `string`. Native and small strings lend their own
    /// storage; `var copy = string; copy.withUTF8 { … }` would retain and release the string
    /// around the call, which costs more than reading a short key. Other strings (bridged
    /// ones) are copied once.
    @inline(__always)
    static func withBytes<Result>(of string: some StringProtocol, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        if let result = string.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(string.utf8).withUnsafeBytes(body)
    }

    /// Calls `body` with the UTF-8 bytes of `substring`: a native base string lends the
    /// substring's part of its storage (a substring's own view is a generic slice, whose
    /// contiguous-storage path cost about 280 instructions a call).
    @inline(__always)
    static func withBytes<Result>(of substring: Substring, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let base = substring.base.utf8
        let start = base.distance(from: base.startIndex, to: substring.startIndex)
        let count = substring.utf8.count
        let lent = base.withContiguousStorageIfAvailable { storage in
            body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: storage[start..<start + count])))
        }
        if let lent { return lent }
        return Array(substring.utf8).withUnsafeBytes(body)
    }

    /// `text` when it is at most `maximumBytes` bytes of UTF-8; otherwise its longest prefix
    /// of whole characters that fits with "…" after it, which says the text was cut. Prose
    /// the store keeps (why an archive was discarded, why a restoration was refused) is cut
    /// so; an identifier, which a cut would change into another, is refused instead.
    static func prose(_ text: String, upTo maximumBytes: Int) -> String {
        guard text.utf8.count > maximumBytes else { return text }
        let ellipsis = "\u{2026}"
        var kept = 0
        var end = text.startIndex
        for index in text.indices {
            let next = text.index(after: index)
            let length = text.utf8.distance(from: index, to: next)
            guard kept + length + ellipsis.utf8.count <= maximumBytes else { break }
            kept += length
            end = next
        }
        return text[..<end] + ellipsis
    }

    /// Whether two texts are the same UTF-8 bytes, as the store tells text apart (`String`'s
    /// `==` finds two Unicode forms of one text equal). The lengths first, which a native
    /// string knows: the closures of ``withBytes(of:_:)`` cost about 165 instructions a
    /// comparison, this about 90 (callgrind, a restore report's class names).
    static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8, right = rhs.utf8
        guard left.count == right.count else { return false }
        let compared = left.withContiguousStorageIfAvailable { left in
            right.withContiguousStorageIfAvailable { UnsafeRawBufferPointer(left).hasSameBytes(as: UnsafeRawBufferPointer($0)) }
        }
        return (compared ?? nil) ?? left.elementsEqual(right)
    }
}
