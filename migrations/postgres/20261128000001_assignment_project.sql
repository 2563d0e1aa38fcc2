-- Mirrors migrations/sqlite/20261128000001_assignment_project.sql: each assignment of a pooled
-- pair names the pair's project (gold assignments keep NULL), so open loads are counted from one
-- index; triggers keep the column equal to the pool entry's project, raising SQLite's message.
ALTER TABLE assignments ADD COLUMN project_id BIGINT;
UPDATE assignments a SET project_id = e.project_id
FROM pool_entry_rows e WHERE e.id = a.pool_entry_id;
CREATE INDEX assignments_open_by_project ON assignments (project_id, annotator_id)
WHERE status = 'open' AND pool_entry_id IS NOT NULL;

-- Inserts are checked once per statement, over all its rows (a pool build writes a thousand per
-- statement; a row-level PL/pgSQL check made such builds a fifth slower).
CREATE FUNCTION assignments_project_of_entry_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM inserted n LEFT JOIN pool_entry_rows e ON e.id = n.pool_entry_id
               WHERE n.project_id IS DISTINCT FROM e.project_id) THEN
        RAISE EXCEPTION 'an assignment names the project of its pool entry';
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER assignments_project_of_entry_insert AFTER INSERT ON assignments
REFERENCING NEW TABLE AS inserted
FOR EACH STATEMENT EXECUTE FUNCTION assignments_project_of_entry_insert();

CREATE FUNCTION assignments_project_of_entry_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.project_id IS DISTINCT FROM
       (SELECT e.project_id FROM pool_entry_rows e WHERE e.id = NEW.pool_entry_id) THEN
        RAISE EXCEPTION 'an assignment names the project of its pool entry';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER assignments_project_of_entry_update BEFORE UPDATE OF project_id, pool_entry_id
ON assignments FOR EACH ROW EXECUTE FUNCTION assignments_project_of_entry_update();
