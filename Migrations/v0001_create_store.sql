-- v0001: archives, their generations (one header each) and their nodes.
--
-- Times are milliseconds since 1970-01-01 UTC. Checksums are 64-bit, stored as signed
-- integers; see Sources/RestorationArchive/Store/Checksum.swift for what each one covers.

-- One archive per scene or window; "main" by default.
CREATE TABLE archive (
    id              INTEGER PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE,
    created_at      INTEGER NOT NULL,
    -- Newest committed generation; 0 before the first save. Never goes down, so a
    -- generation number is never reused, not even after a discard.
    generation      INTEGER NOT NULL DEFAULT 0 CHECK (generation >= 0),
    -- Set when the archive was discarded (user quit, scene closed): no generation remains.
    discarded_at    INTEGER,
    discard_reason  TEXT
) STRICT;

-- One row per retained generation: the archive's header as it was saved.
CREATE TABLE generation (
    archive_id          INTEGER NOT NULL REFERENCES archive(id) ON DELETE CASCADE,
    generation          INTEGER NOT NULL CHECK (generation > 0),
    store_format        INTEGER NOT NULL,
    app_version         TEXT NOT NULL,
    app_build           TEXT NOT NULL,
    platform            TEXT NOT NULL,
    idiom               TEXT NOT NULL,
    saved_at            INTEGER NOT NULL,
    save_kind           TEXT NOT NULL CHECK (save_kind IN ('full', 'incremental')),
    -- The app-level header values, in the encoding of Store/HeaderValue+Encoding.swift.
    app_values          BLOB NOT NULL,
    node_count          INTEGER NOT NULL CHECK (node_count >= 0),
    total_bytes         INTEGER NOT NULL CHECK (total_bytes >= 0),
    -- Wrapping sum of the checksums of the nodes alive in this generation: a node row lost,
    -- added or moved between generations by damage changes it.
    node_digest         INTEGER NOT NULL,
    -- Covers every column above.
    checksum            INTEGER NOT NULL,
    -- Set when a crash policy (or the app) stops this generation from being restored.
    invalidated_at      INTEGER,
    invalidated_reason  TEXT,
    PRIMARY KEY (archive_id, generation)
) STRICT, WITHOUT ROWID;

-- One row per version of a preserved object. A row belongs to every generation g with
-- born <= g < died (died NULL: still current), so an incremental save only touches the
-- nodes it changes, and retained generations share their unchanged rows.
CREATE TABLE node (
    archive_id     INTEGER NOT NULL REFERENCES archive(id) ON DELETE CASCADE,
    path           TEXT NOT NULL,
    born           INTEGER NOT NULL CHECK (born > 0),
    died           INTEGER CHECK (died > born),
    parent_path    TEXT,
    class_name     TEXT NOT NULL,
    class_version  INTEGER NOT NULL,
    sibling_order  INTEGER NOT NULL,
    state          BLOB NOT NULL,
    -- Covers archive name, path, parent path, class, version, order, born and the state.
    checksum       INTEGER NOT NULL,
    PRIMARY KEY (archive_id, path, born)
) STRICT, WITHOUT ROWID;

-- The current generation's nodes, one per path: launches read this.
CREATE UNIQUE INDEX node_current ON node (archive_id, path) WHERE died IS NULL;

-- Retired rows, found by the generation that retired them: pruning reads this.
CREATE INDEX node_retired ON node (archive_id, died) WHERE died IS NOT NULL;
