-- The project's live judging order (issue 15): which first pass the queue serves next when an
-- annotator asks for one. 'depth' without a budget is the pool's pre-assigned shallowest-first
-- queue of before; any other order, or a budget, serves first passes one at a time as asked.
-- judging_seed drives mab-thompson; judging_budget (NULL: none) caps the first passes served.
ALTER TABLE projects ADD COLUMN judging_order TEXT NOT NULL DEFAULT 'depth'
    CHECK (judging_order IN ('depth', 'mtf', 'mab-maxmean', 'mab-thompson', 'hedge'));
ALTER TABLE projects ADD COLUMN judging_seed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE projects ADD COLUMN judging_budget INTEGER CHECK (judging_budget >= 0);
