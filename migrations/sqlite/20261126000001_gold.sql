-- Gold checks and qualification (issue 16). Gold items are pairs whose label is known (the
-- citation evidence that came with the claims, or a sample of the pool's final labels, for
-- test-retest). They reach annotators as assignments like any other, so that the page and its
-- ids cannot tell them apart; their answers go to gold_answers, never to judgment_rows, so that
-- a gold answer can never become a final label or reach a release.
--
-- `assignments` gains gold_item_id and gold_purpose, and its pool_entry_id becomes nullable
-- (exactly one of the two is set). SQLite cannot relax NOT NULL in place, so the table is
-- rebuilt inside the migration's transaction (sqlx runs every SQLite migration in one, so
-- foreign keys cannot be turned off): with foreign keys deferred, the old table is copied
-- aside and dropped (its judgments lose their parent for a moment), and the new table of the
-- same name takes the same rows back (each row inserted gives its judgments their parent again),
-- so that the check at commit finds nothing wrong. Every reader of real items joins
-- pool_entries, so gold assignments stay out of them.
PRAGMA defer_foreign_keys = ON;

-- How a project uses gold: one gold check among every `gold_every` items an annotator works
-- (NULL: none); a qualification of `qualification_training` items with feedback, then
-- `qualification_graded` graded items passed at `qualification_pass` (share correct), before a
-- new annotator gets real items (graded 0: no qualification).
ALTER TABLE projects ADD COLUMN gold_every INTEGER CHECK (gold_every BETWEEN 2 AND 1000);
ALTER TABLE projects ADD COLUMN qualification_training INTEGER NOT NULL DEFAULT 0
    CHECK (qualification_training BETWEEN 0 AND 100);
ALTER TABLE projects ADD COLUMN qualification_graded INTEGER NOT NULL DEFAULT 0
    CHECK (qualification_graded BETWEEN 0 AND 100);
ALTER TABLE projects ADD COLUMN qualification_pass REAL NOT NULL DEFAULT 0.8
    CHECK (qualification_pass BETWEEN 0 AND 1);

-- A pair with a known reference annotation, frozen when it was added.
CREATE TABLE gold_items (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    claim_id    INTEGER NOT NULL REFERENCES claim_rows (id),
    doc_id      INTEGER NOT NULL REFERENCES document_rows (id),
    -- the judgment whose label and rationale are the reference
    judgment_id INTEGER NOT NULL REFERENCES judgment_rows (id),
    label       TEXT    NOT NULL CHECK (label IN ('SUPPORT', 'CONTRADICT', 'NEI')),
    rationale   TEXT    NOT NULL DEFAULT '[]', -- JSON array of evidence sets
    source      TEXT    NOT NULL CHECK (source IN ('citation', 'final')),
    added_by    INTEGER REFERENCES users (id),
    added_at    INTEGER NOT NULL,
    UNIQUE (project_id, claim_id, doc_id)
);
CREATE TRIGGER gold_items_no_update BEFORE UPDATE ON gold_items
BEGIN SELECT RAISE(ABORT, 'gold items are append-only'); END;
CREATE TRIGGER gold_items_no_delete BEFORE DELETE ON gold_items
BEGIN SELECT RAISE(ABORT, 'gold items are append-only'); END;

CREATE TEMP TABLE assignments_before AS SELECT * FROM assignments;
DROP TABLE assignments;
CREATE TABLE assignments (
    id            INTEGER PRIMARY KEY,
    pool_entry_id INTEGER REFERENCES pool_entry_rows (id),
    gold_item_id  INTEGER REFERENCES gold_items (id),
    -- a gold item's use: qualification 'training' (feedback shown) or 'graded', or a 'check'
    -- among real items
    gold_purpose  TEXT    CHECK (gold_purpose IN ('training', 'graded', 'check')),
    annotator_id  INTEGER NOT NULL REFERENCES users (id),
    stage         TEXT    NOT NULL CHECK (stage IN ('first', 'second', 'adjudication')),
    status        TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done', 'withdrawn')),
    queue_pos     INTEGER NOT NULL, -- order in the annotator's queue; skip moves it to the end
    flagged       INTEGER NOT NULL DEFAULT 0 CHECK (flagged IN (0, 1)),
    flag_note     TEXT,
    created_at    INTEGER NOT NULL,
    closed_at     INTEGER,
    CHECK ((pool_entry_id IS NULL) <> (gold_item_id IS NULL)),
    CHECK ((gold_item_id IS NULL) = (gold_purpose IS NULL)),
    CHECK (gold_item_id IS NULL OR stage = 'first')
);
INSERT INTO assignments (id, pool_entry_id, annotator_id, stage, status, queue_pos, flagged,
                         flag_note, created_at, closed_at)
