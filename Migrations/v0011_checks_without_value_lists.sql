-- v0011: the journal's and the restore reports' CHECK constraints name their allowed values
-- one comparison each, instead of in an `IN (...)` list.
--
-- SQLite evaluates a CHECK's `x IN (a, b, c, ...)` of more than two constants by building a
-- temporary b-tree of the list, at every row written: a journal entry built two (its event
-- and its app state), a restore report one. Each is a pager and its pages, allocated and
-- freed again (about 34,000 instructions), which could also make the C library grow and
-- shrink its heap around every entry. `ArchiveStore.record` took about 140,000 instructions
-- an entry, 72,000 with the same constraints written as comparisons, and a median of 35-80
-- µs against 33-34. The constraints allow exactly what they allowed.
--
-- The tables are otherwise the same as before (v0004 and v0010 for the journal, v0002 for
-- the reports), their comments left out of the statements: SQLite keeps a table's CREATE
-- text and parses it each time a store is opened. Rows are copied with their ids, and the
-- journal's numbering (its `sqlite_sequence` counter) carries on where it was. A row that
-- damage left with a value the table does not allow (another type, a constraint it breaks,
-- a report of an archive the store does not have) is not copied: it is history that could
-- not be read, and the copy must not fail on it, which would leave the store unusable.

CREATE TABLE journal_v11 (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    launch       INTEGER CHECK (launch > 0 AND launch <= id),
    at           INTEGER NOT NULL,
    process_id   INTEGER NOT NULL,
    event        TEXT NOT NULL CHECK (
                     event = 'willFinishLaunching' OR event = 'didFinishLaunching' OR event = 'didBecomeActive'
                     OR event = 'willResignActive' OR event = 'didEnterBackground' OR event = 'willEnterForeground'
                     OR event = 'willTerminate' OR event = 'invalidated' OR event = 'discarded'),
    app_state    TEXT CHECK (
                     app_state = 'inactive' OR app_state = 'active' OR app_state = 'background'
                     OR app_state = 'terminated'),
    archive      TEXT,
    generation   INTEGER,
    detail       TEXT,
    process_boot TEXT,
    process_start INTEGER,
    CHECK ((app_state IS NULL) = (event = 'invalidated' OR event = 'discarded')),
    CHECK ((archive IS NULL) = (app_state IS NOT NULL))
) STRICT;

INSERT OR IGNORE INTO journal_v11 (id, launch, at, process_id, event, app_state, archive, generation, detail,
    process_boot, process_start)
SELECT id, launch, at, process_id, event, app_state, archive, generation, detail, process_boot, process_start
FROM journal
WHERE typeof(launch) IN ('integer', 'null') AND typeof(at) = 'integer' AND typeof(process_id) = 'integer'
    AND typeof(event) = 'text' AND typeof(app_state) IN ('text', 'null') AND typeof(archive) IN ('text', 'null')
    AND typeof(generation) IN ('integer', 'null') AND typeof(detail) IN ('text', 'null')
    AND typeof(process_boot) IN ('text', 'null') AND typeof(process_start) IN ('integer', 'null');

-- The counter as it was (entries are numbered after every id the journal ever gave, pruned
-- ones too), whatever the copy left there.
DELETE FROM sqlite_sequence WHERE name = 'journal_v11';
INSERT INTO sqlite_sequence (name, seq) SELECT 'journal_v11', seq FROM sqlite_sequence WHERE name = 'journal';

-- Drops journal_by_launch, and the journal's counter, with it.
DROP TABLE journal;
ALTER TABLE journal_v11 RENAME TO journal;

-- The entries of a launch, found by its number.
CREATE INDEX journal_by_launch ON journal (launch);

CREATE TABLE restore_report_v11 (
    archive_id   INTEGER NOT NULL REFERENCES archive(id) ON DELETE CASCADE,
    sequence     INTEGER NOT NULL CHECK (sequence > 0),
    generation   INTEGER,
    reported_at  INTEGER NOT NULL,
    outcome      TEXT NOT NULL CHECK (
                     outcome = 'restored' OR outcome = 'nothing' OR outcome = 'refused' OR outcome = 'failed'),
    report       BLOB NOT NULL,
    PRIMARY KEY (archive_id, sequence)
) STRICT, WITHOUT ROWID;

INSERT OR IGNORE INTO restore_report_v11 (archive_id, sequence, generation, reported_at, outcome, report)
SELECT archive_id, sequence, generation, reported_at, outcome, report
FROM restore_report
WHERE typeof(archive_id) = 'integer' AND archive_id IN (SELECT id FROM archive) AND typeof(sequence) = 'integer'
    AND typeof(generation) IN ('integer', 'null') AND typeof(reported_at) = 'integer'
    AND typeof(outcome) = 'text' AND typeof(report) = 'blob';

DROP TABLE restore_report;
ALTER TABLE restore_report_v11 RENAME TO restore_report;
