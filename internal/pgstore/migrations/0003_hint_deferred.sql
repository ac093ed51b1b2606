-- PostgreSQL schema version 3: the SQLite schema's version 24, urls.hint_deferred (see
-- internal/store/migrations/0024_hint_deferred.sql): a page a trusted origin's hints put off says
-- so, and the optimal policy's plan leaves it where the hints put it.
ALTER TABLE urls ADD COLUMN hint_deferred bigint NOT NULL DEFAULT 0 CHECK (hint_deferred IN (0, 1));
UPDATE urls SET hint_deferred = 1
	WHERE hint_lastmod IS NOT NULL AND state = 'active'
	AND due_tick > (SELECT tick FROM countdown) + 2 * greatest(fr_max, 1);
