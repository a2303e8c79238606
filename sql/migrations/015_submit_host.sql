-- The host the job was submitted from (Slurm's SLURM_SUBMIT_HOST).
-- NULL: not known (a client or a job from before this column).
ALTER TABLE jobs ADD COLUMN submit_host TEXT;
