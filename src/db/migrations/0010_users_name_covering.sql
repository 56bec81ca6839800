-- The users list's name index also holds name and deactivated_at, so a deep page can skip its
-- offset with an index-only scan instead of reading every skipped row (page 500 of 100k users:
-- the skipped 49,900 rows were most of its cost). Same key columns, so the name search and the
-- other lists use it as before.
CREATE INDEX users_app_name_covering ON users (app_id, (lower(name) COLLATE "C"), uid) INCLUDE (name, deactivated_at);
DROP INDEX users_app_name;
ALTER INDEX users_app_name_covering RENAME TO users_app_name;
