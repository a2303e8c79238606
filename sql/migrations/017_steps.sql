-- Job steps (srun inside a batch job's allocation): one row per step of
-- an attempt, written when it starts and again when it ends, for sacct's
-- J.S rows and squeue -s. state is the job state number (lib/job.h).
CREATE TABLE steps (
	job_id INTEGER NOT NULL REFERENCES jobs(id),
	attempt INTEGER NOT NULL,
	step_id INTEGER NOT NULL,
	name TEXT NOT NULL,
	state INTEGER NOT NULL,
	node_fail INTEGER NOT NULL DEFAULT 0,
	exit_code INTEGER,
	reason TEXT NOT NULL DEFAULT '',
	start_ms INTEGER NOT NULL,
	end_ms INTEGER NOT NULL DEFAULT 0,
	nodelist TEXT NOT NULL,
	tasks_per_node TEXT NOT NULL,
	ntasks INTEGER NOT NULL,
	gpus INTEGER NOT NULL,
	PRIMARY KEY (job_id, attempt, step_id)
);

-- Secrets the controller keeps with its state (so every replica and a
-- restored backup have them): step_key signs the step credentials that
-- prove an srun runs inside its job (HMAC-SHA256 of job and attempt).
CREATE TABLE secrets (
	name TEXT PRIMARY KEY,
	value BLOB NOT NULL
);
INSERT INTO secrets (name, value) VALUES ('step_key', randomblob(32));
