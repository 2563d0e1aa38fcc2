-- Run imports write in short chunks: while one is written its import row says 'writing' (with
-- the token of the lock file its writer holds) and its systems are not ready, so nothing of it
-- is visible; the last chunk's transaction makes both 'done' and ready. Rows of an import whose
-- writer died (its lock file is free) are removed by the next import or at `serve` start.
ALTER TABLE imports ADD COLUMN state TEXT NOT NULL DEFAULT 'done' CHECK (state IN ('writing', 'done'));
ALTER TABLE imports ADD COLUMN lock_token TEXT;
ALTER TABLE systems ADD COLUMN ready INTEGER NOT NULL DEFAULT 1 CHECK (ready IN (0, 1));
