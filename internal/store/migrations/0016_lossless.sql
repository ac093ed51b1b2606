-- Nothing lost (issue 18): runs whose archive directory is final, a journal that makes prune
-- crash-safe, and pages that the site says are gone, counted and rechecked.

-- When the run's archive directory was sealed: orphans removed (temporary files, versions no fetch
-- records) and manifest.jsonl written from the run's fetches. NULL: not yet; every session that
-- takes the run lock seals the runs that are not running and not sealed, so a run killed at any
-- point, or one whose manifest could not be written on a full disk, is sealed by the next. The runs
-- from before this version are sealed once by the first session after the upgrade.
ALTER TABLE runs ADD COLUMN sealed_at TEXT;

-- 404 and 410 answers in the run, and the pages the run marked gone.
ALTER TABLE runs ADD COLUMN not_found INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN gone INTEGER NOT NULL DEFAULT 0;

-- The prune journal: versions marked pruned (fetches.pruned_at) whose files may still be on disk.
-- prune marks a batch and enters it here in one transaction, removes the files, then deletes the
-- entries; a session that finds entries left by a killed prune removes their files first. So no
-- fetch row ever says a version is stored while its files are gone.
CREATE TABLE prune_pending (
    archive_path TEXT PRIMARY KEY
) WITHOUT ROWID;

-- The active pages whose last answer was 404: every countdown makes them due, so that three 404s in
-- a row (the rule that marks a page gone) take three runs, whatever the page's revisit interval.
CREATE INDEX urls_not_found ON urls (id) WHERE state = 'active' AND last_status = 404;
