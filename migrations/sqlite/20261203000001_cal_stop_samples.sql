-- The live cal order's stopping samples (issue 38): when a lead asks whether cal has found
-- enough, a simple random sample of the candidates unjudged at that moment is drawn for the
-- hypergeometric test of a target recall at a level alpha (1 - the confidence). found and
-- unjudged are the test's K and N at the draw, size the pairs drawn (cal_stop_pairs, in draw
-- order). The sample's pairs are served before cal's proposals and join the pool as cal picks.
CREATE TABLE cal_stop_samples (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    target_recall REAL    NOT NULL CHECK (target_recall > 0 AND target_recall <= 1),
    alpha         REAL    NOT NULL CHECK (alpha > 0 AND alpha < 1),
    found         INTEGER NOT NULL CHECK (found >= 0),
    unjudged      INTEGER NOT NULL CHECK (unjudged > 0),
    size          INTEGER NOT NULL CHECK (size > 0 AND size <= unjudged),
    seed          INTEGER NOT NULL,
    drawn_by      INTEGER REFERENCES users (id),
    drawn_at      INTEGER NOT NULL
);
CREATE INDEX cal_stop_samples_project ON cal_stop_samples (project_id, id);

CREATE TABLE cal_stop_pairs (
    sample_id INTEGER NOT NULL REFERENCES cal_stop_samples (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL CHECK (position >= 0),
    claim_id  INTEGER NOT NULL REFERENCES claim_rows (id),
    doc_id    INTEGER NOT NULL REFERENCES document_rows (id),
    PRIMARY KEY (sample_id, position)
);
