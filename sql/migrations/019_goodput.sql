-- Goodput (ETTR): each job's wall time since its first start, split by
-- what it went to, accounted up to gp_mark_ms (daemon/controller/domain/goodput.h).
-- gp_lost_ms and gp_ckpt_ms are parts of gp_run_ms; gp_ckpt_cost_ms is
-- the last checkpoint measured (0: none). 0 everywhere: never ran, or
-- ran before this column (its split starts at its next change).
ALTER TABLE jobs ADD COLUMN gp_first_start_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN gp_mark_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN gp_run_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN gp_lost_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN gp_restart_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN gp_wait_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN gp_ckpt_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN gp_ckpt_cost_ms INTEGER NOT NULL DEFAULT 0;
