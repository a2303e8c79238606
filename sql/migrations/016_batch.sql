-- Batch jobs (sbatch, cohort batch): the script runs once, on the first
-- node of the allocation. 0: once per task (every job before this column).
ALTER TABLE jobs ADD COLUMN batch INTEGER NOT NULL DEFAULT 0;
