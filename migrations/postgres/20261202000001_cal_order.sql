-- The live `cal` judging order (issue 38); see the SQLite migration of the same name.
ALTER TABLE projects ADD COLUMN cal_candidates BIGINT NOT NULL DEFAULT 100 CHECK (cal_candidates BETWEEN 1 AND 10000);

-- judging_order is made again, as in SQLite (which cannot alter a CHECK), so that both engines
-- keep the same column order (`claimpool db copy` compares them).
ALTER TABLE projects ADD COLUMN judging_order_was TEXT COLLATE "C";
UPDATE projects SET judging_order_was = judging_order;
ALTER TABLE projects DROP COLUMN judging_order;
ALTER TABLE projects ADD COLUMN judging_order TEXT COLLATE "C" NOT NULL DEFAULT 'depth'
    CHECK (judging_order IN ('depth', 'mtf', 'mab-maxmean', 'mab-thompson', 'hedge', 'cal'));
UPDATE projects SET judging_order = judging_order_was;
ALTER TABLE projects DROP COLUMN judging_order_was;
ALTER TABLE pool_build_rows DROP CONSTRAINT pool_build_rows_kind_check;
ALTER TABLE pool_build_rows ADD CONSTRAINT pool_build_rows_kind_check CHECK (kind IN ('build', 'search', 'cal'));

CREATE TABLE cal_retrieval_sets (
    project_id BIGINT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    per_claim  BIGINT NOT NULL CHECK (per_claim > 0),
    retriever  TEXT COLLATE "C" NOT NULL CHECK (retriever IN ('bm25', 'hybrid')),
    claims     BIGINT NOT NULL CHECK (claims >= 0),
    made_by    BIGINT REFERENCES users (id),
    made_at    BIGINT NOT NULL
);

CREATE TABLE cal_retrievals (
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    claim_id   BIGINT NOT NULL REFERENCES claim_rows (id),
    doc_id     BIGINT NOT NULL REFERENCES document_rows (id),
    rank       BIGINT NOT NULL CHECK (rank > 0),
    share      DOUBLE PRECISION NOT NULL CHECK (share >= 0 AND share <= 1),
    PRIMARY KEY (project_id, claim_id, doc_id)
);

CREATE TABLE cal_picks (
    pool_entry_id BIGINT PRIMARY KEY REFERENCES pool_entry_rows (id) ON DELETE CASCADE,
    project_id    BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    served_to     BIGINT NOT NULL REFERENCES users (id),
    round         BIGINT NOT NULL CHECK (round >= 0),
    in_runs       BIGINT NOT NULL CHECK (in_runs IN (0, 1)),
    picked_at     BIGINT NOT NULL
);
CREATE INDEX cal_picks_project ON cal_picks (project_id);
-- The pool's views look up the builds being written on every read: an index of those few.
CREATE INDEX pool_build_rows_writing ON pool_build_rows (id) WHERE state = 'writing';
