-- v0003: crash markers (R11). A marker is committed before the first node of a generation
-- is decoded and deleted when its restoration has completed, asynchronous extensions
-- included; a launch that finds one knows that restoration died.

CREATE TABLE crash_marker (
    archive_id   INTEGER PRIMARY KEY REFERENCES archive(id) ON DELETE CASCADE,
    generation   INTEGER NOT NULL,
    started_at   INTEGER NOT NULL,
    -- The process that is restoring: a marker of a process still alive is not a crash.
    process_id   INTEGER NOT NULL
) STRICT;

-- How many restorations of each generation began since one last completed (what the retry
-- policy counts), and whether one ever completed (a "known good" generation, which the
-- fall-back policy may restore after a crash).
ALTER TABLE generation ADD COLUMN restore_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE generation ADD COLUMN restored_cleanly INTEGER NOT NULL DEFAULT 0 CHECK (restored_cleanly IN (0, 1));
