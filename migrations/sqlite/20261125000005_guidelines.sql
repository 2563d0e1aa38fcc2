-- Annotation guidelines (issue 14): a project's guidelines are Markdown written by its leads,
-- versioned 1, 2, … per project. Versions are append-only: a change is a new row. Annotators
-- confirm the current version before their first item and again after each change; a
-- confirmation names the version read. Foreign keys name tables (projects, users), never views.

CREATE TABLE guideline_versions (
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL CHECK (version >= 1),
    markdown   TEXT    NOT NULL,
    author_id  INTEGER REFERENCES users (id),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, version)
);
CREATE TRIGGER guideline_versions_append_only BEFORE UPDATE ON guideline_versions
BEGIN SELECT RAISE(ABORT, 'guideline versions are append-only: save a new version'); END;

CREATE TABLE guideline_confirmations (
    project_id   INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id      INTEGER NOT NULL REFERENCES users (id),
    version      INTEGER NOT NULL,
    confirmed_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, user_id, version),
    FOREIGN KEY (project_id, version) REFERENCES guideline_versions (project_id, version)
        ON DELETE CASCADE
);
