extension BlobScanner {
    /// The check pass of a root container in its common shape, without errors: every key and
    /// length a one-byte varint, scalar, string and bytes values (URLs, references,
    /// arrays and nested containers go through ``skipValue(at:depth:)``, which checks them
    /// completely). Appends the entries to `entries` as ``checkMapBody(at:depth:entries:indexing:)``
    /// does.
    ///
    /// Returns `false` as soon as something is not in that shape *or is wrong*, without saying
    /// what: the caller then runs ``checkMapBody(at:depth:entries:indexing:)`` from the start,
    /// which accepts the blob or names its error. So this function may refuse what the full
    /// check accepts, never the other way round; debug builds check that they agree on every
    /// blob this one accepts (``BlobReader/readRootContainer(indexing:)``).
    ///
    /// Why it exists: the full check throws a typed error at every step, and the code around
    /// each throwing step (and the calls the compiler would not inline) cost about a third of a
    /// decode. Here every exit is a plain `return false`.
    func quickCheckRoot(entries: inout BlobEntryIndex) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        guard maximumDepth >= 1, end <= bytes.count, end > 1 else { return false }
        var offset = 1
        let count = Int(bytes[offset])
        guard count < 0x80, count <= limits.maximumElementCount else { return false }
        offset &+= 1
        let fitsInline = count <= BlobEntryIndex.inlineCapacity
        entries.reserve(count)
        var previous = KeyBytes()
        for _ in 0..<count {
            // The key: a one-byte length, valid UTF-8 (ASCII checked first), after the previous
            // key; then a tag.
            guard offset < end else { return false }
            let keyLength = Int(bytes[offset])
            let key = offset &+ 1
            guard keyLength < 0x80, keyLength <= maximumKeyLength, keyLength < end &- key else { return false }
            guard UTF8Text.isValid(UnsafeBufferPointer(rebasing: bytes[key..<key &+ keyLength])) else { return false }
            if previous.length >= 0 && Self.order(raw, previous.start, previous.length, raw, key, keyLength) >= 0 {
                return false
            }
            previous = KeyBytes(start: key, length: keyLength)
            if fitsInline {
                entries.appendInline(BlobEntry(key: key, keyLength: keyLength))
            } else {
                entries.append(BlobEntry(key: key, keyLength: keyLength))
            }
            offset = key &+ keyLength

            // The value (the key's bound check left room for its tag).
            let tagOffset = offset
            let tag = bytes[offset]
            offset &+= 1
            switch tag {
            case BlobFormat.Tag.null.rawValue, BlobFormat.Tag.false.rawValue, BlobFormat.Tag.true.rawValue:
                break
            case BlobFormat.Tag.int.rawValue, BlobFormat.Tag.uint.rawValue:
                guard quickVarint(at: &offset) != nil else { return false }
            case BlobFormat.Tag.float.rawValue:
                guard 4 <= end &- offset else { return false }
                offset &+= 4
            case BlobFormat.Tag.double.rawValue, BlobFormat.Tag.date.rawValue:
                guard 8 <= end &- offset else { return false }
                offset &+= 8
            case BlobFormat.Tag.uuid.rawValue:
                guard 16 <= end &- offset else { return false }
                offset &+= 16
            case BlobFormat.Tag.string.rawValue:
                guard let length = quickLength(at: &offset, limit: limits.maximumStringLength) else { return false }
                guard UTF8Text.isValid(UnsafeBufferPointer(rebasing: bytes[offset..<offset &+ length])) else {
                    return false
                }
                offset &+= length
            case BlobFormat.Tag.bytes.rawValue:
                guard let length = quickLength(at: &offset, limit: limits.maximumBytesLength) else { return false }
                offset &+= length
            default:
                // URLs, references, arrays, containers: the full check of one value; an
                // undefined tag: refused there too, and named by the full pass.
                offset = tagOffset
                do { try skipValue(at: &offset, depth: 1) } catch { return false }
            }
        }
        return offset == end
    }

    /// A length (a varint) no greater than `limit` whose bytes are all before ``end``.
    @inline(__always)
    private func quickLength(at offset: inout Int, limit: Int) -> Int? {
        guard let length = quickVarint(at: &offset), length <= UInt64(clamping: limit),
            length <= UInt64(end &- offset)
        else { return nil }
        return Int(length)
    }

    /// ``readVarint(at:)`` without its errors: nil for a varint that is truncated, not in its
    /// shortest form or over 64 bits.
    @inline(__always)
    private func quickVarint(at offset: inout Int) -> UInt64? {
        Self.quickVarint(bytes, end: end, at: &offset)
    }

    /// ``quickVarint(at:)`` in `bytes`, whose content ends at `end`.
    @inline(__always)
    static func quickVarint(_ bytes: UnsafeBufferPointer<UInt8>, end: Int, at offset: inout Int) -> UInt64? {
        guard offset < end else { return nil }
        let first = bytes[offset]
        guard first >= 0x80 else {
            offset &+= 1
            return UInt64(first)
        }
        var result = UInt64(first & 0x7F)
        var index = offset &+ 1
        var shift: UInt64 = 7
        while index < end {
            let byte = bytes[index]
            index &+= 1
            // A tenth byte may only carry bit 63.
            if shift == 63 && byte > 1 { return nil }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                // Shortest form: a last byte of zero would have been left out.
                guard byte != 0 else { return nil }
                offset = index
                return result
            }
            shift &+= 7
        }
        return nil
    }
}
