#ifndef RESTORATION_ARCHIVE_CSQLITE_SHIM_H
#define RESTORATION_ARCHIVE_CSQLITE_SHIM_H

#include <sqlite3.h>

/// Wraps `sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL/DML, 0, 0)`, a variadic function
/// Swift cannot call: double-quoted string literals become errors, so a misspelt column
/// name is never silently read as a string.
static inline int restoration_disable_double_quoted_strings(sqlite3 *db) {
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (void *)0);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (void *)0);
}

/// Wraps `sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, 0)`: no SQL statement can
/// corrupt the file (writable_schema, raw page writes) even if one slipped through.
static inline int restoration_enable_defensive(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (void *)0);
}

/// Wraps `sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, 0)`, for the one statement
/// that defensive mode ignores without an error and that erasing a store needs
/// (`PRAGMA schema_version = N`).
static inline int restoration_set_defensive(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, (void *)0);
}

/// Wraps `sqlite3_db_config(db, SQLITE_DBCONFIG_RESET_DATABASE, on, 0)`: while it is on,
/// `VACUUM` empties the database, however malformed its pages are.
static inline int restoration_set_reset_database(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_RESET_DATABASE, on, (void *)0);
}

/// Wraps `sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, 0)`: the connection's
/// close leaves the write-ahead log as it is rather than copying it into the database file.
static inline int restoration_skip_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

/// `SQLITE_TRANSIENT` is a macro casting -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type restoration_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
