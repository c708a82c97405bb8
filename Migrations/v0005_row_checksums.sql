-- v0005: checksums over what v0001's leave out, found missing by the torture suite's damage
-- scenario (a flipped byte there changed what a read returned, silently).
--
-- archive.checksum covers the whole archive row: name, creation time, newest generation and
-- discard. generation.state_checksum covers what changes after the save: invalidation,
-- restore attempts and clean restoration. Both are rewritten with every change to those
-- columns; see Sources/RestorationArchive/Store/ArchiveRows.swift.
--
-- Rows written before this migration keep NULL and are not verified.
ALTER TABLE archive ADD COLUMN checksum INTEGER;
ALTER TABLE generation ADD COLUMN state_checksum INTEGER;
