-- Models as a separate assessor (issue 16): a system's predictions on the pooled pairs,
-- registered as an assessor of the pool (`claimpool assessor add`). Their labels live here,
-- apart from people's: never in judgment_rows or final_label_rows, never final, never in a
-- release's qrels.txt or claims.jsonl (a release may carry them as qrels-model.txt).
--
-- An assessor and its labels are written in one transaction and never change afterwards
-- (triggers refuse updates and deletes, as for judgments). A pool grown later is not labelled
-- by an existing assessor; register another one (a new name) for the grown pool.

-- One model assessor: its name (unique in the project), the system whose predictions it
-- turned into labels, and who registered it when.
CREATE TABLE model_assessor_rows (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    system_id  INTEGER NOT NULL REFERENCES systems (id),
    created_by INTEGER REFERENCES users (id),
    created_at INTEGER NOT NULL,
    UNIQUE (project_id, name)
);

-- One label per pair pooled when the assessor was registered: the system's predicted label, or
-- the larger of p_support, p_contradict and p_nei (1 - p_support - p_contradict when absent) for
-- runs with probabilities only. `predicted` 0: the run does not hold the pair, so the model says
-- NEI, as evaluation counts an unretrieved pair.
CREATE TABLE model_label_rows (
    assessor_id INTEGER NOT NULL REFERENCES model_assessor_rows (id),
    claim_id    INTEGER NOT NULL REFERENCES claim_rows (id),
    doc_id      INTEGER NOT NULL REFERENCES document_rows (id),
    label       TEXT    NOT NULL CHECK (label IN ('SUPPORT', 'CONTRADICT', 'NEI')),
    predicted   INTEGER NOT NULL CHECK (predicted IN (0, 1)),
    PRIMARY KEY (assessor_id, claim_id, doc_id)
) WITHOUT ROWID;
CREATE INDEX model_label_rows_pair ON model_label_rows (claim_id, doc_id);

CREATE TRIGGER model_assessor_rows_no_update BEFORE UPDATE ON model_assessor_rows
BEGIN SELECT RAISE(ABORT, 'model assessors are append-only'); END;
CREATE TRIGGER model_assessor_rows_no_delete BEFORE DELETE ON model_assessor_rows
BEGIN SELECT RAISE(ABORT, 'model assessors are append-only'); END;
CREATE TRIGGER model_label_rows_no_update BEFORE UPDATE ON model_label_rows
BEGIN SELECT RAISE(ABORT, 'model labels are append-only'); END;
CREATE TRIGGER model_label_rows_no_delete BEFORE DELETE ON model_label_rows
BEGIN SELECT RAISE(ABORT, 'model labels are append-only'); END;

-- What readers read: the assessors with their system's name, and their labels.
CREATE VIEW model_assessors AS
SELECT a.id, a.project_id, a.name, a.system_id, s.name AS system, a.created_by, a.created_at
FROM model_assessor_rows a JOIN systems s ON s.id = a.system_id;

CREATE VIEW model_labels AS
SELECT l.assessor_id, a.project_id, l.claim_id, l.doc_id, l.label, l.predicted
FROM model_label_rows l JOIN model_assessor_rows a ON a.id = l.assessor_id;
