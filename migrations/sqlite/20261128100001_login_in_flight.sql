-- Issue 35: a login attempt is stored in flight while its password is checked (pending = 1),
-- then as the success or failure it was; an attempt whose check never happened (the server was
-- busy, the client went away) is deleted. The throttle counts failures and attempts in flight.
ALTER TABLE login_attempts ADD COLUMN pending INTEGER NOT NULL DEFAULT 0 CHECK (pending IN (0, 1));
