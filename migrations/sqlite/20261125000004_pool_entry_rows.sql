-- Pool builds write in short chunks (issue 13): a per-claim pool of a million pairs no longer
-- holds the write lock for seconds. A build's row says 'writing' (with the token of the lock
-- file its writer holds) while its new entries, ranks and assignments are written; the rows live
-- in pool_build_rows, pool_entry_rows and pool_rank_rows, and every reader reads the views
-- pool_builds, pool_entries and pool_ranks, which hide what a build still 'writing' wrote (an
-- assignment is hidden with its entry: every reader of open items joins pool_entries). The
-- build's last transaction makes it 'done', so the grown pool appears whole. Rows of a build
-- whose writer died are removed by the next build or at `serve` start. Renaming the tables
-- repoints the foreign keys that name them.
ALTER TABLE pool_builds ADD COLUMN state TEXT NOT NULL DEFAULT 'done' CHECK (state IN ('writing', 'done'));
ALTER TABLE pool_builds ADD COLUMN lock_token TEXT;
ALTER TABLE pool_builds RENAME TO pool_build_rows;
ALTER TABLE pool_entries RENAME TO pool_entry_rows;
ALTER TABLE pool_ranks RENAME TO pool_rank_rows;
-- The build that wrote a rank (NULL: before this migration). A build adds the ranks of new
-- entries, and of a newly pooled system for old entries, as rows of its own.
ALTER TABLE pool_rank_rows ADD COLUMN build_id INTEGER REFERENCES pool_build_rows (id);

-- A failed or abandoned build's rows are found by build.
CREATE INDEX pool_entry_rows_build ON pool_entry_rows (build_id);
CREATE INDEX pool_rank_rows_build ON pool_rank_rows (build_id);

CREATE VIEW pool_builds AS
SELECT id, project_id, strategy, depth, systems, added, built_by, built_at
FROM pool_build_rows
WHERE state = 'done';

CREATE VIEW pool_entries AS
SELECT id, project_id, claim_id, doc_id, entry_depth, build_id
FROM pool_entry_rows
WHERE build_id NOT IN (SELECT id FROM pool_build_rows WHERE state = 'writing');

CREATE VIEW pool_ranks AS
SELECT pool_entry_id, system_id, rank
FROM pool_rank_rows
WHERE build_id IS NULL
   OR build_id NOT IN (SELECT id FROM pool_build_rows WHERE state = 'writing');
