-- Queues: the queue a job was admitted to (NULL for jobs
-- submitted before queues existed), and whether it is a --service.
ALTER TABLE jobs ADD COLUMN queue TEXT;
ALTER TABLE jobs ADD COLUMN service INTEGER NOT NULL DEFAULT 0
    CHECK (service IN (0, 1));
