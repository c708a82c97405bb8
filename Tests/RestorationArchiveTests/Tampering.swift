import CSQLite
import Foundation
@testable import RestorationArchive

/// Raw SQL against a store file, bypassing the library, to damage it the way a bad disk,
/// another program or a newer library would.
func tamper(with path: String, _ sql: String) throws {
    let connection = try Connection(filename: path, flags: SQLITE_OPEN_READWRITE)
    try connection.execute(sql)
}
