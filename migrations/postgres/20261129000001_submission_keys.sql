-- The key a browser gives each submission (app/src/ui/annotate/unsent.rs): a submission sent
-- again after its reply was lost (a flaky network) is stored once. One row per key an annotator
-- used, with the judgment it stored.
CREATE TABLE submission_keys (
    annotator_id   BIGINT NOT NULL REFERENCES users (id),
    submission_key TEXT   NOT NULL,
    judgment_id    BIGINT NOT NULL REFERENCES judgment_rows (id) ON DELETE CASCADE,
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (annotator_id, submission_key)
);
CREATE INDEX submission_keys_judgment ON submission_keys (judgment_id);
