-- Project roles (issue 14): a membership carries the member's role in that project. A lead acts
-- only on projects they lead; the global role `lead` now means "may create projects".
ALTER TABLE project_members ADD COLUMN role TEXT NOT NULL DEFAULT 'annotator'
    CHECK (role IN ('lead', 'annotator'));

-- Today's leads lead every existing project.
INSERT INTO project_members (project_id, user_id, active, added_at, role)
SELECT p.id, u.id, 1, CAST(strftime('%s', 'now') AS INTEGER) * 1000, 'lead'
FROM projects p CROSS JOIN users u
WHERE u.role = 'lead'
ON CONFLICT (project_id, user_id) DO UPDATE SET role = 'lead', active = 1;

CREATE INDEX project_members_by_user ON project_members (user_id, project_id);

-- Accounts (issue 14): a password set by an admin or its owner ends the user's other sessions.
-- A session remembers the version it logged in with; a newer version ends it.
ALTER TABLE users ADD COLUMN credentials_version INTEGER NOT NULL DEFAULT 0;
