-- v0009: node rows no longer store their parent's path.
--
-- A node's parent is its path without the last identifier: the column repeated about 20 bytes
-- of every row's path, and each read compared it with the parent the path implies. The node
-- checksum never covered the column itself but the parent the path implies, so the checksums
-- stay as they are. Dropping the column rewrites the table's rows once; every other column,
-- the key and `node_retired` stay.

ALTER TABLE node DROP COLUMN parent_path;
