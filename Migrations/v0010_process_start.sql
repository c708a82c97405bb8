-- v0010: who wrote a crash marker or a journal entry, by the system's own count.
--
-- A marker's process, and a launch's in the journal, is told from a later process given the
-- same id by when that process started. Until now that start was placed on the wall clock
-- (the time since boot added to when the system booted, by today's clock) and compared with
-- the row's wall-clock time: a clock stepped forward by more than a couple of seconds since
-- the row was written (NTP, a user setting the time) made a restoration still in progress
-- look dead to another process of the app, which then invalidated its generation; one
-- stepped back made a later process look like the one that wrote the row.
--
-- Now each row also holds the system's boot id (Linux: /proc/sys/kernel/random/boot_id) and
-- the process's start in clock ticks since that boot (/proc/PID/stat's starttime), which no
-- clock step changes: the process with that id is the one that wrote the row when both are
-- the same. NULL where the system tells neither, and in rows written before this migration:
-- those are compared by wall-clock time, as before.

ALTER TABLE crash_marker ADD COLUMN process_boot TEXT;
ALTER TABLE crash_marker ADD COLUMN process_start INTEGER;
ALTER TABLE journal ADD COLUMN process_boot TEXT;
ALTER TABLE journal ADD COLUMN process_start INTEGER;
