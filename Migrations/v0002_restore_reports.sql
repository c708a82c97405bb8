-- v0002: the reports of recent restorations, one row each, newest kept.

CREATE TABLE restore_report (
    archive_id   INTEGER NOT NULL REFERENCES archive(id) ON DELETE CASCADE,
    -- Increases with every report of the archive.
    sequence     INTEGER NOT NULL CHECK (sequence > 0),
    -- The generation restored from; NULL when none was read.
    generation   INTEGER,
    reported_at  INTEGER NOT NULL,
    -- 'restored', 'nothing', 'refused' or 'failed': what `restorectl` lists without decoding.
    outcome      TEXT NOT NULL CHECK (outcome IN ('restored', 'nothing', 'refused', 'failed')),
    -- The whole report in the blob format (docs/blob-format.md), its nodes as columns; see
    -- Sources/RestorationArchive/Store/RestoreReport+Storage.swift. It carries its own CRC-32C.
    report       BLOB NOT NULL,
    PRIMARY KEY (archive_id, sequence)
) STRICT, WITHOUT ROWID;
