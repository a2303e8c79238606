-- What the submit that made a job's idempotency key asked for: SHA-256
-- of its request without the key and the environment (lib/wire.h's
-- wire_spec_fingerprint), so that the key sent again with another
-- request is refused. NULL: no key, or a job made before this column.
ALTER TABLE jobs ADD COLUMN idem_fp BLOB;