SELECT id, pool_entry_id, annotator_id, stage, status, queue_pos, flagged, flag_note, created_at,
       closed_at
FROM assignments_before;
DROP TABLE assignments_before;
CREATE UNIQUE INDEX assignments_one_open ON assignments (pool_entry_id, stage) WHERE status = 'open';
CREATE INDEX assignments_queue ON assignments (annotator_id, status, queue_pos);
CREATE INDEX assignments_by_entry ON assignments (pool_entry_id, status);
CREATE INDEX assignments_by_gold ON assignments (gold_item_id, annotator_id) WHERE gold_item_id IS NOT NULL;

-- An annotator's answer to a gold assignment: append-only, like judgments.
CREATE TABLE gold_answers (
    id            INTEGER PRIMARY KEY,
    assignment_id INTEGER NOT NULL REFERENCES assignments (id),
    label         TEXT    NOT NULL CHECK (label IN ('SUPPORT', 'CONTRADICT', 'NEI')),
    no_evidence   INTEGER NOT NULL DEFAULT 0 CHECK (no_evidence IN (0, 1)),
    rationale     TEXT    NOT NULL DEFAULT '[]',
    specificity   TEXT    CHECK (specificity IN ('matches', 'evidence_more_specific', 'evidence_more_general', 'closely_related')),
    revised_claim TEXT,
    note          TEXT,
    seconds_spent REAL    CHECK (seconds_spent >= 0),
    created_at    INTEGER NOT NULL
);
CREATE INDEX gold_answers_by_assignment ON gold_answers (assignment_id);
CREATE TRIGGER gold_answers_no_update BEFORE UPDATE ON gold_answers
BEGIN SELECT RAISE(ABORT, 'gold answers are append-only'); END;
CREATE TRIGGER gold_answers_no_delete BEFORE DELETE ON gold_answers
BEGIN SELECT RAISE(ABORT, 'gold answers are append-only'); END;

-- An undo of a gold answer within the window: the answer stays, marked withdrawn by this row.
CREATE TABLE gold_answer_retractions (
    answer_id    INTEGER PRIMARY KEY REFERENCES gold_answers (id),
    retracted_by INTEGER NOT NULL REFERENCES users (id),
    retracted_at INTEGER NOT NULL
);

-- Qualification outcomes: the graded part's automatic verdict (by_hand 0) and a lead's admission
-- by hand (by_hand 1; decided_by NULL when the operator admitted at the shell). Append-only; a
-- candidate's latest row is their standing.
CREATE TABLE qualification_decisions (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id),
    outcome    TEXT    NOT NULL CHECK (outcome IN ('admitted', 'failed')),
    correct    INTEGER,
    graded     INTEGER,
    by_hand    INTEGER NOT NULL CHECK (by_hand IN (0, 1)),
    decided_by INTEGER REFERENCES users (id),
    decided_at INTEGER NOT NULL
);
CREATE INDEX qualification_decisions_by_user ON qualification_decisions (project_id, user_id, id);
CREATE TRIGGER qualification_decisions_no_update BEFORE UPDATE ON qualification_decisions
BEGIN SELECT RAISE(ABORT, 'qualification decisions are append-only'); END;
CREATE TRIGGER qualification_decisions_no_delete BEFORE DELETE ON qualification_decisions
BEGIN SELECT RAISE(ABORT, 'qualification decisions are append-only'); END;

-- The gold answers that stand (not undone), with their item's reference: what every gold
-- figure reads.
CREATE VIEW gold_results AS
SELECT g.id AS answer_id, a.id AS assignment_id, a.annotator_id, a.gold_purpose AS purpose,
       i.id AS gold_item_id, i.project_id, i.claim_id, i.doc_id, i.source,
       i.label AS reference_label, i.rationale AS reference_rationale,
       g.label, g.no_evidence, g.rationale, g.seconds_spent, g.created_at
FROM gold_answers g
JOIN assignments a ON a.id = g.assignment_id
JOIN gold_items i ON i.id = a.gold_item_id
WHERE NOT EXISTS (SELECT 1 FROM gold_answer_retractions r WHERE r.answer_id = g.id);

