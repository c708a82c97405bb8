-- v0004: the lifecycle journal (R15). The app records its lifecycle events as they happen,
-- each committed at once, so the next launch can tell how the previous one ended: killed
-- while in the background (normal: that is what restoration is for), terminated, or dead
-- while in the foreground (a crash). The store adds its own events: generations a crash
-- policy invalidated, archives discarded. Only the newest entries are kept (see
-- Store/ArchiveStore+Journal.swift).

CREATE TABLE journal (
    -- Never reused, so entries stay in the order they were written even after pruning.
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    -- The launch the entry belongs to: the id of that launch's first entry. NULL for a store
    -- event written by a process that recorded no lifecycle event (restorectl discard).
    launch       INTEGER CHECK (launch > 0 AND launch <= id),
    at           INTEGER NOT NULL,
    process_id   INTEGER NOT NULL,
    event        TEXT NOT NULL CHECK (event IN (
                     'willFinishLaunching', 'didFinishLaunching', 'didBecomeActive', 'willResignActive',
                     'didEnterBackground', 'willEnterForeground', 'willTerminate',
                     'invalidated', 'discarded')),
    -- The app's state after a lifecycle event; NULL for the store's own events.
    app_state    TEXT CHECK (app_state IN ('inactive', 'active', 'background', 'terminated')),
    -- For the store's events: the archive, the generation and why.
    archive      TEXT,
    generation   INTEGER,
    detail       TEXT,
    CHECK ((app_state IS NULL) = (event IN ('invalidated', 'discarded'))),
    CHECK ((archive IS NULL) = (app_state IS NOT NULL))
) STRICT;

CREATE INDEX journal_by_launch ON journal (launch);
