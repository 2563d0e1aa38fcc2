-- Sampled pools (issue 15): a stratified random sample of the pairs beyond the pool's depth,
-- drawn by `pool build --sample N --strata K`, added to the pool (its pairs are pool entries,
-- annotated like any other) with each pair's stratum and inclusion probability, so that the
-- report and `eval --estimate` can give Horvitz–Thompson estimates.
--
-- A sample is written by a pool build of its own (a `pool_build_rows` row) in short chunks,
-- hidden until that build is 'done', like every build: readers read the views pool_samples,
-- pool_sample_strata and pool_sample_pairs, which hide the rows of a build still 'writing'.
-- Foreign keys name the tables, never the views.

-- One sample: the depth it lies beyond, its reach (the largest best rank it covers, depth·2^K),
-- its number of rank bands K, the draws asked for, the seed and the pooled systems it used.
CREATE TABLE pool_sample_rows (
    build_id   INTEGER PRIMARY KEY REFERENCES pool_build_rows (id),
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    depth      INTEGER NOT NULL CHECK (depth > 0),
    reach      INTEGER NOT NULL CHECK (reach > depth),
    strata     INTEGER NOT NULL CHECK (strata BETWEEN 1 AND 16),
    size       INTEGER NOT NULL CHECK (size > 0),
    seed       INTEGER NOT NULL,
    systems    TEXT    NOT NULL -- JSON array of the pooled system names
);
CREATE INDEX pool_sample_rows_project ON pool_sample_rows (project_id, build_id);

-- The design: stratum h holds `population` unjudged pairs, `sampled` of them drawn.
CREATE TABLE pool_sample_stratum_rows (
    build_id   INTEGER NOT NULL REFERENCES pool_sample_rows (build_id),
    stratum    INTEGER NOT NULL CHECK (stratum >= 0),
    population INTEGER NOT NULL CHECK (population > 0),
    sampled    INTEGER NOT NULL CHECK (sampled BETWEEN 1 AND population),
    PRIMARY KEY (build_id, stratum)
) WITHOUT ROWID;

-- The sample's pairs: drawn pairs (a stratum, the draw's position within it, inclusion
-- probability sampled/population) and the pairs beyond the depth within reach that were
-- already judged when it was drawn (no stratum, inclusion probability 1: known for certain).
CREATE TABLE pool_sample_pair_rows (
    build_id              INTEGER NOT NULL REFERENCES pool_sample_rows (build_id),
    claim_id              INTEGER NOT NULL REFERENCES claim_rows (id),
    doc_id                INTEGER NOT NULL REFERENCES document_rows (id),
    stratum               INTEGER CHECK (stratum >= 0),
    draw                  INTEGER CHECK (draw >= 0),
    inclusion_probability REAL    NOT NULL CHECK (inclusion_probability > 0 AND inclusion_probability <= 1),
    PRIMARY KEY (build_id, claim_id, doc_id),
    CHECK ((stratum IS NULL) = (draw IS NULL)),
    CHECK (stratum IS NOT NULL OR inclusion_probability = 1)
) WITHOUT ROWID;

CREATE VIEW pool_samples AS
SELECT s.build_id, s.project_id, s.depth, s.reach, s.strata, s.size, s.seed, s.systems, b.built_at, b.built_by
FROM pool_sample_rows s JOIN pool_build_rows b ON b.id = s.build_id
WHERE b.state = 'done';

CREATE VIEW pool_sample_strata AS
SELECT build_id, stratum, population, sampled
FROM pool_sample_stratum_rows
WHERE build_id NOT IN (SELECT id FROM pool_build_rows WHERE state = 'writing');

CREATE VIEW pool_sample_pairs AS
SELECT build_id, claim_id, doc_id, stratum, draw, inclusion_probability
FROM pool_sample_pair_rows
WHERE build_id NOT IN (SELECT id FROM pool_build_rows WHERE state = 'writing');
