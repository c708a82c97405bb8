import Foundation
import GRDB

// The peers: what an app developer would otherwise use to keep the same archive. Each keeps
// the whole tree of screens (path, parent, class, version and the screen's state) and does
// the same operations as `ours` and `floor`. None of them has checksums, generations or a
// crash guard; the file peers rewrite the whole archive on every save.

/// One node of an archive as an app would model it with `Codable`.
struct PeerNode: Codable {
    var path: String
    var parent: String?
    var className: String
    var version: Int
    var state: ScreenState
}

// MARK: json-file and plist-file

/// The whole archive in one file: encoded with Foundation's `JSONEncoder` or binary
/// `PropertyListEncoder`, written atomically (a temporary file renamed over the old one), read
/// back whole and decoded.
struct FilePeer {
    enum Format { case json, plist }

    let url: URL
    let format: Format

    init(path: String, format: Format) {
        self.url = URL(filePath: path)
        self.format = format
    }

    func save(_ nodes: [PeerNode]) throws {
        try encode(nodes).write(to: url, options: .atomic)
    }

    func load() throws -> [PeerNode] {
        try decode([PeerNode].self, from: try Data(contentsOf: url))
    }

    func encode<Value: Encodable>(_ value: Value) throws -> Data {
        switch format {
        case .json:
            return try JSONEncoder().encode(value)
        case .plist:
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            return try encoder.encode(value)
        }
    }

    func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        switch format {
        case .json: try JSONDecoder().decode(type, from: data)
        case .plist: try PropertyListDecoder().decode(type, from: data)
        }
    }
}

// MARK: nskeyedarchiver

/// A screen that encodes its own keys into an `NSCoder`, as UIKit's
/// `encodeRestorableState(with:)` does; the archive is the array of screens, archived with
/// secure coding and written atomically.
final class KeyedScreen: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }

    let path: String
    let parent: String?
    let className: String
    var state: ScreenState

    init(path: String, parent: String?, className: String, state: ScreenState) {
        self.path = path
        self.parent = parent
        self.className = className
        self.state = state
    }

    func encode(with coder: NSCoder) {
        coder.encode(path as NSString, forKey: "path")
        if let parent { coder.encode(parent as NSString, forKey: "parent") }
        coder.encode(className as NSString, forKey: "className")
        coder.encode(state.selectedIndex, forKey: "selectedIndex")
        coder.encode(state.scrollOffset, forKey: "scrollOffset")
        coder.encode(state.isEditing, forKey: "isEditing")
        coder.encode(Int64(bitPattern: state.userID), forKey: "userID")
        coder.encode(state.openedAt as NSDate, forKey: "openedAt")
        coder.encode(state.title as NSString, forKey: "title")
        coder.encode(state.draft as NSString, forKey: "draft")
        coder.encode(Data(state.token) as NSData, forKey: "token")
    }

    init?(coder: NSCoder) {
        guard let path = coder.decodeObject(of: NSString.self, forKey: "path"),
            let className = coder.decodeObject(of: NSString.self, forKey: "className"),
            let openedAt = coder.decodeObject(of: NSDate.self, forKey: "openedAt"),
            let title = coder.decodeObject(of: NSString.self, forKey: "title"),
            let draft = coder.decodeObject(of: NSString.self, forKey: "draft"),
            let token = coder.decodeObject(of: NSData.self, forKey: "token")
        else { return nil }
        self.path = path as String
        self.parent = coder.containsValue(forKey: "parent") ? coder.decodeObject(of: NSString.self, forKey: "parent") as String? : nil
        self.className = className as String
        self.state = ScreenState(
            selectedIndex: coder.decodeInteger(forKey: "selectedIndex"),
            scrollOffset: coder.decodeDouble(forKey: "scrollOffset"),
            isEditing: coder.decodeBool(forKey: "isEditing"),
            userID: UInt64(bitPattern: coder.decodeInt64(forKey: "userID")),
            openedAt: openedAt as Date, title: title as String, draft: draft as String, token: [UInt8](token as Data))
    }

    static func archive(_ screens: [KeyedScreen]) throws -> Data {
        try NSKeyedArchiver.archivedData(withRootObject: screens as NSArray, requiringSecureCoding: true)
    }

    static func unarchive(_ data: Data) throws -> [KeyedScreen] {
        guard
            let screens = try NSKeyedUnarchiver.unarchivedObject(ofClasses: [NSArray.self, KeyedScreen.self], from: data)
                as? [KeyedScreen]
        else { throw CocoaError(.coderReadCorrupt) }
        return screens
    }

    /// One screen alone: what `codec-encode` and `codec-decode` time for this peer.
    static func unarchiveOne(_ data: Data) throws -> KeyedScreen {
        guard let screen = try NSKeyedUnarchiver.unarchivedObject(ofClass: KeyedScreen.self, from: data) else {
            throw CocoaError(.coderReadCorrupt)
        }
        return screen
    }
}

