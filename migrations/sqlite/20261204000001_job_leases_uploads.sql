-- Jobs are run under a lease: the server that claims a job names itself (lease_owner) and renews
-- lease_expires_at while the job runs; only a job whose lease expired is failed by another server
-- (a server starting up no longer fails the jobs others run).
ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
ALTER TABLE jobs ADD COLUMN lease_expires_at INTEGER;

-- An upload kept in the database, in parts, so that any server's worker can run its import (on
-- PostgreSQL, where servers may run on several machines).
CREATE TABLE uploads (
    id         INTEGER PRIMARY KEY,
    bytes      INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE upload_parts (
    upload_id INTEGER NOT NULL REFERENCES uploads (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    data      BLOB    NOT NULL,
    PRIMARY KEY (upload_id, seq)
);
ALTER TABLE jobs ADD COLUMN upload_id INTEGER REFERENCES uploads (id) ON DELETE SET NULL;
