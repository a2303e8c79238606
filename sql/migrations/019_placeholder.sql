-- A placeholder for a migration of another branch, dropped when that
-- branch is merged (migrations are numbered without gaps).
SELECT 1;
