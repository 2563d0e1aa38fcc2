-- Claims and judgment imports write in short chunks too (issue 13), hidden until done, as corpus
-- imports are (20261125000002): the rows live in claim_rows, judgment_rows and final_label_rows;
-- every reader reads the views claims, judgments and final_labels, which hide what an import
-- still 'writing' wrote. Renaming the tables repoints the foreign keys, and the triggers follow.
ALTER TABLE claims RENAME TO claim_rows;
ALTER TABLE judgments RENAME TO judgment_rows;
ALTER TABLE final_labels RENAME TO final_label_rows;

CREATE INDEX claim_rows_import ON claim_rows (import_id);
CREATE INDEX judgment_rows_import ON judgment_rows (import_id);

-- Judgments stay append-only, except the rows of an import that never finished (never visible),
-- which the import itself, or the next one after a crash, removes.
DROP TRIGGER judgments_append_only_delete;
CREATE TRIGGER judgments_append_only_delete BEFORE DELETE ON judgment_rows
WHEN OLD.import_id IS NULL
  OR OLD.import_id NOT IN (SELECT id FROM imports WHERE state = 'writing')
BEGIN SELECT RAISE(ABORT, 'judgments are append-only'); END;

CREATE VIEW claims AS
SELECT * FROM claim_rows
WHERE import_id IS NULL
   OR import_id NOT IN (SELECT id FROM imports WHERE state = 'writing');

CREATE VIEW judgments AS
SELECT * FROM judgment_rows
WHERE import_id IS NULL
   OR import_id NOT IN (SELECT id FROM imports WHERE state = 'writing');

CREATE VIEW final_labels AS
SELECT * FROM final_label_rows
WHERE judgment_id NOT IN (
    SELECT id FROM judgment_rows
    WHERE import_id IN (SELECT id FROM imports WHERE state = 'writing'));
