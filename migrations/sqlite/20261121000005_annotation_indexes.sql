-- An annotator's latest judgments (undo, the "last submission" line) and a pair's open items.
CREATE INDEX judgments_by_annotator ON judgments (annotator_id, id);
CREATE INDEX assignments_by_entry ON assignments (pool_entry_id, status);
