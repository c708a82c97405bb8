#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Appends values in the blob format.
struct BlobWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    // MARK: Blob frame

    mutating func startBlob() {
        bytes.append(BlobFormat.version)
    }

    /// Appends the CRC-32C of everything written, and returns the blob.
    mutating func finishBlob() throws(StateCodingError) -> [UInt8] {
        guard bytes.count + 4 <= DecodingLimits.default.maximumBlobSize else {
            throw .unencodable(key: "", reason: "the blob would exceed \(DecodingLimits.default.maximumBlobSize) bytes")
        }
        let crc = CRC32C.checksum(bytes, count: bytes.count)
        appendFixed32(crc)
        return bytes
    }

    // MARK: Primitives

    @inline(__always)
    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    @inline(__always)
    mutating func appendFixed32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { append($0) }
    }

    @inline(__always)
    mutating func appendFixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { append($0) }
    }

    /// Appends raw bytes. Through a typed buffer: appending an `UnsafeRawBufferPointer`
    /// itself copies byte by byte, a typed buffer is one `memcpy`.
    @inline(__always)
    mutating func append(_ raw: UnsafeRawBufferPointer) {
        raw.withMemoryRebound(to: UInt8.self) { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    mutating func appendLengthPrefixed(_ string: String) {
        UTF8Text.withBytes(of: string) { appendLengthPrefixed($0) }
    }

    @inline(__always)
    mutating func appendLengthPrefixed(_ raw: UnsafeRawBufferPointer) {
        appendVarint(UInt64(raw.count))
        append(raw)
    }

    // MARK: Tagged values

    @inline(__always) mutating func tag(_ tag: BlobFormat.Tag) { bytes.append(tag.rawValue) }

    mutating func writeNull() { tag(.null) }
    mutating func write(_ value: Bool) { tag(value ? .true : .false) }

    mutating func write(_ value: Int64) {
        tag(.int)
        appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func write(_ value: UInt64) {
        tag(.uint)
        appendVarint(value)
    }

    mutating func write(_ value: Float) {
        tag(.float)
        appendFixed32(value.bitPattern)
    }

    mutating func write(_ value: Double) {
        tag(.double)
        appendFixed64(value.bitPattern)
    }

    mutating func write(_ value: String) {
        tag(.string)
        appendLengthPrefixed(value)
    }

    mutating func write(bytes value: [UInt8]) {
        tag(.bytes)
        value.withUnsafeBytes { appendLengthPrefixed($0) }
    }

    mutating func write(_ value: Data) {
        tag(.bytes)
        value.withUnsafeBytes { appendLengthPrefixed($0) }
    }

    mutating func write(_ value: Date) {
        tag(.date)
        appendFixed64(value.timeIntervalSinceReferenceDate.bitPattern)
    }

    mutating func write(_ value: UUID) {
        tag(.uuid)
        withUnsafeBytes(of: value.uuid) { append($0) }
    }

    mutating func write(_ value: URL) {
        tag(.url)
        appendLengthPrefixed(value.absoluteString)
    }

    mutating func write(_ value: RestorationPath) {
        tag(.reference)
        appendLengthPrefixed(value.description)
    }

    /// Writes any value of the tree; containers with their keys sorted.
    mutating func write(_ value: StateValue, depth: Int) throws(StateCodingError) {
        switch value {
        case .null: writeNull()
        case .bool(let value): write(value)
        case .int(let value): write(value)
        case .uint(let value): write(value)
        case .float(let value): write(value)
        case .double(let value): write(value)
        case .string(let value): write(value)
        case .bytes(let value): write(bytes: value)
        case .date(let value): write(value)
        case .uuid(let value): write(value)
        case .url(let value): write(value)
        case .reference(let value): write(value)
        case .array(let values):
            try checkDepth(depth + 1)
            tag(.array)
            appendVarint(UInt64(values.count))
            for value in values { try write(value, depth: depth + 1) }
        case .container(let values):
            try checkDepth(depth + 1)
            tag(.map)
            try writeMapBody(values, depth: depth + 1)
        }
    }

    /// Writes a container's count and entries (no tag), keys in ascending UTF-8 order.
    mutating func writeMapBody(_ values: [String: StateValue], depth: Int) throws(StateCodingError) {
        try checkDepth(depth)
        let entries = values.sorted { StateEncoder.precedes($0.key, $1.key) }
        appendVarint(UInt64(entries.count))
        for (key, value) in entries {
            try StateEncoder.checkKeyLength(key)
            appendLengthPrefixed(key)
            try write(value, depth: depth)
        }
    }

    func checkDepth(_ depth: Int) throws(StateCodingError) {
        guard depth <= DecodingLimits.default.maximumDepth else {
            throw .unencodable(
                key: "", reason: "containers nest deeper than \(DecodingLimits.default.maximumDepth) levels")
        }
    }
}
