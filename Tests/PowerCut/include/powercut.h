#ifndef RESTORATION_ARCHIVE_POWERCUT_H
#define RESTORATION_ARCHIVE_POWERCUT_H

/// A power cut, for the torture suite's `power-cut` scenario: an SQLite VFS over the default
/// one ("unix") that keeps, for the store's files (database, write-ahead log, rollback
/// journal), what each write since the file's last sync overwrote.
///
/// At the `cutAt`-th write, truncation or sync of those files (of the database's syncs and
/// truncations alone, with `cutAtSyncs`: a cut at the end of a checkpoint, which copied the
/// log into the database and syncs it before the log starts over) the power goes off: every
/// write not yet synced is lost, kept, or, sector by sector (512 bytes), kept up to a random
/// one of the writes to that sector, as a disk's cache may leave them; the file's length past
/// what was synced may stay or go back. A line on standard output says where the cut landed
/// and what it undid (`power-cut sync log: 37 writes pending, 12 undone`); then the process
/// exits at once with `exitStatus`, as a machine stops.
///
/// What it does not model: creating, removing and renaming a file are taken as durable at
/// once, and so is a truncation; the write-ahead log's index (`-shm`) is left as it was (a
/// reboot leaves it stale, and SQLite rebuilds it when the next process opens the store alone).
///
/// Installs it as SQLite's default VFS, for every connection the process opens after it.
/// Returns SQLite's result code.
int powercut_install(long long cutAt, int cutAtSyncs, unsigned long long seed, int exitStatus);

/// Moves the cut to the `eventsFromNow`-th write, truncation or sync from now.
void powercut_arm(long long eventsFromNow);

#endif
