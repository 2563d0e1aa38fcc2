-- Re-annotation (issue 16, AVeriTeC's phases): when set, a disagreement between the first and
-- second pass goes to a fresh annotator (one who gave neither label) before adjudication; the
-- re-annotation agreeing with either label makes it final (a majority), a third label sends the
-- pair to adjudication. Off by default: disagreements go straight to adjudication. The
-- re-annotation is stored as a judgment of stage 'second' by a third annotator: the protocol
-- reads it from the pair's history, whatever the setting is later.
ALTER TABLE projects ADD COLUMN reannotate INTEGER NOT NULL DEFAULT 0 CHECK (reannotate IN (0, 1));
