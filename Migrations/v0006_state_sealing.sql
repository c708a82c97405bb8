-- v0006: encryption at rest (the package's Encryption trait).
--
-- When a store is opened with an encryption key, each node's state is sealed with AES-GCM
-- (see Sources/RestorationArchive/Store/StateSeal.swift), and this one row holds a constant
-- sealed under the key, so that a wrong key is told apart from damage when the store opens.
CREATE TABLE state_sealing (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    key_check   BLOB NOT NULL
) STRICT;
