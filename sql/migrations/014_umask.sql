-- The submitter's umask, which the job's tasks start with (0-0777).
-- NULL: not given (a client or a job from before this column); the
-- agent then uses its safe default.
ALTER TABLE jobs ADD COLUMN umask INTEGER CHECK (umask BETWEEN 0 AND 511);
