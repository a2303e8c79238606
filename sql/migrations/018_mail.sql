-- Mail about a job (sbatch --mail-type, --mail-user): the JOB_MAIL_*
-- bits of lib/job.h (0: none), and who gets it (NULL: the job's user).
ALTER TABLE jobs ADD COLUMN mail_type INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN mail_user TEXT;
