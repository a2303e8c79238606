-- Idempotent submits: the key a client sent with a submit
-- (NULL: none), one job per user and key. A client that lost the reply
-- (a failover, a dropped connection) sends the submit again and gets the
-- job its first one made. An array keeps the key on its first task only.
ALTER TABLE jobs ADD COLUMN idem_key TEXT;
CREATE UNIQUE INDEX jobs_user_idem_key ON jobs (user, idem_key)
    WHERE idem_key IS NOT NULL;
