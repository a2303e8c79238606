-- An interactive allocation (salloc): never restarted, and ended when
-- salloc's keepalives stop. 0: a batch or per-task job.
ALTER TABLE jobs ADD COLUMN interactive INTEGER NOT NULL DEFAULT 0;
