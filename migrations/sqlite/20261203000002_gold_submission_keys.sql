-- The key of a qualification answer (a gold item's), as submission_keys holds a pair's: a gold
-- answer sent again after its reply was lost is stored once, and the repeat answers as the first.
CREATE TABLE gold_submission_keys (
    annotator_id   INTEGER NOT NULL REFERENCES users (id),
    submission_key TEXT    NOT NULL,
    gold_answer_id INTEGER NOT NULL REFERENCES gold_answers (id),
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (annotator_id, submission_key)
);
CREATE INDEX gold_submission_keys_answer ON gold_submission_keys (gold_answer_id);
