-- Schema version 3: the selective incremental rule. A hub whose subtree is skipped marks its
-- descendants for that run; skips counts the consecutive runs a page was skipped, so that no page is
-- starved for ever.
ALTER TABLE urls ADD COLUMN skipped_run INTEGER;
ALTER TABLE urls ADD COLUMN skips INTEGER NOT NULL DEFAULT 0;
