-- Batch jobs (sbatch, cohort batch): the script runs once, on the first
-- node of the allocation. 0: once per task (every job before this column).
ALTER TABLE jobs ADD COLUMN batch INTEGER NOT NULL DEFAULT 0;
-- Who its checkpoint signal reaches: 0 every task, 1 the batch script
-- (sbatch --signal B:), 2 its steps' tasks (sbatch --signal).
ALTER TABLE jobs ADD COLUMN signal_scope INTEGER NOT NULL DEFAULT 0;
-- --begin: not started before this time (ms since the epoch); 0: none.
ALTER TABLE jobs ADD COLUMN begin_ms INTEGER NOT NULL DEFAULT 0;
