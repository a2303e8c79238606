-- --on-straggler: 0 report a rank slower than its peers, 1 also move its
-- node's ranks at the next checkpoint (0 for every job before this).
ALTER TABLE jobs ADD COLUMN on_straggler INTEGER NOT NULL DEFAULT 0;
