-- claimpool core schema: the whole pooling workflow, from corpus to release.
-- Conventions: surrogate INTEGER keys; external ids (a corpus' doc_id, a claim's id) are TEXT and
-- unique per project; JSON columns hold lists (sentences, rationale sets); timestamps are UTC
-- milliseconds since the epoch (INTEGER), so ordering and windows are plain arithmetic.

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    username      TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    role          TEXT    NOT NULL CHECK (role IN ('admin', 'lead', 'annotator')),
    password_hash TEXT    NOT NULL CHECK (password_hash LIKE '$argon2id$%'),
    active        INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at    INTEGER NOT NULL
);

-- Every login attempt, for throttling and for the audit of access.
CREATE TABLE login_attempts (
    id       INTEGER PRIMARY KEY,
    username TEXT    NOT NULL COLLATE NOCASE,
    at       INTEGER NOT NULL,
    success  INTEGER NOT NULL CHECK (success IN (0, 1))
);
CREATE INDEX login_attempts_by_user ON login_attempts (username, at);

CREATE TABLE projects (
    id               INTEGER PRIMARY KEY,
    name             TEXT    NOT NULL UNIQUE,
    description      TEXT    NOT NULL DEFAULT '',
    -- second pass: 'confirm' (the second annotator sees the first label) or 'blind'
    second_pass_mode TEXT    NOT NULL DEFAULT 'confirm' CHECK (second_pass_mode IN ('confirm', 'blind')),
    -- the pool as last built; NULL until the first build
    pool_strategy    TEXT    CHECK (pool_strategy IN ('confidence', 'per-claim')),
    pool_depth       INTEGER CHECK (pool_depth > 0),
    assignment_seed  INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL
);

-- Who works on a project. Annotators are assigned pairs only while active.
CREATE TABLE project_members (
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id),
    active     INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    added_at   INTEGER NOT NULL,
    PRIMARY KEY (project_id, user_id)
);

-- One row per imported file: refuses the same file twice and tells where data came from.
CREATE TABLE imports (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL CHECK (kind IN ('corpus', 'claims', 'run', 'judgments')),
    file_name   TEXT    NOT NULL,
    sha256      TEXT    NOT NULL,
    format      TEXT    NOT NULL,
    rows        INTEGER NOT NULL,
    imported_by INTEGER REFERENCES users (id),
    imported_at INTEGER NOT NULL,
    UNIQUE (project_id, kind, sha256)
);

CREATE TABLE documents (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    doc_id     TEXT    NOT NULL,
    title      TEXT    NOT NULL,
    sentences  TEXT    NOT NULL, -- JSON array of strings, the abstract's sentences in order
    extra      TEXT,             -- JSON object of the corpus line's other fields
    import_id  INTEGER REFERENCES imports (id),
    UNIQUE (project_id, doc_id)
);

CREATE TABLE claims (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    claim_id      TEXT    NOT NULL,
    text          TEXT    NOT NULL,
    cited_doc_ids TEXT,             -- JSON array of external doc ids, when the file gives them
    import_id     INTEGER REFERENCES imports (id),
    UNIQUE (project_id, claim_id)
);

CREATE TABLE systems (
    id                      INTEGER PRIMARY KEY,
    project_id              INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name                    TEXT    NOT NULL,
    description             TEXT    NOT NULL DEFAULT '',
    role                    TEXT    NOT NULL CHECK (role IN ('pooled', 'evaluation-only')),
    negative_sampling_ratio REAL    CHECK (negative_sampling_ratio >= 0),
    -- 'scores': confidences from probabilities or scores; 'order': labels and an order only
    scoring                 TEXT    NOT NULL CHECK (scoring IN ('scores', 'order')),
    import_id               INTEGER REFERENCES imports (id),
    created_at              INTEGER NOT NULL,
    UNIQUE (project_id, name)
);

