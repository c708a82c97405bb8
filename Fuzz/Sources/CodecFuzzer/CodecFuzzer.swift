import Foundation
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
        // The typed decoder must refuse it too, but for a container with one key in two
        // Unicode forms: its check pass does not look for those, and it finds each by its bytes.
        if (try? StateDecoder(blob: blob, limits: limits)) != nil, !isOneKeyInTwoForms(error) {
            fatalError("StateDecoder accepted a blob StateValue.decode refused: \(error)")
        }
        return
    }
    do {
        let decoder = try StateDecoder(blob: blob, limits: limits)
        for key in decoder.keys {
            _ = try decoder.value(forKey: key)
            checkTypedReads(decoder, key)
        }
        guard try StateValue.encode(tree) == blob else {
            fatalError("a decodable blob re-encoded to different bytes")
        }
    } catch {
        fatalError("a blob that decodes as a tree failed another read: \(error)")
    }
}

private func isOneKeyInTwoForms(_ error: any Error) -> Bool {
    guard case .malformed(let reason, _)? = error as? StateCodingError else { return false }
    return reason == "two container keys are one string in different Unicode forms"
}

/// The typed reads (which take their common case from a quick path of their own) against
/// the `Decodable` path (which reads the value tree): where both give a value, it must be the
/// same. Either may refuse what the other converts; neither may crash.
private func checkTypedReads(_ decoder: StateDecoder, _ key: String) {
    func agree<T: Decodable>(_ type: T.Type, _ typed: T?, _ same: (T, T) -> Bool) {
        if let typed, let other = try? decoder.decode(type, forKey: key), !same(typed, other) {
            fatalError("a typed read and the Decodable path read different \(type) values for a key")
        }
    }
    agree(Bool.self, try? decoder.decode(Bool.self, forKey: key), ==)
    agree(Int.self, try? decoder.decode(Int.self, forKey: key), ==)
    agree(Int8.self, try? decoder.decode(Int8.self, forKey: key), ==)
    agree(UInt64.self, try? decoder.decode(UInt64.self, forKey: key), ==)
    agree(String.self, try? decoder.decode(String.self, forKey: key), ==)
    agree([UInt8].self, try? decoder.decode([UInt8].self, forKey: key), ==)
    // Floating-point values, dates included, by bit pattern: NaN is not equal to itself.
    agree(Double.self, try? decoder.decode(Double.self, forKey: key)) { $0.bitPattern == $1.bitPattern }
    agree(Float.self, try? decoder.decode(Float.self, forKey: key)) { $0.bitPattern == $1.bitPattern }
    agree(Date.self, try? decoder.decode(Date.self, forKey: key)) {
        $0.timeIntervalSinceReferenceDate.bitPattern == $1.timeIntervalSinceReferenceDate.bitPattern
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
