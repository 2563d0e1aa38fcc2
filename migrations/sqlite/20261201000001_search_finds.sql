-- Search and judge (issue 38): a pair a person found by searching the corpus joins the pool as
-- an entry of its own step, a pool_build_rows row of kind 'search' (one per find: who, when),
-- which the pool's history (the pool_builds view) does not list as a build. search_finds says
-- how it was found: the query, the result's rank, the seconds spent searching before. A pair is
-- found once per project (a pair already pooled is judged through the queue).
ALTER TABLE pool_build_rows ADD COLUMN kind TEXT NOT NULL DEFAULT 'build' CHECK (kind IN ('build', 'search'));

DROP VIEW pool_builds;
CREATE VIEW pool_builds AS
SELECT id, project_id, strategy, depth, systems, added, built_by, built_at
FROM pool_build_rows
WHERE state = 'done' AND kind = 'build';

CREATE TABLE search_finds (
    pool_entry_id     INTEGER PRIMARY KEY REFERENCES pool_entry_rows (id) ON DELETE CASCADE,
    project_id        INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    claim_id          INTEGER NOT NULL REFERENCES claim_rows (id),
    doc_id            INTEGER NOT NULL REFERENCES document_rows (id),
    found_by          INTEGER NOT NULL REFERENCES users (id),
    query             TEXT    NOT NULL,
    result_rank       INTEGER NOT NULL CHECK (result_rank > 0),
    seconds_searching REAL    NOT NULL CHECK (seconds_searching >= 0),
    found_at          INTEGER NOT NULL,
    UNIQUE (project_id, claim_id, doc_id)
);
CREATE INDEX search_finds_by_finder ON search_finds (project_id, found_by);
