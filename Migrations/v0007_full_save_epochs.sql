-- v0007: a full save starts an epoch, and its rows are kept apart from the previous ones
-- instead of retiring them.
--
-- Until now a full save retired every current row (died = the new generation) and inserted
-- every row again, and the prune deleted the retired rows two saves later: each row was
-- written three times, and its entries in both partial indexes twice each. Now every row
-- belongs to an epoch: the generation of the full save it descends from. A full save starts
-- a new epoch and leaves the previous one untouched; an incremental save writes into its
-- base generation's epoch. A row belongs to every generation g of its epoch with
-- born <= g < died (died NULL: not retired within its epoch), and the prune deletes whole
-- epochs that no retained generation uses.
--
-- The epoch leads the primary key, so a generation's rows are one range of the table, in
-- path order: launches read them there, without the node_current index (whose entries each
-- cost a second lookup in the table). Within an epoch a path has one row not retired; the
-- saves keep it so, and a generation's node count and digest catch any other row.
--
-- Rows and generations written before this migration are epoch 0, where they keep their
-- meaning: every full save before it retired its predecessors' rows.

CREATE TABLE node_v7 (
    archive_id     INTEGER NOT NULL REFERENCES archive(id) ON DELETE CASCADE,
    -- The generation of the full save this row descends from; 0 before v0007.
    epoch          INTEGER NOT NULL CHECK (epoch >= 0),
    path           TEXT NOT NULL,
    born           INTEGER NOT NULL CHECK (born > 0),
    died           INTEGER CHECK (died > born),
    parent_path    TEXT,
    class_name     TEXT NOT NULL,
    class_version  INTEGER NOT NULL,
    sibling_order  INTEGER NOT NULL,
    state          BLOB NOT NULL,
    -- Covers archive name, path, parent path, class, version, order, born and the state (not
    -- the epoch: a row moved to another epoch changes its generations' node digests).
    checksum       INTEGER NOT NULL,
    PRIMARY KEY (archive_id, epoch, path, born)
) STRICT, WITHOUT ROWID;

INSERT INTO node_v7 (archive_id, epoch, path, born, died, parent_path, class_name, class_version, sibling_order, state,
    checksum)
SELECT archive_id, 0, path, born, died, parent_path, class_name, class_version, sibling_order, state, checksum FROM node;

-- Drops node_current and node_retired with it.
DROP TABLE node;
ALTER TABLE node_v7 RENAME TO node;

-- Rows retired by incremental saves, found by the generation that retired them: pruning
-- reads this.
CREATE INDEX node_retired ON node (archive_id, died) WHERE died IS NOT NULL;

-- The epoch each generation reads; covered by the generation's checksum when not 0.
ALTER TABLE generation ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0 CHECK (epoch >= 0);