-- One system's output for one claim/abstract pair (CAP).
CREATE TABLE predictions (
    system_id      INTEGER NOT NULL REFERENCES systems (id) ON DELETE CASCADE,
    claim_id       INTEGER NOT NULL REFERENCES claims (id),
    doc_id         INTEGER NOT NULL REFERENCES documents (id),
    label          TEXT    CHECK (label IN ('SUPPORT', 'CONTRADICT', 'NEI')), -- NULL: the run has no labels
    p_support      REAL    CHECK (p_support BETWEEN 0 AND 1),
    p_contradict   REAL    CHECK (p_contradict BETWEEN 0 AND 1),
    p_nei          REAL    CHECK (p_nei BETWEEN 0 AND 1),
    confidence     REAL    NOT NULL, -- max(p_support, p_contradict), or the run's score
    retrieval_rank INTEGER CHECK (retrieval_rank > 0),
    sentences      TEXT,             -- JSON array of predicted rationale sentence indices
    PRIMARY KEY (system_id, claim_id, doc_id)
) WITHOUT ROWID;

-- Each build or growth step of the pool, with its parameters.
CREATE TABLE pool_builds (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    strategy   TEXT    NOT NULL CHECK (strategy IN ('confidence', 'per-claim')),
    depth      INTEGER NOT NULL CHECK (depth > 0),
    systems    TEXT    NOT NULL, -- JSON array of the pooled system names
    added      INTEGER NOT NULL, -- pairs this step added
    built_by   INTEGER REFERENCES users (id),
    built_at   INTEGER NOT NULL
);

-- The annotation pool: pairs that experts label.
CREATE TABLE pool_entries (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    claim_id    INTEGER NOT NULL REFERENCES claims (id),
    doc_id      INTEGER NOT NULL REFERENCES documents (id),
    entry_depth INTEGER NOT NULL CHECK (entry_depth > 0), -- smallest rank among pooled systems
    build_id    INTEGER NOT NULL REFERENCES pool_builds (id), -- the step that added it
    UNIQUE (project_id, claim_id, doc_id)
);
CREATE INDEX pool_entries_by_depth ON pool_entries (project_id, entry_depth);

-- model_ranks: for every system that scored a pooled pair, its rank in that system's order.
CREATE TABLE pool_ranks (
    pool_entry_id INTEGER NOT NULL REFERENCES pool_entries (id) ON DELETE CASCADE,
    system_id     INTEGER NOT NULL REFERENCES systems (id) ON DELETE CASCADE,
    rank          INTEGER NOT NULL CHECK (rank > 0),
    PRIMARY KEY (pool_entry_id, system_id)
) WITHOUT ROWID;

CREATE TABLE assignments (
    id            INTEGER PRIMARY KEY,
    pool_entry_id INTEGER NOT NULL REFERENCES pool_entries (id),
    annotator_id  INTEGER NOT NULL REFERENCES users (id),
    stage         TEXT    NOT NULL CHECK (stage IN ('first', 'second', 'adjudication')),
    status        TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done', 'withdrawn')),
    queue_pos     INTEGER NOT NULL, -- order in the annotator's queue; skip moves it to the end
    flagged       INTEGER NOT NULL DEFAULT 0 CHECK (flagged IN (0, 1)),
    flag_note     TEXT,
    created_at    INTEGER NOT NULL,
    closed_at     INTEGER
);
-- At most one open assignment per pair and stage.
CREATE UNIQUE INDEX assignments_one_open ON assignments (pool_entry_id, stage) WHERE status = 'open';
CREATE INDEX assignments_queue ON assignments (annotator_id, status, queue_pos);

-- Judgments are append-only: an edit or an undo is a new row (or a retraction), never an update.
CREATE TABLE judgments (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    claim_id      INTEGER NOT NULL REFERENCES claims (id),
    doc_id        INTEGER NOT NULL REFERENCES documents (id),
    assignment_id INTEGER REFERENCES assignments (id),
    annotator_id  INTEGER REFERENCES users (id), -- NULL for evidence that came with the claims
    stage         TEXT    NOT NULL CHECK (stage IN ('first', 'second', 'adjudication', 'final')),
    label         TEXT    NOT NULL CHECK (label IN ('SUPPORT', 'CONTRADICT', 'NEI')),
    no_evidence   INTEGER NOT NULL DEFAULT 0 CHECK (no_evidence IN (0, 1)), -- first pass: clearly no evidence
    rationale     TEXT    NOT NULL DEFAULT '[]', -- JSON array of evidence sets (arrays of sentence indices)
    specificity   TEXT    CHECK (specificity IN ('matches', 'evidence_more_specific', 'evidence_more_general', 'closely_related')),
    revised_claim TEXT,
    note          TEXT,
    seconds_spent REAL    CHECK (seconds_spent >= 0),
    provenance    TEXT    NOT NULL CHECK (provenance IN ('citation', 'pooling', 'import')),
    import_id     INTEGER REFERENCES imports (id),
    created_at    INTEGER NOT NULL
);
CREATE INDEX judgments_by_pair ON judgments (project_id, claim_id, doc_id);
CREATE TRIGGER judgments_append_only_update BEFORE UPDATE ON judgments
BEGIN SELECT RAISE(ABORT, 'judgments are append-only'); END;
CREATE TRIGGER judgments_append_only_delete BEFORE DELETE ON judgments
BEGIN SELECT RAISE(ABORT, 'judgments are append-only'); END;

