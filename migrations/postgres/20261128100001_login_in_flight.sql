-- Mirrors migrations/sqlite/20261128100001_login_in_flight.sql: a login attempt is stored in
-- flight while its password is checked (pending = 1), then as the success or failure it was.
ALTER TABLE login_attempts ADD COLUMN pending BIGINT NOT NULL DEFAULT 0 CHECK (pending IN (0, 1));
