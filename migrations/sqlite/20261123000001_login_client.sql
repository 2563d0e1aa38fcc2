-- Login throttling per client address (issue 13): an attempt records the address it came from,
-- so that failures lock a user name only for the address that made them.
ALTER TABLE login_attempts ADD COLUMN client TEXT NOT NULL DEFAULT '';
CREATE INDEX login_attempts_by_client ON login_attempts (client, at);
CREATE INDEX login_attempts_by_user_client ON login_attempts (username, client, at);
