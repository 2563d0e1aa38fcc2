-- Command assessors (issue 16): besides a system's predictions, an external command given by the
-- server administrator (an LLM, say, speaking the external scorer's stdin/stdout protocol) can
-- be registered as an assessor of the pool (`claimpool assessor add --command`, at the shell
-- only). An assessor records where its labels came from: a system (system_id), or a command (the
-- command line as given, and when it ran); exactly one of the two. A command's labels may carry
-- the rationale sentences it gave.
--
-- SQLite cannot drop a NOT NULL, so both tables are rebuilt: the old ones are renamed out of the
-- way (which repoints model_label_rows' foreign key to the renamed assessors), copied into new
-- tables of the same names, and dropped, child first. The views are dropped first and made
-- again; the append-only triggers go with the old tables and are made again on the new ones.

DROP VIEW model_labels;
DROP VIEW model_assessors;

ALTER TABLE model_label_rows RENAME TO model_label_rows_old;
ALTER TABLE model_assessor_rows RENAME TO model_assessor_rows_old;

-- One model assessor: its name (unique in the project), where its labels came from, and who
-- registered it when. `ran_at`: when the command was started (a command assessor only).
CREATE TABLE model_assessor_rows (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    system_id  INTEGER REFERENCES systems (id),
    command    TEXT    CHECK (length(command) > 0),
    ran_at     INTEGER,
    created_by INTEGER REFERENCES users (id),
    created_at INTEGER NOT NULL,
    CHECK ((system_id IS NOT NULL AND command IS NULL AND ran_at IS NULL)
        OR (system_id IS NULL AND command IS NOT NULL AND ran_at IS NOT NULL)),
    UNIQUE (project_id, name)
);
INSERT INTO model_assessor_rows (id, project_id, name, system_id, created_by, created_at)
SELECT id, project_id, name, system_id, created_by, created_at FROM model_assessor_rows_old;

-- One label per pair pooled when the assessor was registered (see 20261125500001). `sentences`:
-- the rationale a command gave, a JSON array of 0-based sentence indices (NULL when it gave
-- none, and for a system's labels).
CREATE TABLE model_label_rows (
    assessor_id INTEGER NOT NULL REFERENCES model_assessor_rows (id),
    claim_id    INTEGER NOT NULL REFERENCES claim_rows (id),
    doc_id      INTEGER NOT NULL REFERENCES document_rows (id),
    label       TEXT    NOT NULL CHECK (label IN ('SUPPORT', 'CONTRADICT', 'NEI')),
    predicted   INTEGER NOT NULL CHECK (predicted IN (0, 1)),
    sentences   TEXT,
    PRIMARY KEY (assessor_id, claim_id, doc_id)
) WITHOUT ROWID;
INSERT INTO model_label_rows (assessor_id, claim_id, doc_id, label, predicted)
SELECT assessor_id, claim_id, doc_id, label, predicted FROM model_label_rows_old;

DROP TABLE model_label_rows_old;
DROP TABLE model_assessor_rows_old;

CREATE INDEX model_label_rows_pair ON model_label_rows (claim_id, doc_id);

CREATE TRIGGER model_assessor_rows_no_update BEFORE UPDATE ON model_assessor_rows
BEGIN SELECT RAISE(ABORT, 'model assessors are append-only'); END;
CREATE TRIGGER model_assessor_rows_no_delete BEFORE DELETE ON model_assessor_rows
BEGIN SELECT RAISE(ABORT, 'model assessors are append-only'); END;
CREATE TRIGGER model_label_rows_no_update BEFORE UPDATE ON model_label_rows
BEGIN SELECT RAISE(ABORT, 'model labels are append-only'); END;
CREATE TRIGGER model_label_rows_no_delete BEFORE DELETE ON model_label_rows
BEGIN SELECT RAISE(ABORT, 'model labels are append-only'); END;

-- What readers read: the assessors with their system's name (NULL for a command), and their
-- labels.
CREATE VIEW model_assessors AS
SELECT a.id, a.project_id, a.name, a.system_id, s.name AS system, a.command, a.ran_at,
       a.created_by, a.created_at
FROM model_assessor_rows a LEFT JOIN systems s ON s.id = a.system_id;

CREATE VIEW model_labels AS
SELECT l.assessor_id, a.project_id, l.claim_id, l.doc_id, l.label, l.predicted, l.sentences
FROM model_label_rows l JOIN model_assessor_rows a ON a.id = l.assessor_id;
