-- A job's launch attempt: grows with every start, also after a start that
-- failed half-way, and keys the controller's commands to agents so an
-- old attempt's tasks can never be taken for the new one's.
ALTER TABLE jobs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0
    CHECK (attempt >= 0);
