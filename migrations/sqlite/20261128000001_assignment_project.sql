-- Each assignment of a pooled pair names the pair's project (gold assignments keep NULL), so an
-- annotator's open load in a project is counted from one index instead of joining every open
-- assignment to its pool entry: the join took about 10 ms over 10,000 open assignments, inside
-- the write transaction of each submission that gives out a second pass (the annotate
-- benchmark). Triggers keep the column equal to the pool entry's project.
ALTER TABLE assignments ADD COLUMN project_id INTEGER;
UPDATE assignments
SET project_id = (SELECT e.project_id FROM pool_entry_rows e WHERE e.id = assignments.pool_entry_id)
WHERE pool_entry_id IS NOT NULL;
CREATE INDEX assignments_open_by_project ON assignments (project_id, annotator_id)
WHERE status = 'open' AND pool_entry_id IS NOT NULL;

CREATE TRIGGER assignments_project_of_entry_insert BEFORE INSERT ON assignments
WHEN NEW.project_id IS NOT (SELECT e.project_id FROM pool_entry_rows e WHERE e.id = NEW.pool_entry_id)
BEGIN
    SELECT RAISE(ABORT, 'an assignment names the project of its pool entry');
END;
CREATE TRIGGER assignments_project_of_entry_update BEFORE UPDATE OF project_id, pool_entry_id ON assignments
WHEN NEW.project_id IS NOT (SELECT e.project_id FROM pool_entry_rows e WHERE e.id = NEW.pool_entry_id)
BEGIN
    SELECT RAISE(ABORT, 'an assignment names the project of its pool entry');
END;
