-- Schema version 2: retention. A version removed by archive.keep keeps its fetch row, so the page's
-- history stays complete; pruned_at says when its files were removed.
ALTER TABLE fetches ADD COLUMN pruned_at TEXT;
CREATE INDEX fetches_archived ON fetches (fetched_at) WHERE archive_path IS NOT NULL AND pruned_at IS NULL;
