-- The live `cal` judging order (issue 38). Its candidates are every pair a pooled run ranked and
-- each claim's top retrievals from the whole corpus: cal_retrievals holds those retrievals, made
-- by the command that sets the order (cal_retrieval_sets says how many per claim, by which
-- retriever, when and by whom), replaced whole when the lead makes them again. A pair cal serves
-- that is no pool entry yet joins the pool in the project's one step of kind 'cal' (a
-- pool_build_rows row), and cal_picks says when, for whom, in which round, and whether any run
-- ranked it.
ALTER TABLE projects ADD COLUMN cal_candidates INTEGER NOT NULL DEFAULT 100 CHECK (cal_candidates BETWEEN 1 AND 10000);

-- SQLite cannot alter a CHECK: the judging_order and kind columns are made again with 'cal'
-- allowed, their values kept.
ALTER TABLE projects ADD COLUMN judging_order_was TEXT;
UPDATE projects SET judging_order_was = judging_order;
ALTER TABLE projects DROP COLUMN judging_order;
ALTER TABLE projects ADD COLUMN judging_order TEXT NOT NULL DEFAULT 'depth'
    CHECK (judging_order IN ('depth', 'mtf', 'mab-maxmean', 'mab-thompson', 'hedge', 'cal'));
UPDATE projects SET judging_order = judging_order_was;
ALTER TABLE projects DROP COLUMN judging_order_was;

DROP VIEW pool_builds;
ALTER TABLE pool_build_rows ADD COLUMN kind_was TEXT;
UPDATE pool_build_rows SET kind_was = kind;
ALTER TABLE pool_build_rows DROP COLUMN kind;
ALTER TABLE pool_build_rows ADD COLUMN kind TEXT NOT NULL DEFAULT 'build' CHECK (kind IN ('build', 'search', 'cal'));
UPDATE pool_build_rows SET kind = kind_was;
ALTER TABLE pool_build_rows DROP COLUMN kind_was;
CREATE VIEW pool_builds AS
SELECT id, project_id, strategy, depth, systems, added, built_by, built_at
FROM pool_build_rows
WHERE state = 'done' AND kind = 'build';

CREATE TABLE cal_retrieval_sets (
    project_id INTEGER PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    per_claim  INTEGER NOT NULL CHECK (per_claim > 0),
    retriever  TEXT    NOT NULL CHECK (retriever IN ('bm25', 'hybrid')),
    claims     INTEGER NOT NULL CHECK (claims >= 0),
    made_by    INTEGER REFERENCES users (id),
    made_at    INTEGER NOT NULL
);

CREATE TABLE cal_retrievals (
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    claim_id   INTEGER NOT NULL REFERENCES claim_rows (id),
    doc_id     INTEGER NOT NULL REFERENCES document_rows (id),
    rank       INTEGER NOT NULL CHECK (rank > 0),
    share      REAL    NOT NULL CHECK (share >= 0 AND share <= 1),
    PRIMARY KEY (project_id, claim_id, doc_id)
) WITHOUT ROWID;

CREATE TABLE cal_picks (
    pool_entry_id INTEGER PRIMARY KEY REFERENCES pool_entry_rows (id) ON DELETE CASCADE,
    project_id    INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    served_to     INTEGER NOT NULL REFERENCES users (id),
    round         INTEGER NOT NULL CHECK (round >= 0),
    in_runs       INTEGER NOT NULL CHECK (in_runs IN (0, 1)),
    picked_at     INTEGER NOT NULL
);
CREATE INDEX cal_picks_project ON cal_picks (project_id);
-- The pool's views look up the builds being written on every read: an index of those few.
CREATE INDEX pool_build_rows_writing ON pool_build_rows (id) WHERE state = 'writing';
