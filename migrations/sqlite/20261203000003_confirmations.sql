-- What a second annotator in confirm mode kept of the first annotation they were shown and what
-- they changed (domain::annotation::confirmation): one row per such second pass, the fields as
-- JSON arrays of names (label, rationale, specificity, revised_claim).
CREATE TABLE confirmations (
    judgment_id       INTEGER PRIMARY KEY REFERENCES judgment_rows (id) ON DELETE CASCADE,
    first_judgment_id INTEGER NOT NULL REFERENCES judgment_rows (id) ON DELETE CASCADE,
    kept              TEXT    NOT NULL,
    edited            TEXT    NOT NULL
);
CREATE INDEX confirmations_first ON confirmations (first_judgment_id);
