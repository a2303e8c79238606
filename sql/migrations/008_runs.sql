-- History and usage: one row per run of a job, written in the
-- transaction that ends the run (daemon/controller/domain/jobs_account.c), so
-- that `cohort usage` can sum GPU time over any window by user, queue,
-- outcome or day. A run is the time a job held its GPUs RUNNING (or
-- RESIZING), from start_ms to end_ms; gpus is what it held, nodes how
-- many nodes; outcome is what ended it (COMPLETED, FAILED, CANCELLED,
-- TIMEOUT, RESTARTING, PREEMPTED, REQUEUED, RESIZED); wasted_ms is the
-- tail of the run whose work was lost (since its last checkpoint, or
-- all of it for a run that ended FAILED). user and queue are copied from
-- the job so that a usage query reads this table alone. Rows go with
-- their job when job_retention purges it: usage older than that is gone,
-- as with sacct's purge.
CREATE TABLE job_runs (
	job_id		INTEGER NOT NULL REFERENCES jobs (id),
	attempt		INTEGER NOT NULL CHECK (attempt >= 0),
	user		TEXT NOT NULL,
	queue		TEXT NOT NULL,
	start_ms	INTEGER NOT NULL,
	end_ms		INTEGER NOT NULL CHECK (end_ms >= start_ms),
	gpus		INTEGER NOT NULL CHECK (gpus >= 0),
	nodes		INTEGER NOT NULL CHECK (nodes >= 0),
	outcome		TEXT NOT NULL,
	wasted_ms	INTEGER NOT NULL
	    CHECK (wasted_ms >= 0 AND wasted_ms <= end_ms - start_ms)
) STRICT;
-- A usage window selects runs that end after its start (the index holds
-- every column a usage query reads, so it never visits the table);
-- retention deletes a job's runs with it.
CREATE INDEX job_runs_end_ms ON job_runs (end_ms, start_ms, user, queue,
    outcome, gpus, wasted_ms);
CREATE INDEX job_runs_job_id ON job_runs (job_id);
