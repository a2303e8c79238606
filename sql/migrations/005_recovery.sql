-- Fault recovery: the last checkpoint a job reported through the
-- checkpoint contract, when it last failed and ran again, and the work
-- lost to failures (time since the last checkpoint, summed).
ALTER TABLE jobs ADD COLUMN ckpt_step INTEGER;
ALTER TABLE jobs ADD COLUMN ckpt_path TEXT;
ALTER TABLE jobs ADD COLUMN ckpt_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN last_failure_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN last_restart_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN lost_work_ms INTEGER NOT NULL DEFAULT 0
    CHECK (lost_work_ms >= 0);

-- A drained node: no new work. A row per drained node; who, why and when
-- are kept, and whether the drain came from the node's health (which
-- then needs the node to report healthy before a resume clears it).
CREATE TABLE node_drains (
    node TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    actor TEXT NOT NULL,
    time_ms INTEGER NOT NULL,
    from_health INTEGER NOT NULL CHECK (from_health IN (0, 1))
) STRICT, WITHOUT ROWID;