// MARK: grdb

/// A node as a GRDB record. The state is a blob in the floor's minimal codec, so that this
/// peer differs from the floor only in the database layer (a JSON column, GRDB's default for
/// a nested `Codable` property, would cost what `json-file`'s coder costs).
struct GRDBNode: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "node"

    var path: String
    var parent: String?
    var className: String
    var version: Int
    var ord: Int
    var state: Data
}

/// The same store written idiomatically on GRDB: a `DatabasePool` (WAL) with
/// `synchronous = NORMAL`, records inserted, upserted and fetched through GRDB's API.
final class GRDBPeer {
    let pool: DatabasePool

    init(path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        pool = try DatabasePool(path: path, configuration: configuration)
        // Applied once; later opens only read which migrations ran, as an app's launch does.
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "node") { table in
                table.primaryKey("path", .text)
                table.column("parent", .text)
                table.column("className", .text).notNull()
                table.column("version", .integer).notNull()
                table.column("ord", .integer).notNull()
                table.column("state", .blob).notNull()
            }
            try db.create(table: "marker") { table in
                table.primaryKey("archive", .integer)
                table.column("pid", .integer).notNull()
            }
        }
        try migrator.migrate(pool)
    }

    func saveAll(_ nodes: [GRDBNode]) throws {
        try pool.write { db in
            try GRDBNode.deleteAll(db)
            for node in nodes { try node.insert(db) }
        }
    }

    func save(_ nodes: [GRDBNode]) throws {
        try pool.write { db in
            for node in nodes { try node.upsert(db) }
        }
    }

    func readAll() throws -> [GRDBNode] {
        try pool.read { db in try GRDBNode.order(Column("path")).fetchAll(db) }
    }

    /// A launch: the crash marker committed, every node read, decoded and made into a screen,
    /// the marker removed.
    func launch() throws -> [String: BenchScreen] {
        let pid = Int(getpid())
        try pool.write { db in try db.execute(sql: "INSERT OR REPLACE INTO marker VALUES (1, ?)", arguments: [pid]) }
        var byPath: [String: BenchScreen] = [:]
        for node in try readAll() {
            let screen = BenchScreen(identifier: node.path, state: ScreenState.decodeFloor([UInt8](node.state))!)
            if let parent = node.parent { byPath[parent]?.children.append(screen) }
            byPath[node.path] = screen
        }
        try pool.write { db in try db.execute(sql: "DELETE FROM marker WHERE archive = 1") }
        return byPath
    }
}

/// Screens rebuilt from a file peer's nodes, as a launch does.
func peerScreens(from nodes: [PeerNode]) -> [String: BenchScreen] {
    var byPath: [String: BenchScreen] = [:]
    for node in nodes {
        let screen = BenchScreen(identifier: node.path, state: node.state)
        if let parent = node.parent { byPath[parent]?.children.append(screen) }
        byPath[node.path] = screen
    }
    return byPath
}
