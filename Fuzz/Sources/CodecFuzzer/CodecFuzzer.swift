import RestorationArchive

/// libFuzzer's entry point: decodes arbitrary bytes as a blob, twice — as they are, and sealed
/// with a valid CRC-32C so that mutations get past the checksum into the parser.
///
/// Any input must give either a value or a `StateCodingError`; a crash, a hang or an
/// allocation beyond the limits (AddressSanitizer, libFuzzer's -rss_limit_mb and -timeout) is a
/// bug. A blob that decodes must re-encode to exactly the same bytes: the format has one
/// encoding per value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecode(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    check(bytes)
    check(sealed(bytes))
    return 0
}

private func check(_ blob: [UInt8]) {
    let limits = DecodingLimits(maximumBlobSize: 1 << 20, maximumDepth: 32, maximumElementCount: 4096)
    let tree: [String: StateValue]
    do {
        tree = try StateValue.decode(blob: blob, limits: limits)
    } catch {
        // The typed decoder must refuse it too.
        if (try? StateDecoder(blob: blob, limits: limits)) != nil {
            fatalError("StateDecoder accepted a blob StateValue.decode refused: \(error)")
        }
        return
    }
    do {
        let decoder = try StateDecoder(blob: blob, limits: limits)
        for key in decoder.keys { _ = try decoder.value(forKey: key) }
        guard try StateValue.encode(tree) == blob else {
            fatalError("a decodable blob re-encoded to different bytes")
        }
    } catch {
        fatalError("a blob that decodes as a tree failed another read: \(error)")
    }
}

/// `content` followed by its CRC-32C (little-endian), computed bit by bit — independently of
/// the library's table-driven implementation.
private func sealed(_ content: [UInt8]) -> [UInt8] {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in content {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
    }
    crc ^= 0xFFFF_FFFF
    return content + [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)]
}
