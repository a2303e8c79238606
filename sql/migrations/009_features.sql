-- Constraints: the features an agent reports for its node
-- (comma-separated, '' for none), and a job's --constraint expression
-- and --gpu-memory minimum (MiB; 0: none).
ALTER TABLE nodes ADD COLUMN features TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN constraint_expr TEXT;
ALTER TABLE jobs ADD COLUMN gpu_memory_mb INTEGER NOT NULL DEFAULT 0
    CHECK (gpu_memory_mb >= 0);
