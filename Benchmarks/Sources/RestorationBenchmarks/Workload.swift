import Foundation
import RestorationArchive

/// The state of one screen: about 8 typed values, ~260 bytes encoded.
struct ScreenState: Codable, Equatable {
    var selectedIndex: Int
    var scrollOffset: Double
    var isEditing: Bool
    var userID: UInt64
    var openedAt: Date
    var title: String
    var draft: String
    var token: [UInt8]

    static func sample(_ index: Int) -> ScreenState {
        ScreenState(
            selectedIndex: index % 7, scrollOffset: Double(index) * 12.5, isEditing: index % 2 == 0,
            userID: UInt64(1_000_000 + index), openedAt: Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(index)),
            title: "Menu item detail number \(index)",
            draft: "Extra shot, no sugar, oat milk please; pick up at the side door at ten past \(index % 60)",
            token: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) })
    }

    /// The state of a screen just created, before its state is decoded.
    static let placeholder = ScreenState(
        selectedIndex: 0, scrollOffset: 0, isEditing: false, userID: 0, openedAt: Date(timeIntervalSinceReferenceDate: 0),
        title: "", draft: "", token: [])

    // MARK: ours: the keyed coder

    @inline(never)  // a symbol of its own, for profilers
    func encodeOurs() throws -> [UInt8] {
        let coder = StateEncoder()
        try encode(into: coder)
        return try coder.encodedBlob()
    }

    func encode(into coder: StateEncoder) throws {
        try coder.encode(selectedIndex, forKey: "selectedIndex")
        try coder.encode(scrollOffset, forKey: "scrollOffset")
        try coder.encode(isEditing, forKey: "isEditing")
        try coder.encode(userID, forKey: "userID")
        try coder.encode(openedAt, forKey: "openedAt")
        try coder.encode(title, forKey: "title")
        try coder.encode(draft, forKey: "draft")
        try coder.encodeBytes(token, forKey: "token")
    }

    @inline(never)  // a symbol of its own, for profilers
    static func decodeOurs(_ blob: [UInt8]) throws -> ScreenState {
        try decode(from: try StateDecoder(blob: blob))
    }

    static func decode(from coder: StateDecoder) throws -> ScreenState {
        ScreenState(
            selectedIndex: try coder.decode(Int.self, forKey: "selectedIndex"),
            scrollOffset: try coder.decode(Double.self, forKey: "scrollOffset"),
            isEditing: try coder.decode(Bool.self, forKey: "isEditing"),
            userID: try coder.decode(UInt64.self, forKey: "userID"),
            openedAt: try coder.decode(Date.self, forKey: "openedAt"),
            title: try coder.decode(String.self, forKey: "title"),
            draft: try coder.decode(String.self, forKey: "draft"),
            token: try coder.decode([UInt8].self, forKey: "token"))
    }

    // MARK: floor: a minimal hand-written length-prefixed codec (fields in a fixed order, keys
    // written but not looked up, no checks beyond bounds)

    @inline(never)  // a symbol of its own, for profilers
    func encodeFloor() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(288)
        func key(_ name: StaticString) {
            out.append(UInt8(name.utf8CodeUnitCount))
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        }
        func word(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        func bytes(_ value: [UInt8]) { word(UInt64(value.count)); out.append(contentsOf: value) }
        key("selectedIndex"); word(UInt64(bitPattern: Int64(selectedIndex)))
        key("scrollOffset"); word(scrollOffset.bitPattern)
        key("isEditing"); out.append(isEditing ? 1 : 0)
        key("userID"); word(userID)
        key("openedAt"); word(openedAt.timeIntervalSinceReferenceDate.bitPattern)
        key("title"); bytes(Array(title.utf8))
        key("draft"); bytes(Array(draft.utf8))
        key("token"); bytes(token)
        return out
    }

    @inline(never)  // a symbol of its own, for profilers
    static func decodeFloor(_ blob: [UInt8]) -> ScreenState? {
        var offset = 0
        func skipKey() -> Bool {
            guard offset < blob.count else { return false }
            offset += 1 + Int(blob[offset])
            return offset <= blob.count
        }
        func word() -> UInt64? {
            guard skipKey(), blob.count - offset >= 8 else { return nil }
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(blob[offset + index]) << (8 * UInt64(index)) }
            offset += 8
            return value
        }
        func bytes() -> [UInt8]? {
            guard let count = word(), count <= UInt64(blob.count - offset) else { return nil }
            defer { offset += Int(count) }
            return Array(blob[offset..<offset + Int(count)])
        }
        guard let selectedIndex = word(), let scrollOffset = word(), skipKey(), offset < blob.count else { return nil }
        let isEditing = blob[offset] == 1
        offset += 1
        guard let userID = word(), let openedAt = word(), let title = bytes(), let draft = bytes(), let token = bytes()
        else { return nil }
        return ScreenState(
            selectedIndex: Int(Int64(bitPattern: selectedIndex)), scrollOffset: Double(bitPattern: scrollOffset),
            isEditing: isEditing, userID: userID,
            openedAt: Date(timeIntervalSinceReferenceDate: Double(bitPattern: openedAt)),
            title: String(decoding: title, as: UTF8.self), draft: String(decoding: draft, as: UTF8.self), token: token)
    }
}

/// A complete tree of `count` restoration paths (every parent present), at most 6 identifiers
/// deep, fanout 8: at 1,000 nodes most paths are 4 or 5 deep. Six levels of 8 hold 37,449
/// paths; a bigger tree is wider (fanout 10 at 100,000 nodes).
func samplePaths(_ count: Int) throws -> [RestorationPath] {
    var fanout = 8
    while (0..<6).reduce(0, { total, depth in total + (0..<depth).reduce(1) { power, _ in power * fanout } }) < count {
        fanout += 1
    }
    var paths = [try RestorationPath("Tabs")]
    var parents = [paths[0]]
    var index = 1
    while paths.count < count {
        let parent = parents[(index - 1) / fanout]
        let path = try parent.appending(parent.depth < 5 ? "Group\(index)" : "Screen\(index)")
        paths.append(path)
        if path.depth < 6 { parents.append(path) }
        index += 1
    }
    return paths
}

/// The indexes of the nodes `save-1-percent` changes in an archive of `count`: 1% of them (at
/// least one), spread over the tree.
func onePercentIndexes(_ count: Int) -> [Int] {
    Array(stride(from: 0, to: count, by: max(1, count / max(1, count / 100))).prefix(max(1, count / 100)))
}

/// `text` and spaces up to `width` characters, one at least: a column of the printed tables.
/// `padding(toLength:)` would cut a longer text and run it into the next column.
func column(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(1, width - text.count))
}
