-- The daily workflow: arrays, dependencies, output files,
-- node lists, CPU-only and exclusive jobs, holds, and the GPU time each
-- job used (and wasted) for `cohort usage`.
ALTER TABLE jobs ADD COLUMN array_spec TEXT;
ALTER TABLE jobs ADD COLUMN dependency TEXT;
ALTER TABLE jobs ADD COLUMN output TEXT;
ALTER TABLE jobs ADD COLUMN error TEXT;
ALTER TABLE jobs ADD COLUMN nodelist TEXT;
ALTER TABLE jobs ADD COLUMN exclude TEXT;
ALTER TABLE jobs ADD COLUMN cpu_only INTEGER NOT NULL DEFAULT 0
    CHECK (cpu_only IN (0, 1));
ALTER TABLE jobs ADD COLUMN exclusive INTEGER NOT NULL DEFAULT 0
    CHECK (exclusive IN (0, 1));
ALTER TABLE jobs ADD COLUMN array_id INTEGER NOT NULL DEFAULT 0
    CHECK (array_id >= 0);
ALTER TABLE jobs ADD COLUMN array_task INTEGER NOT NULL DEFAULT 0
    CHECK (array_task >= 0);
ALTER TABLE jobs ADD COLUMN array_max INTEGER NOT NULL DEFAULT 0
    CHECK (array_max >= 0);
ALTER TABLE jobs ADD COLUMN hold INTEGER NOT NULL DEFAULT 0
    CHECK (hold IN (0, 1, 2));
ALTER TABLE jobs ADD COLUMN gpu_ms INTEGER NOT NULL DEFAULT 0
    CHECK (gpu_ms >= 0);
ALTER TABLE jobs ADD COLUMN wasted_gpu_ms INTEGER NOT NULL DEFAULT 0
    CHECK (wasted_gpu_ms >= 0);
CREATE INDEX jobs_array_id ON jobs (array_id) WHERE array_id != 0;
