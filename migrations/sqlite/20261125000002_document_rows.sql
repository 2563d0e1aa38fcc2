-- Corpus imports write in short chunks too (issue 13): a 500,000-abstract corpus no longer holds
-- the write lock for seconds. The rows live in `document_rows`; every reader reads the view
-- `documents`, which hides the rows of an import still being written (state 'writing'), so a
-- corpus appears whole when its last transaction marks the import 'done'. Renaming the table
-- repoints the foreign keys that name it.
ALTER TABLE documents RENAME TO document_rows;

CREATE VIEW documents AS
SELECT id, project_id, doc_id, title, sentences, extra, import_id
FROM document_rows
WHERE import_id IS NULL
   OR import_id NOT IN (SELECT id FROM imports WHERE state = 'writing');

-- A failed or abandoned import's documents are removed by import.
CREATE INDEX document_rows_import ON document_rows (import_id);
