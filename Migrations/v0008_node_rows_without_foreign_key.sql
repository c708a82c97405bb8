-- v0008: node rows no longer declare a foreign key to their archive.
--
-- With foreign keys on, SQLite cannot delete a range of a child table in one pass: it first
-- collects the rows' keys in a temporary table, then looks each one up again. Deleting a
-- pruned epoch of 1,000 rows cost about 10,800 instructions a row that way, 4,600 without
-- the key, and a full save prunes as many rows as it writes. The key guarded nothing the
-- library relies on: archives are never deleted (a discard deletes an archive's nodes itself
-- and keeps its row), every node is written with the id of an archive row read in the same
-- transaction, and each node's checksum covers its archive's name.
--
-- The table is otherwise the same as v0007's. Its comments are here rather than inside the
-- statement: SQLite keeps a table's CREATE text and parses it each time a store is opened.
--
-- Columns: archive_id, the archive's row id; epoch, the generation of the full save the row
-- descends from (0 before v0007); path, the node's restoration path in its text form; born,
-- the generation that wrote it; died, the generation that retired it within its epoch (NULL:
-- not retired); parent_path, class_name, class_version, sibling_order and state, the node as
-- saved; checksum, covering the archive's name, path, parent path, class, version, order,
-- born and the state (not the epoch: a row moved to another epoch changes its generations'
-- node digests).

CREATE TABLE node_v8 (
    archive_id INTEGER NOT NULL,
    epoch INTEGER NOT NULL CHECK (epoch >= 0),
    path TEXT NOT NULL,
    born INTEGER NOT NULL CHECK (born > 0),
    died INTEGER CHECK (died > born),
    parent_path TEXT,
    class_name TEXT NOT NULL,
    class_version INTEGER NOT NULL,
    sibling_order INTEGER NOT NULL,
    state BLOB NOT NULL,
    checksum INTEGER NOT NULL,
    PRIMARY KEY (archive_id, epoch, path, born)
) STRICT, WITHOUT ROWID;

INSERT INTO node_v8 (archive_id, epoch, path, born, died, parent_path, class_name, class_version, sibling_order, state,
    checksum)
SELECT archive_id, epoch, path, born, died, parent_path, class_name, class_version, sibling_order, state, checksum
FROM node;

-- Drops node_retired with it.
DROP TABLE node;
ALTER TABLE node_v8 RENAME TO node;

-- Rows retired by incremental saves, found by the generation that retired them: pruning
-- reads this.
CREATE INDEX node_retired ON node (archive_id, died) WHERE died IS NOT NULL;
