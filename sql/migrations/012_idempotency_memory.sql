-- Idempotency keys are looked up in memory (the controller builds the
-- map from jobs.idem_key at load: daemon/controller/domain/jobs_keys.c). With
-- the unique index of 011, keyed submits were measurably slower (most
-- likely: random keys dirty index pages all over its B-tree); it goes.
DROP INDEX IF EXISTS jobs_user_idem_key;
