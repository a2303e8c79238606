-- Suspect nodes (daemon/controller/domain/suspect.h): a node's suspicion (an
-- admin's exemption, the last resume that cleared it, the reason it was
-- drained for and when) and the failures attributed to it across jobs
-- and users. An early failure stays unconfirmed until its job runs fine
-- elsewhere. Kept across controller restarts; not tied to the nodes
-- table, so a node deleted and added again keeps its history.
CREATE TABLE node_suspects (
    node TEXT PRIMARY KEY,
    exempt INTEGER NOT NULL DEFAULT 0 CHECK (exempt IN (0, 1)),
    cleared_ms INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL DEFAULT '',
    drained_ms INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;

CREATE TABLE node_evidence (
    node TEXT NOT NULL,
    seq INTEGER NOT NULL,
    time_ms INTEGER NOT NULL,
    kind TEXT NOT NULL,
    job_id INTEGER NOT NULL DEFAULT 0,
    user TEXT NOT NULL DEFAULT '',
    confirmed INTEGER NOT NULL CHECK (confirmed IN (0, 1)),
    detail TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (node, seq)
) STRICT, WITHOUT ROWID;