-- An undo of a judgment within its window: the judgment stays, marked withdrawn by this row.
CREATE TABLE judgment_retractions (
    judgment_id  INTEGER PRIMARY KEY REFERENCES judgments (id),
    retracted_by INTEGER NOT NULL REFERENCES users (id),
    retracted_at INTEGER NOT NULL
);

-- The label a pair ends with. One per pair, ever: the primary key makes a second one impossible.
CREATE TABLE final_labels (
    project_id  INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    claim_id    INTEGER NOT NULL REFERENCES claims (id),
    doc_id      INTEGER NOT NULL REFERENCES documents (id),
    judgment_id INTEGER NOT NULL REFERENCES judgments (id),
    label       TEXT    NOT NULL CHECK (label IN ('SUPPORT', 'CONTRADICT', 'NEI')),
    provenance  TEXT    NOT NULL CHECK (provenance IN ('citation', 'pooling', 'import')),
    decided_at  INTEGER NOT NULL,
    PRIMARY KEY (claim_id, doc_id)
);
CREATE INDEX final_labels_by_project ON final_labels (project_id);

-- Discussion of a pair, mostly during adjudication.
CREATE TABLE comments (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    claim_id   INTEGER NOT NULL REFERENCES claims (id),
    doc_id     INTEGER NOT NULL REFERENCES documents (id),
    author_id  INTEGER NOT NULL REFERENCES users (id),
    body       TEXT    NOT NULL CHECK (length(body) > 0),
    created_at INTEGER NOT NULL
);
CREATE INDEX comments_by_pair ON comments (claim_id, doc_id, created_at);

-- Append-only log of every change a person or an import made: who, when, old value, new value.
CREATE TABLE audit_events (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER REFERENCES projects (id) ON DELETE CASCADE,
    actor_id   INTEGER REFERENCES users (id),
    action     TEXT    NOT NULL,
    entity     TEXT    NOT NULL,
    entity_id  TEXT,
    old_value  TEXT,
    new_value  TEXT,
    at         INTEGER NOT NULL
);
CREATE INDEX audit_events_by_project ON audit_events (project_id, at);
CREATE TRIGGER audit_append_only_update BEFORE UPDATE ON audit_events
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TRIGGER audit_append_only_delete BEFORE DELETE ON audit_events
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;

-- Numbered, immutable releases of a project's test collection.
CREATE TABLE releases (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    number     INTEGER NOT NULL CHECK (number > 0),
    partial    INTEGER NOT NULL CHECK (partial IN (0, 1)),
    manifest   TEXT    NOT NULL, -- MANIFEST.json as written
    archive    BLOB    NOT NULL, -- the release as .tar.gz
    sha256     TEXT    NOT NULL, -- of the archive
    created_by INTEGER REFERENCES users (id),
    created_at INTEGER NOT NULL,
    UNIQUE (project_id, number)
);

-- Long work (pipeline runs, big imports) runs outside requests; pages poll its progress.
CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER REFERENCES projects (id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL,
    params      TEXT    NOT NULL, -- JSON
    status      TEXT    NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),
    done_units  INTEGER NOT NULL DEFAULT 0,
    total_units INTEGER,
    message     TEXT,
    result      TEXT,             -- JSON
    created_by  INTEGER REFERENCES users (id),
    created_at  INTEGER NOT NULL,
    started_at  INTEGER,
    finished_at INTEGER
);
