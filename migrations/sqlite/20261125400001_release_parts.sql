-- Release archives written in parts (issue 13): a release of a large collection (every
-- system's predictions, the documents of every judged pair) is tens or hundreds of MB, and one
-- INSERT of it held SQLite's write lock for as long as the blob took to write. The archive now
-- lives in release_parts, at most 1 MiB per part and one part per write transaction. While a
-- release is written its release_rows row says 'writing' (with the token of the lock file its
-- writer holds); the view releases hides it, so a release appears whole or not at all. The last
-- transaction makes it 'done'. Rows of a release whose writer died are removed by the next
-- release or at `serve` start. Done releases never change: triggers refuse to update or delete
-- them or their parts (a project's deletion still cascades: it deletes the project first).
CREATE TABLE release_rows (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    number        INTEGER NOT NULL CHECK (number > 0),
    partial       INTEGER NOT NULL CHECK (partial IN (0, 1)),
    manifest      TEXT    NOT NULL, -- MANIFEST.json as written
    sha256        TEXT    NOT NULL, -- of the archive
    archive_bytes INTEGER NOT NULL CHECK (archive_bytes >= 0),
    created_by    INTEGER REFERENCES users (id),
    created_at    INTEGER NOT NULL,
    state         TEXT    NOT NULL DEFAULT 'done' CHECK (state IN ('writing', 'done')),
    lock_token    TEXT,
    UNIQUE (project_id, number)
);

-- The archive (.tar.gz) of a release: its parts in order of seq, concatenated.
CREATE TABLE release_parts (
    release_id INTEGER NOT NULL REFERENCES release_rows (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    bytes      BLOB    NOT NULL,
    PRIMARY KEY (release_id, seq)
);

INSERT INTO release_rows (id, project_id, number, partial, manifest, sha256, archive_bytes, created_by, created_at)
SELECT id, project_id, number, partial, manifest, sha256, length(archive), created_by, created_at
FROM releases;
INSERT INTO release_parts (release_id, seq, bytes)
SELECT id, 0, archive FROM releases;
DROP TABLE releases;

CREATE VIEW releases AS
SELECT id, project_id, number, partial, manifest, sha256, archive_bytes, created_by, created_at
FROM release_rows
WHERE state = 'done';

CREATE TRIGGER release_done_no_update BEFORE UPDATE ON release_rows
WHEN OLD.state = 'done'
BEGIN SELECT RAISE(ABORT, 'a release never changes'); END;
CREATE TRIGGER release_done_no_delete BEFORE DELETE ON release_rows
WHEN OLD.state = 'done' AND EXISTS (SELECT 1 FROM projects WHERE id = OLD.project_id)
BEGIN SELECT RAISE(ABORT, 'a release is never removed'); END;
CREATE TRIGGER release_part_no_update BEFORE UPDATE ON release_parts
BEGIN SELECT RAISE(ABORT, 'a release never changes'); END;
CREATE TRIGGER release_part_done_no_delete BEFORE DELETE ON release_parts
WHEN EXISTS (SELECT 1 FROM release_rows r JOIN projects p ON p.id = r.project_id
             WHERE r.id = OLD.release_id AND r.state = 'done')
BEGIN SELECT RAISE(ABORT, 'a release is never removed'); END;
