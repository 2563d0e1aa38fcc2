-- Jobs can be cancelled: a queued job at once, a running one by its worker at the next check
-- (cancel_requested_at says a lead asked). SQLite cannot change a CHECK: the table is rebuilt.
CREATE TABLE jobs_new (
    id                  INTEGER PRIMARY KEY,
    project_id          INTEGER REFERENCES projects (id) ON DELETE CASCADE,
    kind                TEXT    NOT NULL,
    params              TEXT    NOT NULL, -- JSON
    status              TEXT    NOT NULL DEFAULT 'queued'
                        CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    done_units          INTEGER NOT NULL DEFAULT 0,
    total_units         INTEGER,
    message             TEXT,
    result              TEXT,             -- JSON
    created_by          INTEGER REFERENCES users (id),
    created_at          INTEGER NOT NULL,
    started_at          INTEGER,
    finished_at         INTEGER,
    cancel_requested_at INTEGER,
    cancel_requested_by INTEGER REFERENCES users (id)
);
INSERT INTO jobs_new (id, project_id, kind, params, status, done_units, total_units, message, result,
                      created_by, created_at, started_at, finished_at)
    SELECT id, project_id, kind, params, status, done_units, total_units, message, result,
           created_by, created_at, started_at, finished_at FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;
CREATE INDEX jobs_by_status ON jobs (status, id);
