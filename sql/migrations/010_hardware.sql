-- Today's hardware: a job's --segment (nodes per NVLink block
-- segment; 0: none), --cpus-per-task (0: not bound) and --mem-per-node
-- (MiB; 0: no limit), and each GPU's nearest NIC by name ('' unknown;
-- node_gpus.nic is its index on the node, which is also its rail).
ALTER TABLE jobs ADD COLUMN segment INTEGER NOT NULL DEFAULT 0
    CHECK (segment >= 0);
ALTER TABLE jobs ADD COLUMN cpus_per_task INTEGER NOT NULL DEFAULT 0
    CHECK (cpus_per_task >= 0);
ALTER TABLE jobs ADD COLUMN mem_per_node_mb INTEGER NOT NULL DEFAULT 0
    CHECK (mem_per_node_mb >= 0);
ALTER TABLE node_gpus ADD COLUMN nic_name TEXT NOT NULL DEFAULT '';
