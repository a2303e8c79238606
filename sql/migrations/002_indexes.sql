-- Indexes for the queue listing (jobs by state) and for `cohort events`
-- filtered by job, node or time.
CREATE INDEX jobs_state ON jobs (state);
CREATE INDEX events_job_id ON events (job_id);
CREATE INDEX events_node ON events (node);
CREATE INDEX events_time_ms ON events (time_ms);
