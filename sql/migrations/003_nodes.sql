-- Nodes with their inventory, the placement of each job, and the exits of
-- its tasks, so that a restarted controller knows where every job runs
-- and which of its tasks have already ended. Written by
-- daemon/controller/store/store_nodes.c.

-- One row per node ever registered. since_ms is when it entered state;
-- source, ncpus and memory_mb come from the agent's inventory.
CREATE TABLE nodes (
	name		TEXT PRIMARY KEY,
	address		TEXT NOT NULL DEFAULT '',
	state		TEXT NOT NULL CHECK (state IN ('UP', 'DOWN')),
	reason		TEXT NOT NULL DEFAULT '',
	since_ms	INTEGER NOT NULL,
	source		TEXT NOT NULL DEFAULT '',
	ncpus		INTEGER NOT NULL DEFAULT 0 CHECK (ncpus >= 0),
	memory_mb	INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;

-- The GPUs of a node, replaced as a whole when the agent reports its
-- inventory. idx is the node-local (CUDA) index; nvlink_peers is the
-- 64-bit mask of NVLinked indices stored as its int64 bit pattern, and
-- memory_mb likewise.
CREATE TABLE node_gpus (
	node		TEXT NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
	idx		INTEGER NOT NULL CHECK (idx >= 0),
	uuid		TEXT NOT NULL,
	model		TEXT NOT NULL,
	memory_mb	INTEGER NOT NULL,
	numa_node	INTEGER NOT NULL,
	pci_bus_id	TEXT NOT NULL,
	pcie_switch	INTEGER NOT NULL,
	nvlink_domain	INTEGER NOT NULL,
	nvlink_peers	INTEGER NOT NULL,
	nic		INTEGER NOT NULL,
	PRIMARY KEY (node, idx)
) STRICT, WITHOUT ROWID;

-- A job's current (or last) allocation, one row per node. gpus lists the
-- node-local indices, comma-separated in decimal ("" for none). node is
-- not a foreign key: a placement outlives the node it names.
CREATE TABLE job_placements (
	job_id		INTEGER NOT NULL REFERENCES jobs (id),
	node_rank	INTEGER NOT NULL CHECK (node_rank >= 0),
	node		TEXT NOT NULL,
	gpus		TEXT NOT NULL,
	PRIMARY KEY (job_id, node_rank)
) STRICT, WITHOUT ROWID;

-- How each task of each run (restart) of a job ended: the raw wait(2)
-- status. The first record of a (job, restart, rank) wins.
CREATE TABLE task_exits (
	job_id		INTEGER NOT NULL REFERENCES jobs (id),
	restart		INTEGER NOT NULL CHECK (restart >= 0),
	rank		INTEGER NOT NULL CHECK (rank >= 0),
	wait_status	INTEGER NOT NULL,
	time_ms		INTEGER NOT NULL,
	PRIMARY KEY (job_id, restart, rank)
) STRICT, WITHOUT ROWID;
