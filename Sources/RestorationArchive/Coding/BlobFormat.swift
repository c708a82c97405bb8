internal import CCRC32C

/// Constants of the blob format, specified in `docs/blob-format.md`.
enum BlobFormat {
    /// The format version this library writes and the newest it reads.
    static let version: UInt8 = 1

    /// The type tag that starts every value.
    enum Tag: UInt8 {
        case null = 0x00
        case `false` = 0x01
        case `true` = 0x02
        case int = 0x03  // zigzag varint
        case uint = 0x04  // varint
        case float = 0x05  // 4 bytes, IEEE 754 binary32, little-endian
        case double = 0x06  // 8 bytes, IEEE 754 binary64, little-endian
        case string = 0x07  // varint length, UTF-8
        case bytes = 0x08  // varint length, raw bytes
        case date = 0x09  // 8 bytes: binary64 seconds since 2001-01-01T00:00:00Z
        case uuid = 0x0A  // 16 bytes, RFC 4122 order
        case url = 0x0B  // varint length, UTF-8 of the absolute URL string
        case array = 0x0C  // varint count, values
        case map = 0x0D  // varint count, (key, value) pairs with strictly ascending keys
        case reference = 0x0E  // varint length, UTF-8 text form of a restoration path

        /// The tag a byte stands for, if any: `init(rawValue:)` without its call (the decoder
        /// reads one per value). The cases are declared in the order of their raw values, from
        /// 0 without gaps, so a case's in-memory value is its raw value; a test holds this.
        @inline(__always)
        init?(_ byte: UInt8) {
            guard byte <= Self.reference.rawValue else { return nil }
            self = unsafeBitCast(byte, to: Self.self)
        }

        var name: String {
            switch self {
            case .null: "null"
            case .false, .true: "bool"
            case .int, .uint: "integer"
            case .float: "float"
            case .double: "double"
            case .string: "string"
            case .bytes: "bytes"
            case .date: "date"
            case .uuid: "uuid"
            case .url: "url"
            case .array: "array"
            case .map: "container"
            case .reference: "reference"
            }
        }
    }
}

/// CRC-32C (Castagnoli; reflected polynomial 0x82F63B78, initial value and final XOR
/// 0xFFFFFFFF), as in iSCSI and ext4. The check value of "123456789" is 0xE3069283.
///
/// Computed with the CPU's CRC-32C instruction where there is one (x86-64 SSE4.2, ARMv8 CRC),
/// 8 bytes per instruction; otherwise with slicing-by-8 tables.
enum CRC32C {
    static let hasHardware = restoration_crc32c_hardware_available() == 1

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard hasHardware, let base = bytes.baseAddress else { return software(bytes) }
        return restoration_crc32c_hardware(0, base, bytes.count)
    }

    private static let table: [UInt32] = (0..<8).reduce(into: [UInt32]()) { table, slice in
        // Slicing-by-8: table[slice * 256 + byte].
        for byte in 0..<256 {
            var crc: UInt32
            if slice == 0 {
                crc = UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            } else {
                let previous = table[(slice - 1) * 256 + byte]
                crc = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
            table.append(crc)
        }
    }

    /// The table-driven computation (used where the CPU has no CRC-32C instruction).
    static func software(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        var offset = 0
        let count = bytes.count
        table.withUnsafeBufferPointer { t in
            while count - offset >= 8 {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                let low = UInt32(truncatingIfNeeded: word) ^ crc
                let high = UInt32(truncatingIfNeeded: word >> 32)
                crc = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                    ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                offset += 8
            }
            while offset < count {
                crc = (crc >> 8) ^ t[Int((crc ^ UInt32(bytes[offset])) & 0xFF)]
                offset += 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    static func checksum(_ bytes: [UInt8], count: Int) -> UInt32 {
        bytes.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }
}
