-- Personal API tokens (issue 14): a user's scripts call the HTTP API with `Authorization:
-- Bearer cp_...`, acting with the user's account role and project roles. Only the token's
-- SHA-256 is stored (the token is 32 random bytes: no slow hash is needed). A revoked token
-- keeps its row (revoked_at set) for the audit trail; names are unique among a user's live
-- tokens.

CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id),
    name         TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    token_sha256 TEXT    NOT NULL UNIQUE CHECK (length(token_sha256) = 64),
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (user_id, name) WHERE revoked_at IS NULL;
