-- Suggestions (issue 16): a lead may show annotators one model assessor's label for the pair
-- they are labelling, at the first and second pass ("A model suggests: SUPPORT"), never the
-- assessor's or the system's name, never a score. Off by default: annotators shown a model's
-- label tend to agree with it (anchoring), which inflates agreement with the model and among
-- annotators.
--
-- `suggest_from`: the model assessor whose labels are suggested (NULL: suggestions off). It must
-- be an assessor of the same project; the trigger refuses any other.
ALTER TABLE projects ADD COLUMN suggest_from INTEGER REFERENCES model_assessor_rows (id);

CREATE TRIGGER projects_suggest_from_same_project BEFORE UPDATE OF suggest_from ON projects
WHEN NEW.suggest_from IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM model_assessor_rows a WHERE a.id = NEW.suggest_from AND a.project_id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'suggestions come from a model assessor of the same project'); END;

