-- Idempotency keys are looked up in memory (the controller builds the
-- map from jobs.idem_key at load: daemon/controller/jobs_keys.c). The
-- unique index of 011 took each random key at a random page of its
-- B-tree, a page of WAL written and synced per submit; it goes.
DROP INDEX IF EXISTS jobs_user_idem_key;
