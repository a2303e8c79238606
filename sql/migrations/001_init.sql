-- The initial schema. Every table is STRICT so that a type slip in
-- daemon/controller/store/store.c fails loudly instead of storing text in an
-- integer column. Applied in one transaction by store.c, which also sets
-- PRAGMA user_version.

-- One row per job ever submitted. The controller chooses the id; ids are
-- never reused (see counters). Vectors (env, argv) are the strings joined,
-- each followed by a NUL byte, so any string survives the round trip.
CREATE TABLE jobs (
	id		INTEGER PRIMARY KEY,
	user		TEXT NOT NULL,
	name		TEXT NOT NULL,
	nodes_min	INTEGER NOT NULL CHECK (nodes_min >= 1),
	nodes_max	INTEGER NOT NULL CHECK (nodes_max >= nodes_min),
	gpus_per_node	INTEGER NOT NULL CHECK (gpus_per_node >= 0),
	tasks_per_node	INTEGER NOT NULL CHECK (tasks_per_node >= 0),
	gpu_type	TEXT,
	time_limit_s	INTEGER NOT NULL CHECK (time_limit_s >= 0),
	priority	INTEGER NOT NULL,
	topo_mode	INTEGER NOT NULL CHECK (topo_mode IN (0, 1, 2)),
	topo_level	TEXT,
	checkpoint_dir	TEXT,
	max_restarts	INTEGER NOT NULL CHECK (max_restarts >= 0),
	ckpt_signal	INTEGER NOT NULL,
	ckpt_secs	INTEGER NOT NULL CHECK (ckpt_secs >= 0),
	hang_timeout_s	INTEGER NOT NULL CHECK (hang_timeout_s >= 0),
	env		BLOB NOT NULL
	    CHECK (length(env) = 0 OR substr(env, -1) = x'00'),
	workdir		TEXT,
	argv		BLOB NOT NULL
	    CHECK (length(argv) = 0 OR substr(argv, -1) = x'00'),
	script		BLOB,
	script_name	TEXT,
	state		TEXT NOT NULL CHECK (state IN ('PENDING', 'RUNNING',
	    'RESTARTING', 'RESIZING', 'COMPLETED', 'FAILED', 'CANCELLED',
	    'TIMEOUT')),
	reason		TEXT NOT NULL DEFAULT '',
	submit_ms	INTEGER NOT NULL,
	start_ms	INTEGER NOT NULL DEFAULT 0,
	end_ms		INTEGER NOT NULL DEFAULT 0,
	restarts	INTEGER NOT NULL DEFAULT 0 CHECK (restarts >= 0),
	exit_code	INTEGER
) STRICT;

-- The audit log: every state change appends a row in the transaction
-- that makes the change. AUTOINCREMENT keeps ids increasing even after
-- old rows are pruned, so `cohort events --follow` can resume by id.
CREATE TABLE events (
	id		INTEGER PRIMARY KEY AUTOINCREMENT,
	time_ms		INTEGER NOT NULL,
	job_id		INTEGER REFERENCES jobs (id),
	node		TEXT,
	kind		TEXT NOT NULL,
	actor		TEXT NOT NULL,
	detail		TEXT NOT NULL DEFAULT ''
) STRICT;

-- Named counters that must survive the rows they count: max_job_id is
-- the highest job id ever inserted, so ids are not reused after a job
-- row is removed.
CREATE TABLE counters (
	name		TEXT PRIMARY KEY,
	value		INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO counters (name, value) VALUES ('max_job_id', 0);
