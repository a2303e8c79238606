-- Reserved for a migration on another branch; this placeholder goes
-- when that branch is merged.
SELECT 1;
