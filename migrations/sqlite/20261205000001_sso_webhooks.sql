-- Single sign-on through an OpenID provider: a sign-in in progress (its state, PKCE verifier and
-- nonce, kept until the provider sends the browser back, on whichever server it reaches), and the
-- provider's identities bound to local accounts (issuer and subject: a user name claim that later
-- changes at the provider never moves a sign-in to another account).
CREATE TABLE sso_logins (
    state         TEXT    PRIMARY KEY,
    pkce_verifier TEXT    NOT NULL,
    nonce         TEXT    NOT NULL,
    next          TEXT    NOT NULL,
    created_at    INTEGER NOT NULL
);
CREATE TABLE sso_identities (
    issuer     TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    user_id    INTEGER NOT NULL REFERENCES users (id),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE UNIQUE INDEX sso_identities_user ON sso_identities (issuer, user_id);

-- Webhooks: URLs a project's lead registers for events, each with its own signing secret; and
-- their deliveries, written in the transaction of the event (an outbox), sent by the servers'
-- delivery task under a lease, retried with backoff.
CREATE TABLE webhooks (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    url        TEXT    NOT NULL,
    secret     TEXT    NOT NULL,
    -- The events, comma-separated with a comma at each end: ",label.final,release.made,".
    events     TEXT    NOT NULL,
    created_by INTEGER REFERENCES users (id),
    created_at INTEGER NOT NULL,
    removed_at INTEGER
);
CREATE INDEX webhooks_project ON webhooks (project_id);
CREATE TABLE webhook_deliveries (
    id               INTEGER PRIMARY KEY,
    webhook_id       INTEGER NOT NULL REFERENCES webhooks (id),
    event            TEXT    NOT NULL,
    body             TEXT    NOT NULL,
    -- pending, delivered or failed (every attempt made).
    state            TEXT    NOT NULL,
    attempts         INTEGER NOT NULL,
    next_attempt_at  INTEGER NOT NULL,
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    last_status      INTEGER,
    last_error       TEXT,
    created_at       INTEGER NOT NULL,
    ended_at         INTEGER
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (webhook_id, id);
